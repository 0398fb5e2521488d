//! The parser: a cursor over untrusted bytes that validates the whole file in one pass.

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use crate::error::GgufError;
use crate::file::{Gguf, GgufTensor};
use crate::format::{GgmlType, ALIGNMENT_KEY, DEFAULT_ALIGNMENT, MAGIC, MAX_DIMS};
use crate::value::cursor::{to_u64, truncated};
use crate::value::{GgufValue, Reader};

/// Parses and validates the whole GGUF file `bytes` (typically memory-mapped), borrowing strings and tensor
/// data from it.
///
/// On success every metadata key and tensor name is unique and nonempty, every tensor has 1 to 4
/// dimensions, a known type, an aligned offset, and data inside `bytes` of exactly the size its shape and
/// type give, and no two tensors overlap. Bytes between and after tensors, and padding contents, are not
/// looked at.
///
/// # Errors
/// A [`GgufError`] for the first problem found; see its variants.
pub fn parse(bytes: &[u8]) -> Result<Gguf<'_>, GgufError> {
    let mut r = Reader { bytes, pos: 0, big_endian: false };
    let (version, tensor_count, kv_count) = r.header()?;
    let metadata = r.metadata(kv_count)?;
    let alignment = alignment(&metadata)?;
    let infos = r.tensor_infos(tensor_count)?;
    let data_offset = r.data_offset(alignment, !infos.is_empty())?;
    let tensors = infos
        .into_iter()
        .map(|info| info.locate(bytes, data_offset, alignment))
        .collect::<Result<Vec<_>, _>>()?;
    check_overlaps(&tensors)?;
    Ok(Gguf { version, alignment, metadata, tensors, big_endian: r.big_endian, data_offset })
}

