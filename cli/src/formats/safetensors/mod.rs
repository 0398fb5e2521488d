//! safetensors, read by the `safetensors` crate: its header size limit, JSON, dtypes and contiguous offsets
//! that cover the data exactly are its checks; a repeated JSON key is refused here. Written with the crate's
//! header types and layout check, but by this module, so that the output is reproducible.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use safetensors::tensor::{Dtype as StDtype, TensorInfo};
use safetensors::SafeTensors;
use serde::ser::{Serialize, SerializeMap, Serializer};
use tpack::format::DEFAULT_ALIGNMENT;
use tpack::{AtomicFile, Container, Dtype, MetaValue, OwnedMetaValue};

use super::tpack::{content_entries, dropped_signature, is_signed_attribute, OutEntry, Payload};
use super::{Export, ExportOptions, Exported, Format, Import, Model};
use crate::describe::dtype_name;
use crate::error::{CliError, Result};
use crate::metadata_json::render::Style;

mod plan;
mod sharded;

pub(crate) use sharded::INDEX_SUFFIX;

/// The bytes of the little-endian u64 header length that starts a safetensors file.
const LENGTH_PREFIX: usize = 8;

/// The safetensors format.
#[derive(Debug)]
pub(crate) struct Safetensors;

/// Whether `head` looks like a safetensors file: a u64 header length, then the header's opening `{`.
pub(crate) fn sniff(head: &[u8]) -> bool {
    head.get(LENGTH_PREFIX) == Some(&b'{')
}

/// The tpack dtype of a safetensors dtype, if tpack has it: each has the same name but for the underscores
/// (`F8_E4M3` is `F8E4M3`) and `F4` (`F4E2M1`), and the same bytes (spec §4: the sub-byte dtypes are packed as
/// safetensors packs them).
fn from_safetensors(d: StDtype) -> Option<Dtype> {
    Some(match d {
        StDtype::F4 => Dtype::F4E2M1,
        StDtype::F6_E2M3 => Dtype::F6E2M3,
        StDtype::F6_E3M2 => Dtype::F6E3M2,
        StDtype::F8_E8M0 => Dtype::F8E8M0,
        StDtype::F8_E4M3FNUZ => Dtype::F8E4M3FNUZ,
        StDtype::F8_E5M2FNUZ => Dtype::F8E5M2FNUZ,
        StDtype::C64 => Dtype::C64,
        StDtype::BOOL => Dtype::BOOL,
        StDtype::U8 => Dtype::U8,
        StDtype::I8 => Dtype::I8,
        StDtype::F8_E5M2 => Dtype::F8E5M2,
        StDtype::F8_E4M3 => Dtype::F8E4M3,
        StDtype::I16 => Dtype::I16,
        StDtype::U16 => Dtype::U16,
        StDtype::F16 => Dtype::F16,
        StDtype::BF16 => Dtype::BF16,
        StDtype::I32 => Dtype::I32,
        StDtype::U32 => Dtype::U32,
        StDtype::F32 => Dtype::F32,
        StDtype::F64 => Dtype::F64,
        StDtype::I64 => Dtype::I64,
        StDtype::U64 => Dtype::U64,
        _ => return None,
    })
}

/// The safetensors dtype of a tpack dtype, if safetensors has it: the inverse of [`from_safetensors`].
fn to_safetensors(d: Dtype) -> Option<StDtype> {
    Some(match d {
        Dtype::F4E2M1 => StDtype::F4,
        Dtype::F6E2M3 => StDtype::F6_E2M3,
        Dtype::F6E3M2 => StDtype::F6_E3M2,
        Dtype::F8E8M0 => StDtype::F8_E8M0,
        Dtype::F8E4M3FNUZ => StDtype::F8_E4M3FNUZ,
        Dtype::F8E5M2FNUZ => StDtype::F8_E5M2FNUZ,
        Dtype::C64 => StDtype::C64,
        Dtype::BOOL => StDtype::BOOL,
        Dtype::U8 => StDtype::U8,
        Dtype::I8 => StDtype::I8,
        Dtype::F8E5M2 => StDtype::F8_E5M2,
        Dtype::F8E4M3 => StDtype::F8_E4M3,
        Dtype::I16 => StDtype::I16,
        Dtype::U16 => StDtype::U16,
        Dtype::F16 => StDtype::F16,
        Dtype::BF16 => StDtype::BF16,
        Dtype::I32 => StDtype::I32,
        Dtype::U32 => StDtype::U32,
        Dtype::F32 => StDtype::F32,
        Dtype::F64 => StDtype::F64,
        Dtype::I64 => StDtype::I64,
        Dtype::U64 => StDtype::U64,
        _ => return None,
    })
}

