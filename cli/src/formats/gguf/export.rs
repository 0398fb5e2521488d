//! tpack → GGUF: one GGUF file, or llama.cpp-style splits with `--max-shard-size`.
//!
//! A big-endian GGUF file converted to tpack (recorded by [`BIG_ENDIAN`]) is written big-endian again: every
//! number of the header, and each element of a tensor, byte-swapped on the way out.
//!
//! Two phases, as every writer here: [`Plan::new`] checks everything and lays out every file (refusing
//! what GGUF cannot hold, naming it), then [`Plan::write`] streams header and payloads file by file. Memory
//! is O(table + metadata): payloads are copied from the mapped container in chunks.
//!
//! A tpack file converted from GGUF comes back byte for byte: its tensors in table order, its metadata in
//! the recorded key order ([`KEY_ORDER`]) and version ([`VERSION`]), its `general.alignment`, and the data
//! layout of [`layout`], which is what gguf-py and llama.cpp write.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use tpack::format::DEFAULT_ALIGNMENT;
use tpack::{AtomicFile, Container, Dtype, MetaValue, Packing};
use tpack_gguf::{GgmlType, ALIGNMENT_KEY, MAX_DIMS};

use super::encode::{info_len, Header, TensorInfo};
use super::{
    layout, to_ggml, Gguf, BIG_ENDIAN, DEFAULT_VERSION, GGML_MAX_NAME, KEY_ORDER, RESERVED_KEYS,
    RESERVED_PREFIX, SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT, UNPADDED, VERSION, VERSIONS,
};
use crate::describe::dtype_name;
use crate::error::{CliError, Result};
use crate::formats::tpack::{content_entries, dropped_signature, is_signed_attribute};
use crate::formats::{Export, ExportOptions, Exported, Format};

/// GGUF's alignment when `general.alignment` is absent.
const GGUF_DEFAULT_ALIGNMENT: u64 = tpack_gguf::DEFAULT_ALIGNMENT;

/// Bytes copied per write.
const CHUNK: usize = 1 << 20;

/// The split keys, which a split output writes itself.
const SPLIT_KEYS: [&str; 3] = [SPLIT_NO, SPLIT_COUNT, SPLIT_TENSORS_COUNT];

/// One tensor to write.
struct Tensor<'c> {
    name: &'c str,
    /// Dimensions innermost first.
    ne: Vec<u64>,
    ggml_type: GgmlType,
    data: &'c [u8],
    /// Bytes per element to byte-swap on the way out (a big-endian file's element tensors); 1 for none.
    swap: usize,
}

/// Every file to write, laid out.
struct Plan<'c> {
    tensors: Vec<Tensor<'c>>,
    /// Per file: its name, header bytes, where its data section starts, and its tensors.
    files: Vec<(String, Vec<u8>, u64, Range<usize>)>,
    alignment: u64,
    metadata: usize,
    notes: Vec<String>,
}

