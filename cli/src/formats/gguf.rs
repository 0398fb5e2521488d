//! GGUF, parsed by the `tpack-gguf` crate; here is only what is tpack's business: which GGML types tpack
//! stores, how GGUF metadata becomes tpack metadata, and the byte order of big-endian files.

use std::borrow::Cow;
use std::path::Path;

use tpack::format::{Packing, DEFAULT_ALIGNMENT, MAX_ALIGNMENT};
use tpack::Dtype;
use tpack_gguf::{GgmlType, GgufArray, GgufValue, MAGIC};

use super::tpack::{OutEntry, Payload};
use super::{Format, Import, Model};
use crate::error::{CliError, Result};
use crate::manifest::OwnedValue;

/// The GGUF format.
#[derive(Debug)]
pub(crate) struct Gguf;

/// Whether `head` starts with the GGUF magic (the same in either byte order).
pub(crate) fn sniff(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

/// The tpack dtype of a GGML tensor type, if tpack 1.0 stores it with the same bytes.
fn from_ggml(t: GgmlType) -> Option<Dtype> {
    Some(match t {
        GgmlType::F32 => Dtype::F32,
        GgmlType::F16 => Dtype::F16,
        GgmlType::BF16 => Dtype::BF16,
        GgmlType::F64 => Dtype::F64,
        GgmlType::Q8_0 => Dtype::Q8_0,
        GgmlType::Q4_0 => Dtype::Q4_0,
        GgmlType::I8 => Dtype::I8,
        GgmlType::I16 => Dtype::I16,
        GgmlType::I32 => Dtype::I32,
        GgmlType::I64 => Dtype::I64,
        _ => return None,
    })
}

/// A GGUF metadata value as tpack metadata. Integers widen to u64/i64 and f32 to f64 (exactly); a bool array
/// becomes a u64[] of 0 and 1. Nested arrays have no tpack form.
fn metadata_value(v: &GgufValue<'_>) -> std::result::Result<OwnedValue, &'static str> {
    Ok(match v {
        GgufValue::U8(x) => OwnedValue::U64(u64::from(*x)),
        GgufValue::U16(x) => OwnedValue::U64(u64::from(*x)),
        GgufValue::U32(x) => OwnedValue::U64(u64::from(*x)),
        GgufValue::U64(x) => OwnedValue::U64(*x),
        GgufValue::I8(x) => OwnedValue::I64(i64::from(*x)),
        GgufValue::I16(x) => OwnedValue::I64(i64::from(*x)),
        GgufValue::I32(x) => OwnedValue::I64(i64::from(*x)),
        GgufValue::I64(x) => OwnedValue::I64(*x),
        GgufValue::F32(x) => OwnedValue::F64(f64::from(*x)),
        GgufValue::F64(x) => OwnedValue::F64(*x),
        GgufValue::Bool(x) => OwnedValue::Bool(*x),
        GgufValue::String(s) => OwnedValue::String((*s).to_owned()),
        GgufValue::Array(a) => match a {
            GgufArray::U8(x) => OwnedValue::U64Array(x.iter().map(|&v| u64::from(v)).collect()),
            GgufArray::U16(x) => OwnedValue::U64Array(x.iter().map(|&v| u64::from(v)).collect()),
            GgufArray::U32(x) => OwnedValue::U64Array(x.iter().map(|&v| u64::from(v)).collect()),
            GgufArray::U64(x) => OwnedValue::U64Array(x.clone()),
            GgufArray::I8(x) => OwnedValue::I64Array(x.iter().map(|&v| i64::from(v)).collect()),
            GgufArray::I16(x) => OwnedValue::I64Array(x.iter().map(|&v| i64::from(v)).collect()),
            GgufArray::I32(x) => OwnedValue::I64Array(x.iter().map(|&v| i64::from(v)).collect()),
            GgufArray::I64(x) => OwnedValue::I64Array(x.clone()),
            GgufArray::F32(x) => OwnedValue::F64Array(x.iter().map(|&v| f64::from(v)).collect()),
            GgufArray::F64(x) => OwnedValue::F64Array(x.clone()),
            GgufArray::Bool(x) => OwnedValue::U64Array(x.iter().map(|&v| u64::from(v)).collect()),
            GgufArray::String(x) => OwnedValue::StringArray(x.iter().map(|s| (*s).to_owned()).collect()),
            GgufArray::Array(_) => return Err("an array of arrays, which tpack metadata cannot hold"),
        },
    })
}

impl Import for Gguf {
    fn format(&self) -> Format {
        Format::Gguf
    }

    /// Tensors in file order with shapes reversed (GGUF lists dimensions innermost first, tpack outermost
    /// first), at the file's alignment clamped to what tpack allows; a big-endian file's element tensors are
    /// byte-swapped on the way through and its quantized ones refused. Metadata in file order, widened.
    fn read<'a>(&self, input: &Path, bytes: &'a [u8]) -> Result<Model<'a>> {
        let file = tpack_gguf::parse(bytes)
            .map_err(|e| CliError::input(format!("{} is not a valid GGUF file: {e}", input.display())))?;
        let mut metadata = Vec::with_capacity(file.metadata.len());
        for (key, value) in &file.metadata {
            let v = metadata_value(value)
                .map_err(|why| CliError::input(format!("{}: metadata {key:?} is {why}", input.display())))?;
            metadata.push(((*key).to_owned(), v));
        }
        let alignment =
            u32::try_from(file.alignment).unwrap_or(u32::MAX).clamp(DEFAULT_ALIGNMENT, MAX_ALIGNMENT);
        let mut entries = Vec::with_capacity(file.tensors.len());
        for t in &file.tensors {
            let dtype = from_ggml(t.ggml_type).ok_or_else(|| {
                CliError::input(format!(
                    "{}: tensor {:?} has GGML type {}, which tpack 1.0 cannot store (it stores F32, F16, BF16, \
                     F64, Q8_0, Q4_0, I8, I16, I32 and I64)",
                    input.display(),
                    t.name,
                    t.ggml_type.name()
                ))
            })?;
            let payload = if file.big_endian {
                // tpack is little-endian: each element is byte-swapped on the way through. A block type has no
                // defined big-endian layout (gguf-py's writer swaps element types only and leaves block scales
                // little-endian), so its bytes cannot be trusted either way.
                match dtype.packing() {
                    Some(Packing::Element(width)) => Payload::Swapped { bytes: t.data, width: width as usize },
                    _ => {
                        return Err(CliError::input(format!(
                            "{}: tensor {:?} is {} in a big-endian GGUF file; the byte order of quantized blocks \
                             in big-endian GGUF is not defined (gguf-py leaves their scales little-endian), so \
                             it is refused",
                            input.display(),
                            t.name,
                            t.ggml_type.name()
                        )))
                    }
                }
            } else {
                Payload::Bytes(t.data)
            };
            entries.push(OutEntry {
                name: Cow::Borrowed(t.name),
                dtype,
                shape: t.dims.iter().rev().copied().collect(),
                alignment,
                target: None,
                length: t.data.len() as u64,
                payload,
            });
        }
        Ok(Model { compat_flags: 0, entries, metadata })
    }
}