impl Import for Safetensors {
    fn format(&self) -> Format {
        Format::Safetensors
    }

    /// Tensors in file order, as the producer laid them out, each at tpack's default alignment;
    /// `__metadata__` as string records sorted by key.
    fn read<'a>(&self, input: &Path, bytes: &'a [u8]) -> Result<Model<'a>> {
        // One parse of the header: `read_metadata` validates everything `deserialize` does (offsets contiguous
        // and covering the data exactly, sizes matching dtypes and shapes) and keeps the file order.
        let invalid = |e: safetensors::SafeTensorError| {
            match truncation(bytes) {
            Some(what) => CliError::input(format!(
                "{} is a truncated safetensors file: {what}; the download or copy that made it was probably cut \
                 short, so make it again",
                input.display()
            )),
            None => CliError::input(format!("{} is not a valid safetensors file: {e}", input.display())),
        }
        };
        let (header_len, header) = SafeTensors::read_metadata(bytes).map_err(invalid)?;
        let data_start = LENGTH_PREFIX + header_len;
        // The crate accepted the header, so these bytes exist and are UTF-8; a repeated key is still ambiguous.
        let text = bytes
            .get(LENGTH_PREFIX..data_start)
            .and_then(|h| std::str::from_utf8(h).ok())
            .unwrap_or_default();
        crate::json_strict::check_no_duplicate_keys(text).map_err(|why| {
            CliError::input(format!(
                "{} is not a valid safetensors file: its header is ambiguous: {why}",
                input.display()
            ))
        })?;
        let data = bytes.get(data_start..).unwrap_or_default();
        let names = header.offset_keys();
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            let info = header.info(&name);
            let payload = info.and_then(|i| data.get(i.data_offsets.0..i.data_offsets.1));
            let (Some(info), Some(payload)) = (info, payload) else {
                return Err(CliError::input(format!(
                    "{}: tensor {name:?} lies outside the file",
                    input.display()
                )));
            };
            let dtype = from_safetensors(info.dtype).ok_or_else(|| {
                CliError::input(format!(
                    "{}: tensor {name:?} has dtype {}, which tpack has no dtype for",
                    input.display(),
                    info.dtype,
                ))
            })?;
            let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
            check_packing(input, &name, info.dtype, dtype, &shape)?;
            entries.push(OutEntry {
                shape,
                name: Cow::Owned(name),
                dtype,
                alignment: DEFAULT_ALIGNMENT,
                target: None,
                length: payload.len() as u64,
                payload: Payload::Bytes(payload),
            });
        }
        let mut metadata: Vec<(String, OwnedMetaValue)> = header
            .metadata()
            .iter()
            .flat_map(HashMap::iter)
            .map(|(k, v)| (k.clone(), OwnedMetaValue::from(v.as_str())))
            .collect();
        metadata.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Model { compat_flags: 0, entries, metadata, notes: Vec::new() })
    }
}

/// Refuses a tensor of a sub-byte dtype (`F4`, `F6_*`) whose rows do not start on a byte: safetensors packs
/// the elements of the whole tensor in one run, tpack each row (R26: the innermost dimension is a whole number
/// of blocks, 2 elements a byte for `F4E2M1`, 4 in 3 bytes for the `F6` dtypes). Where every row is whole
/// blocks the two layouts are the same bytes.
fn check_packing(input: &Path, name: &str, from: StDtype, dtype: Dtype, shape: &[u64]) -> Result<()> {
    let Some(::tpack::format::Packing::Block { block_elems, block_bytes }) = dtype.packing() else {
        return Ok(());
    };
    let innermost = shape.last().copied();
    if innermost.is_some_and(|d| d % block_elems == 0) {
        return Ok(());
    }
    Err(CliError::input(format!(
        "{}: tensor {name:?} is {from} of shape {shape:?}; tpack's {} packs {block_elems} elements in {block_bytes} \
         byte(s) within each row, so its innermost dimension must be a multiple of {block_elems} (rule R26), \
         while safetensors packs the whole tensor as one run, so its rows do not start on a byte; reshape it so \
         that they do",
        input.display(),
        dtype_name(dtype)
    )))
}