impl<'c> Plan<'c> {
    /// Checks `container` (read from `input`) and lays out the file `name`, or its shards.
    fn new(input: &Path, container: &Container<'c>, name: &str, options: &ExportOptions) -> Result<Self> {
        let mut notes = Vec::new();
        let mut metadata = Metadata::of(input, container)?;
        let tensors = tensors(input, container, metadata.big_endian)?;
        let long = tensors.iter().filter(|t| t.name.len() >= GGML_MAX_NAME).count();
        if long > 0 {
            let (names, are) = if long == 1 { ("name is", "it") } else { ("names are", "them") };
            notes.push(format!(
                "{long} tensor {names} {GGML_MAX_NAME} bytes or longer, which llama.cpp refuses to load \
                 (GGML_MAX_NAME); gguf-py reads {are}"
            ));
        }
        let alignment = metadata.alignment(input, container, &mut notes)?;
        notes.extend(dropped_signature(container, "GGUF"));
        let version = metadata.version(input)?;
        let order = metadata.order(&mut notes);
        // Only a file with no tensors can end at its tensor infos: every writer pads before tensor data.
        let padded = !(metadata.unpadded && tensors.is_empty());
        if metadata.unpadded && !tensors.is_empty() {
            notes.push(format!(
                "{UNPADDED} records a GGUF file with no tensors and no padding after its tensor infos, but this \
                 container has tensors, so the data section is padded to the alignment as GGUF writers pad it"
            ));
        }
        let shards = match options.max_shard_size {
            Some(max) => shards(&tensors, max, &mut notes),
            None => std::iter::once(0..tensors.len()).collect(),
        };
        let names = file_names(name, shards.len());
        let count = u16::try_from(shards.len()).map_err(|_| {
            CliError::input(format!(
                "{}: the tensors would make {} shards, more than GGUF's split.count (a u16) counts; pass a larger \
                 --max-shard-size",
                input.display(),
                shards.len()
            ))
        })?;
        let total = i32::try_from(tensors.len()).map_err(|_| {
            CliError::input(format!(
                "{}: {} tensors are more than GGUF's split.tensors.count (an i32) counts",
                input.display(),
                tensors.len()
            ))
        })?;
        let mut files = Vec::with_capacity(shards.len());
        for (no, (range, file)) in shards.into_iter().zip(names).enumerate() {
            let mut pairs: Vec<(&str, MetaValue<'_>)> = Vec::new();
            if count == 1 {
                pairs.extend(order.iter().map(|k| (*k, metadata.values[k])));
            } else {
                if no == 0 {
                    pairs.extend(
                        order.iter().filter(|k| !SPLIT_KEYS.contains(k)).map(|k| (*k, metadata.values[k])),
                    );
                } else if alignment != GGUF_DEFAULT_ALIGNMENT {
                    // Each shard is a GGUF file read on its own: it says its alignment (unlike gguf-py's
                    // shards, whose layout then contradicts the default their readers assume).
                    pairs.push((ALIGNMENT_KEY, MetaValue::U32(alignment as u32)));
                }
                pairs.push((SPLIT_NO, MetaValue::U16(no as u16)));
                pairs.push((SPLIT_COUNT, MetaValue::U16(count)));
                pairs.push((SPLIT_TENSORS_COUNT, MetaValue::I32(total)));
            }
            let shard = tensors.get(range.clone()).unwrap_or_default();
            let (header, data_start) =
                header(input, version, &pairs, shard, alignment, metadata.big_endian, padded)?;
            files.push((file, header, data_start, range));
        }
        Ok(Plan { tensors, files, alignment, metadata: order.len(), notes })
    }

    /// Writes every file into `dir`, each through its own temporary file.
    fn write(&self, dir: &Path) -> Result<()> {
        // Padding is written from this buffer in pieces: an alignment may be up to 2^31 bytes.
        let zeros = vec![0u8; CHUNK];
        let mut swapped = Vec::new();
        for (name, header, data_start, range) in &self.files {
            let path = dir.join(name);
            let mut file = AtomicFile::create(&path)
                .map_err(|e| CliError::io("cannot create a file next to", &path, &e))?;
            {
                let mut sink = file.sink();
                let mut put = |bytes: &[u8]| {
                    embedded_io::Write::write_all(&mut sink, bytes)
                        .map_err(|e| CliError::io("cannot write", &path, &e))
                };
                let pad = |put: &mut dyn FnMut(&[u8]) -> Result<()>, mut n: u64| -> Result<()> {
                    while n > 0 {
                        let piece = usize::try_from(n).map_or(CHUNK, |n| n.min(CHUNK));
                        put(zeros.get(..piece).unwrap_or_default())?;
                        n -= piece as u64;
                    }
                    Ok(())
                };
                put(header)?;
                pad(&mut put, data_start.saturating_sub(header.len() as u64))?;
                for t in self.tensors.get(range.clone()).unwrap_or_default() {
                    for chunk in t.data.chunks(CHUNK - CHUNK % t.swap.max(1)) {
                        if t.swap > 1 {
                            swapped.clear();
                            swapped.extend_from_slice(chunk);
                            for element in swapped.chunks_mut(t.swap) {
                                element.reverse();
                            }
                            put(&swapped)?;
                        } else {
                            put(chunk)?;
                        }
                    }
                    let len = t.data.len() as u64;
                    pad(&mut put, len.next_multiple_of(self.alignment) - len)?;
                }
                embedded_io::Write::flush(&mut sink).map_err(|e| CliError::io("cannot write", &path, &e))?;
            }
            file.commit().map_err(|e| CliError::io("cannot save", &path, &e))?;
        }
        Ok(())
    }
}

/// The header of one file (`pairs` in order, then `tensors`' infos) and where its data section starts: at the
/// end of the header rounded up to `alignment`, or, not `padded`, right there (see [`UNPADDED`]).
fn header(
    input: &Path,
    version: u32,
    pairs: &[(&str, MetaValue<'_>)],
    tensors: &[Tensor<'_>],
    alignment: u64,
    big_endian: bool,
    padded: bool,
) -> Result<(Vec<u8>, u64)> {
    let mut h = Header::new(version, tensors.len() as u64, pairs.len() as u64, big_endian);
    for (key, value) in pairs {
        h.pair(key, value).map_err(|why| {
            CliError::input(format!(
                "{}: metadata {key:?} is {why}, so it cannot be written to GGUF",
                input.display()
            ))
        })?;
    }
    let infos: u64 = tensors.iter().map(|t| info_len(t.name, t.ne.len())).sum();
    let sizes: Vec<u64> = tensors.iter().map(|t| t.data.len() as u64).collect();
    let too_large = || CliError::input(format!("{}: the GGUF file would be too large", input.display()));
    let (data_start, offsets, _) = layout(h.len() + infos, &sizes, alignment).ok_or_else(too_large)?;
    for (t, offset) in tensors.iter().zip(offsets) {
        h.tensor(&TensorInfo { name: t.name, ne: t.ne.clone(), ggml_type: t.ggml_type, offset });
    }
    let header = h.into_bytes();
    let data_start = if padded { data_start } else { header.len() as u64 };
    Ok((header, data_start))
}

/// Every entry as a GGUF tensor, in table order; refuses one GGUF cannot hold, naming it and saying why. In
/// a big-endian file, element tensors are byte-swapped and block tensors refused.
fn tensors<'c>(input: &Path, container: &Container<'c>, big_endian: bool) -> Result<Vec<Tensor<'c>>> {
    let mut tensors = Vec::with_capacity(container.len());
    for e in content_entries(container) {
        let refuse = |why: String| {
            CliError::input(format!(
                "{}: entry {:?} {why}, so it cannot be written to GGUF",
                input.display(),
                e.name()
            ))
        };
        let dtype = e.dtype();
        let ggml_type = match (dtype, to_ggml(dtype)) {
            (Dtype::RAW, _) => {
                return Err(refuse("is RAW (opaque bytes), which GGUF has no tensor type for".into()))
            }
            (Dtype::CONTAINER, _) => {
                return Err(refuse("is a nested container, which GGUF cannot hold".into()))
            }
            (_, Some(t)) => t,
            (_, None) => {
                return Err(refuse(format!(
                "has dtype {}, which GGUF has no tensor type for (GGUF holds F32, F16, BF16, F64, I8, I16, \
                     I32, I64 and the GGML block types)",
                dtype_name(dtype)
            )))
            }
        };
        if let Some(t) = e.target() {
            return Err(refuse(format!("has a load address ({t:#x}), which GGUF has no place for")));
        }
        let shape = e.shape();
        let dims = shape.dims();
        if dims.is_empty() || dims.len() > MAX_DIMS as usize {
            return Err(refuse(format!(
                "has {} dimensions, and a GGUF tensor has 1 to {MAX_DIMS}",
                dims.len()
            )));
        }
        if dims.iter().any(|&d| i64::try_from(d).is_err()) {
            return Err(refuse("has a dimension above 2^63 - 1, which ggml cannot hold".into()));
        }
        let swap = match (big_endian, dtype.packing()) {
            (false, _) => 1,
            (true, Some(Packing::Element(width))) => usize::try_from(width).unwrap_or(1),
            (true, _) => {
                return Err(refuse(format!(
                "is {}, and the byte order of quantized blocks in a big-endian GGUF file ({BIG_ENDIAN} is \
                     true) is not defined",
                dtype_name(dtype)
            )))
            }
        };
        tensors.push(Tensor {
            name: e.name(),
            ne: dims.iter().rev().copied().collect(),
            ggml_type,
            data: e.payload(),
            swap,
        });
    }
    Ok(tensors)
}

/// The container's metadata, less tpack's GGUF records, which are kept aside.
struct Metadata<'c> {
    values: BTreeMap<&'c str, MetaValue<'c>>,
    key_order: Option<Vec<&'c str>>,
    version: Option<MetaValue<'c>>,
    big_endian: bool,
    /// [`UNPADDED`]: a file with no tensors ends at its tensor infos.
    unpadded: bool,
}

impl<'c> Metadata<'c> {
    fn of(input: &Path, container: &Container<'c>) -> Result<Self> {
        let mut values = BTreeMap::new();
        let (mut key_order, mut version, mut big_endian, mut unpadded) = (None, None, false, false);
        for (key, value) in container.metadata().iter().filter(|(k, _)| !is_signed_attribute(k)) {
            match key {
                KEY_ORDER => match value {
                    MetaValue::StringArray(items) => key_order = Some(items.collect()),
                    other => {
                        return Err(CliError::input(format!(
                            "{}: metadata {KEY_ORDER:?} is {}, where tpack records the GGUF key order as a \
                             string[]",
                            input.display(),
                            other.value_type()
                        )))
                    }
                },
                VERSION => version = Some(value),
                BIG_ENDIAN => match value {
                    MetaValue::Bool(b) => big_endian = b,
                    other => {
                        return Err(CliError::input(format!(
                            "{}: metadata {BIG_ENDIAN:?} is {}, where tpack records a big-endian GGUF file as \
                             the bool true",
                            input.display(),
                            other.value_type()
                        )))
                    }
                },
                UNPADDED => match value {
                    MetaValue::Bool(b) => unpadded = b,
                    other => {
                        return Err(CliError::input(format!(
                            "{}: metadata {UNPADDED:?} is {}, where tpack records a GGUF file with no padding after \
                             its tensor infos as the bool true",
                            input.display(),
                            other.value_type()
                        )))
                    }
                },
                _ if key.starts_with(RESERVED_PREFIX) => {
                    return Err(CliError::input(format!(
                        "{}: metadata {key:?} is in the namespace {RESERVED_PREFIX:?}, which tpack reserves for \
                         the GGUF file's own structure ({RESERVED_KEYS}); rename it (`tpack unpack`, edit \
                         the manifest, `tpack pack`) and convert that",
                        input.display()
                    )))
                }
                _ => {
                    values.insert(key, value);
                }
            }
        }
        Ok(Self { values, key_order, version, big_endian, unpadded })
    }