/// `general.alignment` from `metadata`, or the default; the key itself is not removed.
fn alignment(metadata: &[(&str, GgufValue<'_>)]) -> Result<u64, GgufError> {
    match metadata.iter().find(|(k, _)| *k == ALIGNMENT_KEY) {
        None => Ok(DEFAULT_ALIGNMENT),
        Some((_, GgufValue::U32(a))) if a.is_power_of_two() => Ok(u64::from(*a)),
        Some((_, GgufValue::U32(a))) => Err(GgufError::BadAlignment(*a)),
        Some((_, other)) => Err(GgufError::AlignmentType { found: other.type_name() }),
    }
}

/// A tensor info as read, before its data is located.
struct TensorInfo<'a> {
    name: &'a str,
    dims: Vec<u64>,
    ggml_type: GgmlType,
    /// Relative to the data section.
    offset: u64,
    size: u64,
}

impl<'a> TensorInfo<'a> {
    /// The tensor, with its data found in `bytes` whose data section starts at `data_offset`.
    fn locate(self, bytes: &'a [u8], data_offset: u64, alignment: u64) -> Result<GgufTensor<'a>, GgufError> {
        if self.offset.checked_rem(alignment) != Some(0) {
            return Err(GgufError::MisalignedTensor {
                tensor: self.name.into(),
                offset: self.offset,
                alignment,
            });
        }
        let out_of_bounds = || GgufError::TensorOutOfBounds {
            tensor: self.name.into(),
            offset: self.offset,
            size: self.size,
            data_offset,
            file_len: to_u64(bytes.len()),
        };
        let start = data_offset.checked_add(self.offset).ok_or_else(out_of_bounds)?;
        let end = start.checked_add(self.size).ok_or_else(out_of_bounds)?;
        let range = usize::try_from(start).ok().zip(usize::try_from(end).ok()).ok_or_else(out_of_bounds)?;
        let data = bytes.get(range.0..range.1).ok_or_else(out_of_bounds)?;
        Ok(GgufTensor { name: self.name, dims: self.dims, ggml_type: self.ggml_type, offset: start, data })
    }
}

/// Fails if two tensors with data share a byte. Sorting keeps this O(n log n) in the tensor count.
fn check_overlaps(tensors: &[GgufTensor<'_>]) -> Result<(), GgufError> {
    let mut spans: Vec<(u64, u64, &str)> = tensors
        .iter()
        .filter(|t| !t.data.is_empty())
        .map(|t| (t.offset, t.offset.saturating_add(to_u64(t.data.len())), t.name))
        .collect();
    spans.sort_unstable();
    for pair in spans.windows(2) {
        if let [(_, end, first), (start, _, second)] = pair {
            if start < end {
                return Err(GgufError::OverlappingTensors {
                    first: (*first).into(),
                    second: (*second).into(),
                });
            }
        }
    }
    Ok(())
}

/// The byte size of tensor `name`, distinguishing a row length that is not a block multiple from overflow.
fn tensor_size(name: &str, dims: &[u64], ggml_type: GgmlType) -> Result<u64, GgufError> {
    let ne0 = dims.first().copied().unwrap_or(0);
    if ne0.checked_rem(ggml_type.block_size()) != Some(0) {
        return Err(GgufError::RowNotBlockMultiple { tensor: name.into(), ggml_type, ne0 });
    }
    ggml_type.tensor_size(dims).ok_or_else(|| GgufError::TensorTooLarge { tensor: name.into() })
}

// The walk over the file's structure; the cursor's primitives and the decoding of values are in
// `value::cursor`.
impl<'a> Reader<'a> {
    /// The header: version, tensor count and metadata count.
    fn header(&mut self) -> Result<(u32, u64, u64), GgufError> {
        // A nonempty prefix of the magic is a truncated GGUF file; anything else is not one at all.
        let prefix = self.bytes.get(..4).unwrap_or(self.bytes);
        if prefix.is_empty() || !MAGIC.starts_with(prefix) {
            return Err(GgufError::BadMagic);
        }
        self.take(4, "magic")?;
        let mut version = self.u32("header")?;
        match version {
            2 | 3 => {}
            // Written by a big-endian writer: the version reads byte-swapped, and so will every number.
            _ if matches!(version.swap_bytes(), 2 | 3) => {
                self.big_endian = true;
                version = version.swap_bytes();
            }
            _ => return Err(GgufError::UnsupportedVersion(version)),
        }
        Ok((version, self.u64("header")?, self.u64("header")?))
    }

    /// `count` key-value pairs. The vector grows as pairs are read, so a huge `count` fails as truncation.
    fn metadata(&mut self, count: u64) -> Result<Vec<(&'a str, GgufValue<'a>)>, GgufError> {
        let mut seen = BTreeSet::new();
        let mut metadata = Vec::new();
        for _ in 0..count {
            let at = self.pos;
            let key = self.string("metadata key")?;
            if key.is_empty() {
                return Err(GgufError::EmptyKey { offset: to_u64(at) });
            }
            if !seen.insert(key) {
                return Err(GgufError::DuplicateKey(key.into()));
            }
            let code = self.u32("metadata value type")?;
            let value = self.value(code, key)?;
            metadata.push((key, value));
        }
        Ok(metadata)
    }

    /// `count` tensor infos, sizes computed. The vector grows as infos are read (each takes at least 32
    /// bytes), so a huge `count` fails as truncation.
    fn tensor_infos(&mut self, count: u64) -> Result<Vec<TensorInfo<'a>>, GgufError> {
        let mut seen = BTreeSet::new();
        let mut infos = Vec::new();
        for index in 0..count {
            let info = self.tensor_info(index)?;
            if !seen.insert(info.name) {
                return Err(GgufError::DuplicateTensor(info.name.into()));
            }
            infos.push(info);
        }
        Ok(infos)
    }

    fn tensor_info(&mut self, index: u64) -> Result<TensorInfo<'a>, GgufError> {
        let name = self.string("tensor name")?;
        if name.is_empty() {
            return Err(GgufError::EmptyTensorName { index });
        }
        let n_dims = self.u32("tensor dimension count")?;
        if !(1..=MAX_DIMS).contains(&n_dims) {
            return Err(GgufError::BadDims { tensor: name.into(), n_dims });
        }
        let dims = (0..n_dims).map(|_| self.u64("tensor dimensions")).collect::<Result<Vec<_>, _>>()?;
        let code = self.u32("tensor type")?;
        let ggml_type = GgmlType::from_code(code).ok_or_else(|| match GgmlType::removed_name(code) {
            Some(removed) => GgufError::RemovedTensorType { tensor: name.into(), code, name: removed },
            None => GgufError::UnknownTensorType { tensor: name.into(), code },
        })?;
        let offset = self.u64("tensor offset")?;
        let size = tensor_size(name, &dims, ggml_type)?;
        Ok(TensorInfo { name, dims, ggml_type, offset, size })
    }

    /// The data section's offset: the current position rounded up to `alignment`. ggml requires the padding
    /// to be present only when there are tensors.
    fn data_offset(&self, alignment: u64, has_tensors: bool) -> Result<u64, GgufError> {
        let at = to_u64(self.pos);
        let aligned = at.checked_next_multiple_of(alignment).ok_or_else(|| truncated("padding", self.pos))?;
        if has_tensors && aligned > to_u64(self.bytes.len()) {
            return Err(truncated("padding before the tensor data", self.pos));
        }
        Ok(aligned)
    }
}