/// How `bytes` ends before the end its header gives, if it does: the header itself is cut short, or a valid
/// header describes more tensor data than follows it. `None` for every other problem.
fn truncation(bytes: &[u8]) -> Option<String> {
    let prefix: [u8; LENGTH_PREFIX] = bytes.get(..LENGTH_PREFIX)?.try_into().ok()?;
    let header_len = usize::try_from(u64::from_le_bytes(prefix)).ok().filter(|&n| n <= MAX_HEADER_LEN)?;
    let have = bytes.len() - LENGTH_PREFIX;
    let Some(header) = bytes.get(LENGTH_PREFIX..LENGTH_PREFIX + header_len) else {
        return Some(format!(
            "its header is {header_len} bytes long, but only {have} bytes follow its length"
        ));
    };
    let data_len = serde_json::from_slice::<safetensors::tensor::Metadata>(header).ok()?.data_len();
    let data = have - header_len;
    (data < data_len).then(|| {
        format!("its tensors need {data_len} bytes of data, but only {data} bytes follow its header")
    })
}

/// A tpack metadata value as a safetensors `__metadata__` string: strings as they are, everything else as the
/// JSON of spec §13.
fn metadata_string(value: &MetaValue<'_>) -> String {
    match value {
        MetaValue::String(s) => (*s).to_owned(),
        other => crate::metadata_json::render::value(*other, Style::EXACT).value.to_string(),
    }
}

/// The header key safetensors reserves for its string metadata; no tensor may have it as its name.
const METADATA_KEY: &str = "__metadata__";

/// The largest header the `safetensors` crate reads (its private `MAX_HEADER_SIZE`).
const MAX_HEADER_LEN: usize = 100_000_000;

/// The header is padded with spaces to a multiple of this, as the crate's writer pads it, so the tensor data
/// starts 8-aligned.
const HEADER_ALIGN: usize = 8;

/// A safetensors header as the crate's writer lays it out, `__metadata__` first and then the tensors in data
/// order, but with the metadata keys sorted: the crate writes them in the order of a `HashMap`, which differs
/// from process to process (safetensors issue #584), so its output could not be reproduced.
struct Header<'a> {
    /// The string metadata, sorted by key.
    metadata: &'a BTreeMap<String, String>,
    /// Each tensor's name and the crate's description of it, in data order.
    tensors: &'a [(String, TensorInfo)],
}

impl Serialize for Header<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.tensors.len() + 1))?;
        if !self.metadata.is_empty() {
            map.serialize_entry(METADATA_KEY, self.metadata)?;
        }
        for (name, info) in self.tensors {
            map.serialize_entry(name, info)?;
        }
        map.end()
    }
}

/// One tensor to write.
pub(crate) struct Tensor<'a> {
    /// Its name.
    pub(crate) name: &'a str,
    /// Its safetensors dtype.
    pub(crate) dtype: StDtype,
    /// Its shape, outermost first.
    pub(crate) shape: Vec<usize>,
    /// Its bytes.
    pub(crate) data: &'a [u8],
}