    /// The GGUF version: the recorded one, or [`DEFAULT_VERSION`].
    fn version(&self, input: &Path) -> Result<u32> {
        match self.version {
            None => Ok(DEFAULT_VERSION),
            Some(MetaValue::U32(v)) if VERSIONS.contains(&v) => Ok(v),
            Some(other) => Err(CliError::input(format!(
                "{}: metadata {VERSION:?} is {} {}, where tpack records the GGUF version as a u32, 2 or 3",
                input.display(),
                other.value_type(),
                crate::describe::meta_value_text(other)
            ))),
        }
    }

    /// The GGUF alignment: `general.alignment` (a `u32`; a `u64` from an earlier tpack is taken and written
    /// as `u32`, with a note), or, without one, 32 unless an entry asks tpack for more than its default 64
    /// (then that, recorded as `general.alignment`).
    fn alignment(&mut self, input: &Path, container: &Container<'_>, notes: &mut Vec<String>) -> Result<u64> {
        let bad = |what: String| {
            CliError::input(format!(
                "{}: metadata {ALIGNMENT_KEY:?} is {what}, where GGUF needs a u32 power of two",
                input.display()
            ))
        };
        match self.values.get(ALIGNMENT_KEY).copied() {
            Some(MetaValue::U32(a)) if a.is_power_of_two() => Ok(u64::from(a)),
            Some(MetaValue::U64(a)) => {
                let a32 = u32::try_from(a)
                    .ok()
                    .filter(|a| a.is_power_of_two())
                    .ok_or_else(|| bad(format!("u64 {a}")))?;
                notes.push(format!(
                    "{ALIGNMENT_KEY} is a u64 (as tpack converters before format 1.1 stored it); it is written as \
                     GGUF's u32"
                ));
                self.values.insert(ALIGNMENT_KEY, MetaValue::U32(a32));
                Ok(u64::from(a32))
            }
            Some(other) => {
                Err(bad(format!("{} {}", other.value_type(), crate::describe::meta_value_text(other))))
            }
            None => {
                let most = content_entries(container).map(|e| e.alignment()).max().unwrap_or(0);
                if most > DEFAULT_ALIGNMENT {
                    self.values.insert(ALIGNMENT_KEY, MetaValue::U32(most));
                    Ok(u64::from(most))
                } else {
                    Ok(GGUF_DEFAULT_ALIGNMENT)
                }
            }
        }
    }

