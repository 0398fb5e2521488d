//! safetensors, read and written by the `safetensors` crate: its header size limit, JSON, dtypes and
//! contiguous offsets that cover the data exactly are its checks; a repeated JSON key is refused here.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use safetensors::tensor::Dtype as StDtype;
use safetensors::SafeTensors;
use tpack::format::DEFAULT_ALIGNMENT;
use tpack::{Container, Dtype, MetaValue};

use super::tpack::{OutEntry, Payload};
use super::{Export, Exported, Format, Import, Model};
use crate::describe::dtype_name;
use crate::error::{CliError, Kind, Result};
use crate::manifest::OwnedValue;

/// The bytes of the little-endian u64 header length that starts a safetensors file.
const LENGTH_PREFIX: usize = 8;

/// The safetensors format.
#[derive(Debug)]
pub(crate) struct Safetensors;

/// Whether `head` looks like a safetensors file: a u64 header length, then the header's opening `{`.
pub(crate) fn sniff(head: &[u8]) -> bool {
    head.get(LENGTH_PREFIX) == Some(&b'{')
}

/// The tpack dtype of a safetensors dtype, if tpack 1.0 has it.
fn from_safetensors(d: StDtype) -> Option<Dtype> {
    Some(match d {
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

/// The safetensors dtype of a tpack dtype, if safetensors has it.
fn to_safetensors(d: Dtype) -> Option<StDtype> {
    Some(match d {
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
            CliError::input(format!("{} is not a valid safetensors file: {e}", input.display()))
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
                    "{}: tensor {name:?} has dtype {:?}, which tpack 1.0 cannot store",
                    input.display(),
                    info.dtype,
                ))
            })?;
            entries.push(OutEntry {
                shape: info.shape.iter().map(|&d| d as u64).collect(),
                name: Cow::Owned(name),
                dtype,
                alignment: DEFAULT_ALIGNMENT,
                target: None,
                length: payload.len() as u64,
                payload: Payload::Bytes(payload),
            });
        }
        let mut metadata: Vec<(String, OwnedValue)> = header
            .metadata()
            .iter()
            .flat_map(HashMap::iter)
            .map(|(k, v)| (k.clone(), OwnedValue::String(v.clone())))
            .collect();
        metadata.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Model { compat_flags: 0, entries, metadata })
    }
}

/// A tpack metadata value as a safetensors `__metadata__` string: strings as they are, everything else as the
/// JSON of spec §13.
fn metadata_string(value: &MetaValue<'_>) -> String {
    match value {
        MetaValue::String(s) => (*s).to_owned(),
        other => crate::describe::meta_value_json(other).to_string(),
    }
}

/// One entry as the `safetensors` crate's writer sees it.
struct View<'a> {
    dtype: StDtype,
    shape: Vec<usize>,
    data: &'a [u8],
}

impl safetensors::View for &View<'_> {
    fn dtype(&self) -> StDtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

impl Export for Safetensors {
    fn format(&self) -> Format {
        Format::Safetensors
    }

    /// Every entry with its bytes unchanged; metadata as strings ([`metadata_string`]). Load addresses and
    /// alignments have no place in safetensors: dropped load addresses are noted.
    fn write(&self, input: &Path, container: &Container<'_>, output: &Path) -> Result<Exported> {
        let mut views = Vec::with_capacity(container.len());
        let mut targets = 0usize;
        for e in container.entries() {
            let dtype = to_safetensors(e.dtype()).ok_or_else(|| {
                CliError::input(format!(
                    "{}: entry {:?} has dtype {}, which safetensors cannot store",
                    input.display(),
                    e.name(),
                    dtype_name(e.dtype())
                ))
            })?;
            let shape = e
                .shape()
                .dims()
                .iter()
                .map(|&d| usize::try_from(d))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|_| {
                    CliError::input(format!(
                        "{}: entry {:?} is too large for this machine",
                        input.display(),
                        e.name()
                    ))
                })?;
            targets += usize::from(e.target().is_some());
            views.push((e.name().to_owned(), View { dtype, shape, data: e.payload() }));
        }
        let metadata: HashMap<String, String> =
            container.metadata().iter().map(|(k, v)| (k.to_owned(), metadata_string(&v))).collect();
        let info = if metadata.is_empty() { None } else { Some(metadata) };
        let meta_count = info.as_ref().map_or(0, HashMap::len);
        safetensors::serialize_to_file(views.iter().map(|(n, v)| (n.as_str(), v)), info, output)
            .map_err(|e| CliError::new(Kind::Io, format!("cannot write {}: {e}", output.display())))?;
        let mut notes = Vec::new();
        if targets > 0 {
            notes.push(format!(
                "safetensors has no load addresses or alignments; the load addresses of {targets} entries were dropped"
            ));
        }
        Ok(Exported { entries: views.len(), metadata: meta_count, notes })
    }
}