impl Safetensors {
    /// The tensors of `container` that safetensors can store, in the container's order. Refuses an entry that
    /// safetensors cannot hold, naming it.
    pub(crate) fn tensors<'a>(input: &Path, container: &Container<'a>) -> Result<Vec<Tensor<'a>>> {
        let mut tensors = Vec::with_capacity(container.len());
        for e in content_entries(container) {
            let refuse =
                |why: String| CliError::input(format!("{}: entry {:?} {why}", input.display(), e.name()));
            if e.name() == METADATA_KEY {
                return Err(refuse(
                    "has the name safetensors reserves for its metadata, so it cannot be a tensor there; rename \
                     it in a manifest (`tpack unpack`, edit, `tpack pack`) and convert that"
                        .to_owned(),
                ));
            }
            let dtype = to_safetensors(e.dtype()).ok_or_else(|| {
                refuse(format!("has dtype {}, which safetensors cannot store", dtype_name(e.dtype())))
            })?;
            let shape = e
                .shape()
                .dims()
                .iter()
                .map(|&d| usize::try_from(d))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|_| refuse("is too large for this machine".to_owned()))?;
            tensors.push(Tensor { name: e.name(), dtype, shape, data: e.payload() });
        }
        Ok(tensors)
    }

    /// The metadata of `container` as safetensors strings ([`metadata_string`]), sorted by key.
    pub(crate) fn metadata(container: &Container<'_>) -> BTreeMap<String, String> {
        container
            .metadata()
            .iter()
            .filter(|(k, _)| !is_signed_attribute(k))
            .map(|(k, v)| (k.to_owned(), metadata_string(&v)))
            .collect()
    }

    /// Writes `tensors` and `metadata` as one safetensors file at `output` (through a temporary file renamed
    /// over it), the tensors in the crate writer's order: by descending dtype (which keeps each tensor aligned
    /// to its element size), then by name. A file the crate wrote thus comes back byte for byte. `input` is
    /// what messages name.
    ///
    /// # Errors
    /// [`crate::Kind::Input`]: a layout or header safetensors refuses; [`crate::Kind::Io`]: writing failed.
    pub(crate) fn write_file(
        input: &Path,
        mut tensors: Vec<Tensor<'_>>,
        metadata: &BTreeMap<String, String>,
        output: &Path,
    ) -> Result<()> {
        tensors.sort_by(|a, b| b.dtype.cmp(&a.dtype).then_with(|| a.name.cmp(b.name)));
        let mut infos = Vec::with_capacity(tensors.len());
        let mut offset = 0usize;
        for t in &tensors {
            let end = offset.checked_add(t.data.len()).ok_or_else(|| {
                CliError::input(format!("{}: the tensors are too large for this machine", input.display()))
            })?;
            infos.push((
                t.name.to_owned(),
                TensorInfo { dtype: t.dtype, shape: t.shape.clone(), data_offsets: (offset, end) },
            ));
            offset = end;
        }
        // The crate's own check of the layout: contiguous offsets, sizes that match dtypes and shapes.
        safetensors::tensor::Metadata::new(None, infos.clone()).map_err(|e| {
            CliError::input(format!("{}: safetensors refuses the layout: {e}", input.display()))
        })?;
        let mut header = serde_json::to_vec(&Header { metadata, tensors: &infos }).map_err(|e| {
            CliError::input(format!("{}: cannot write the safetensors header: {e}", input.display()))
        })?;
        header.resize(header.len().next_multiple_of(HEADER_ALIGN), b' ');
        if header.len() > MAX_HEADER_LEN {
            return Err(CliError::input(format!(
                "{}: the safetensors header would be {} bytes, more than the {MAX_HEADER_LEN} safetensors readers \
                 accept (too many tensors or too much metadata)",
                input.display(),
                header.len()
            )));
        }

        let mut file = AtomicFile::create(output)
            .map_err(|e| CliError::io("cannot create a file next to", output, &e))?;
        {
            let mut sink = file.sink();
            let mut put = |bytes: &[u8]| {
                embedded_io::Write::write_all(&mut sink, bytes)
                    .map_err(|e| CliError::io("cannot write", output, &e))
            };
            put(&(header.len() as u64).to_le_bytes())?;
            put(&header)?;
            for t in &tensors {
                put(t.data)?;
            }
            embedded_io::Write::flush(&mut sink).map_err(|e| CliError::io("cannot write", output, &e))?;
        }
        file.commit().map_err(|e| CliError::io("cannot save", output, &e))
    }
}

impl Export for Safetensors {
    fn format(&self) -> Format {
        Format::Safetensors
    }

    /// `name` itself, or, with `--max-shard-size` and a model that needs more than one shard, the shards and
    /// their index as Hugging Face names them.
    fn file_names(
        &self,
        container: &Container<'_>,
        name: &str,
        options: &ExportOptions,
    ) -> Result<Vec<String>> {
        let Some(limit) = options.max_shard_size else { return Ok(vec![name.to_owned()]) };
        // Entries safetensors cannot hold are refused when writing; here only their sizes count.
        let tensors: Vec<Tensor<'_>> = content_entries(container)
            .map(|e| Tensor { name: e.name(), dtype: StDtype::U8, shape: Vec::new(), data: e.payload() })
            .collect();
        Ok(sharded::file_names(name, &sharded::plan(&tensors, limit)))
    }

    /// A loader given the directory prefers a file `model.safetensors` to the index beside it.
    fn shadows_shards(&self) -> bool {
        true
    }