    /// The keys in GGUF order: the recorded order, then any key it does not list, sorted (with a note).
    fn order(&self, notes: &mut Vec<String>) -> Vec<&'c str> {
        let Some(recorded) = &self.key_order else { return self.values.keys().copied().collect() };
        let mut placed = BTreeSet::new();
        let mut order: Vec<&'c str> = Vec::with_capacity(self.values.len());
        let mut gone = 0usize;
        for &k in recorded {
            match self.values.get_key_value(k) {
                Some((&key, _)) if placed.insert(key) => order.push(key),
                _ => gone += 1,
            }
        }
        let added: Vec<&'c str> = self.values.keys().copied().filter(|k| !placed.contains(k)).collect();
        if gone > 0 || !added.is_empty() {
            notes.push(format!(
                "the recorded GGUF key order ({KEY_ORDER}) does not match the metadata ({} keys not in it, {gone} \
                 listed but absent or repeated): the keys it lists come first, in its order, and the others after \
                 them, sorted",
                added.len()
            ));
        }
        order.extend(added);
        order
    }
}

/// The tensors in shards of at most `max` bytes of tensor data each, in order, as gguf-py's `--split-max-size`
/// fills them: a tensor that does not fit starts the next shard, and one larger than `max` has a shard of its
/// own (noted).
fn shards(tensors: &[Tensor<'_>], max: u64, notes: &mut Vec<String>) -> Vec<Range<usize>> {
    let mut shards = Vec::new();
    let (mut start, mut size) = (0usize, 0u64);
    for (i, t) in tensors.iter().enumerate() {
        let len = t.data.len() as u64;
        if i > start && size.saturating_add(len) > max {
            shards.push(start..i);
            (start, size) = (i, 0);
        }
        size = size.saturating_add(len);
    }
    shards.push(start..tensors.len());
    let over = tensors.iter().filter(|t| t.data.len() as u64 > max).count();
    if over > 0 {
        let (tensors, are) = if over == 1 { ("tensor", "is") } else { ("tensors", "are") };
        notes.push(format!(
            "{over} {tensors} {are} larger than --max-shard-size ({max} bytes) on {}; each has a shard of its own, \
             larger than the limit",
            if over == 1 { "its own" } else { "their own" }
        ));
    }
    shards
}

/// The file names of `count` shards of the file `name`: `name` itself for one, else llama.cpp's
/// `PREFIX-00001-of-00003.gguf` (`llama_split_path`), PREFIX being `name` without its `.gguf`.
fn file_names(name: &str, count: usize) -> Vec<String> {
    if count <= 1 {
        return vec![name.to_owned()];
    }
    let prefix = match name.len().checked_sub(5).and_then(|at| name.get(at..).map(|ext| (at, ext))) {
        Some((at, ext)) if ext.eq_ignore_ascii_case(".gguf") => name.get(..at).unwrap_or(name),
        _ => name,
    };
    (1..=count).map(|i| format!("{prefix}-{i:05}-of-{count:05}.gguf")).collect()
}

impl Export for Gguf {
    fn format(&self) -> Format {
        Format::Gguf
    }

    fn file_names(
        &self,
        container: &Container<'_>,
        name: &str,
        options: &ExportOptions,
    ) -> Result<Vec<String>> {
        let Some(max) = options.max_shard_size else { return Ok(vec![name.to_owned()]) };
        // Entries GGUF cannot hold are refused when writing; here only their sizes count.
        let sizes: Vec<Tensor<'_>> = content_entries(container)
            .map(|e| Tensor {
                name: e.name(),
                ne: Vec::new(),
                ggml_type: GgmlType::F32,
                data: e.payload(),
                swap: 1,
            })
            .collect();
        Ok(file_names(name, shards(&sizes, max, &mut Vec::new()).len()))
    }

    /// Every entry with its bytes unchanged, in table order; metadata in the recorded order (see the module
    /// documentation). Refuses what GGUF cannot hold before any file is created.
    fn write(
        &self,
        input: &Path,
        container: &Container<'_>,
        dir: &Path,
        name: &str,
        options: &ExportOptions,
    ) -> Result<Exported> {
        let plan = Plan::new(input, container, name, options)?;
        plan.write(dir)?;
        let mut notes = plan.notes;
        if plan.files.len() > 1 {
            notes.push(format!(
                "split into {} files as llama.cpp's gguf-split names them; the first holds the metadata, each \
                 has the split.no, split.count and split.tensors.count keys",
                plan.files.len()
            ));
        }
        Ok(Exported {
            entries: plan.tensors.len(),
            metadata: plan.metadata,
            notes,
            files: plan.files.into_iter().map(|(name, ..)| name).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_named_as_llama_cpp_names_them() {
        assert_eq!(file_names("m.gguf", 1), ["m.gguf"]);
        assert_eq!(file_names("m.GGUF", 2), ["m-00001-of-00002.gguf", "m-00002-of-00002.gguf"]);
        assert_eq!(file_names("model", 2)[1], "model-00002-of-00002.gguf");
        assert_eq!(file_names(".gguf", 2)[0], "-00001-of-00002.gguf");
        assert_eq!(file_names("é.gguf", 100_000)[99_999], "é-100000-of-100000.gguf");
    }

    #[test]
    fn shards_fill_up_to_the_limit_as_gguf_py_fills_them() {
        let data = [0u8; 100];
        let t =
            |n: usize| Tensor { name: "t", ne: vec![], ggml_type: GgmlType::F32, data: &data[..n], swap: 1 };
        let tensors = [t(40), t(60), t(1), t(100), t(0), t(30)];
        let mut notes = Vec::new();
        assert_eq!(shards(&tensors, 100, &mut notes), [0..2, 2..3, 3..5, 5..6]);
        assert!(notes.is_empty());
        assert_eq!(shards(&tensors, 50, &mut notes), [0..1, 1..2, 2..3, 3..4, 4..6]);
        assert!(notes[0].starts_with("2 tensors are larger"), "{notes:?}");
        let empty = shards(&[], 10, &mut notes);
        assert_eq!((empty.len(), empty.first()), (1, Some(&(0..0))));
    }
}