    /// Every entry with its bytes unchanged; metadata as strings ([`metadata_string`]), sorted by key. Load
    /// addresses and alignments have no place in safetensors: dropped load addresses are noted. The header
    /// is built from the `safetensors` crate's own types and checked by it; the same container always gives
    /// the same bytes. With `--max-shard-size`, the shards and their index (module `sharded`), each shard
    /// with the whole metadata.
    fn write(
        &self,
        input: &Path,
        container: &Container<'_>,
        dir: &Path,
        name: &str,
        options: &ExportOptions,
    ) -> Result<Exported> {
        let tensors = Self::tensors(input, container)?;
        let entries = tensors.len();
        let metadata = Self::metadata(container);
        let mut notes = Vec::new();
        let plan = options.max_shard_size.map(|limit| (limit, sharded::plan(&tensors, limit)));
        let files = match plan {
            Some((limit, plan)) if plan.len() > 1 => {
                let names = sharded::file_names(name, &plan);
                notes = sharded::write(input, tensors, &metadata, &plan, &names, limit, dir)?;
                names
            }
            _ => {
                Self::write_file(input, tensors, &metadata, &dir.join(name))?;
                vec![name.to_owned()]
            }
        };
        if let Some(note) = dropped_targets(container) {
            notes.push(note);
        }
        if let Some(note) = dropped_signature(container, "safetensors") {
            notes.push(note);
        }
        Ok(Exported { entries, metadata: metadata.len(), notes, files })
    }
}

/// The note that `container`'s load addresses are not written, if it has any.
fn dropped_targets(container: &Container<'_>) -> Option<String> {
    let targets = container.entries().filter(|e| e.target().is_some()).count();
    (targets > 0).then(|| {
        format!(
            "safetensors has no load addresses or alignments; the load addresses of {targets} entries were dropped"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every safetensors dtype has a tpack dtype of the same bytes, and back; `F4` is `F4E2M1`.
    #[test]
    fn dtypes_map_one_to_one() {
        for st in [
            StDtype::BOOL,
            StDtype::F4,
            StDtype::F6_E2M3,
            StDtype::F6_E3M2,
            StDtype::U8,
            StDtype::I8,
            StDtype::F8_E5M2,
            StDtype::F8_E4M3,
            StDtype::F8_E8M0,
            StDtype::F8_E4M3FNUZ,
            StDtype::F8_E5M2FNUZ,
            StDtype::I16,
            StDtype::U16,
            StDtype::F16,
            StDtype::BF16,
            StDtype::I32,
            StDtype::U32,
            StDtype::F32,
            StDtype::C64,
            StDtype::F64,
            StDtype::I64,
            StDtype::U64,
        ] {
            let d = from_safetensors(st).unwrap_or_else(|| panic!("{st}"));
            assert_eq!(to_safetensors(d), Some(st), "{st}");
            let name = if st == StDtype::F4 { "F4E2M1".to_owned() } else { st.to_string().replace('_', "") };
            assert_eq!(d.name(), Some(name.as_str()), "{st}");
        }
    }

    /// Rows of a sub-byte dtype must start on a byte, as tpack packs them (R26); safetensors packs the tensor
    /// as one run, so `[2, 3]` F4 (3 bytes) is a valid safetensors tensor that tpack cannot hold as it is.
    #[test]
    fn sub_byte_rows_that_do_not_start_on_a_byte_are_refused_saying_why() {
        let input = Path::new("m.safetensors");
        assert!(check_packing(input, "t", StDtype::F4, Dtype::F4E2M1, &[2, 4]).is_ok());
        assert!(check_packing(input, "t", StDtype::F6_E2M3, Dtype::F6E2M3, &[8]).is_ok());
        assert!(check_packing(input, "t", StDtype::F32, Dtype::F32, &[3]).is_ok());
        let e = check_packing(input, "t", StDtype::F4, Dtype::F4E2M1, &[2, 3]).unwrap_err().to_string();
        assert!(
            e.contains("tensor \"t\" is F4 of shape [2, 3]") && e.contains("multiple of 2 (rule R26)"),
            "{e}"
        );
        let e = check_packing(input, "t", StDtype::F6_E3M2, Dtype::F6E3M2, &[]).unwrap_err().to_string();
        assert!(e.contains("multiple of 4"), "{e}");
    }
}
