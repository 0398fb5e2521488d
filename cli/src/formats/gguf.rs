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

/// Bits of an f32's exponent field.
const F32_EXPONENT: u32 = 0xff;
/// Bits of an f32's mantissa (fraction) field.
const F32_MANTISSA: u32 = 0x7f_ffff;
/// Bits in an f32's mantissa field.
const F32_MANTISSA_BITS: u32 = 23;
/// How far an f32 mantissa moves up into an f64's 52-bit one.
const MANTISSA_SHIFT: u32 = 52 - F32_MANTISSA_BITS;
/// An f64's all-ones exponent (∞ and NaN).
const F64_EXPONENT_MAX: u64 = 0x7ff;
/// The f64 exponent field of an f32 exponent field `e` of a normal number: 1023 - 127 added.
const EXPONENT_REBIAS: u64 = 1023 - 127;

/// The f64 bit pattern of the f32 `bits`, computed on the bits: sign kept, exponent rebiased, mantissa moved
/// up (subnormals normalized). For every number this is the exact value `f64::from` gives; unlike it, a NaN
/// keeps its payload and a signalling NaN stays signalling (`7f800001` → `7ff0000020000000`), where the
/// hardware conversion sets the quiet bit (→ `7ff8000020000000`).
#[must_use]
pub(crate) fn widen_f32_bits(bits: u32) -> u64 {
    let sign = u64::from(bits >> 31) << 63;
    let exponent = (bits >> F32_MANTISSA_BITS) & F32_EXPONENT;
    let mantissa = bits & F32_MANTISSA;
    let (exponent, mantissa) = match (exponent, mantissa) {
        (0, 0) => (0, 0),
        (0, m) => {
            // A subnormal m × 2^-149: shift m until its leading 1 is the implicit bit (bit 23), one exponent
            // step per place. m < 2^23, so the shift is 1 to 23 and the exponent stays positive.
            let shift = m.leading_zeros() - (32 - F32_MANTISSA_BITS - 1);
            (EXPONENT_REBIAS + 1 - u64::from(shift), (m << shift) & F32_MANTISSA)
        }
        (F32_EXPONENT, m) => (F64_EXPONENT_MAX, m),
        (e, m) => (u64::from(e) + EXPONENT_REBIAS, m),
    };
    sign | (exponent << 52) | (u64::from(mantissa) << MANTISSA_SHIFT)
}

/// An f32 widened to f64 with every bit kept ([`widen_f32_bits`]).
fn widen(v: f32) -> f64 {
    f64::from_bits(widen_f32_bits(v.to_bits()))
}

/// A GGUF metadata value as tpack metadata. Integers widen to u64/i64 and f32 to f64 (exactly, NaN payloads
/// included: [`widen_f32_bits`]); a bool array becomes a u64[] of 0 and 1. Nested arrays have no tpack form.
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
        GgufValue::F32(x) => OwnedValue::F64(widen(*x)),
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
            GgufArray::F32(x) => OwnedValue::F64Array(x.iter().map(|&v| widen(v)).collect()),
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
    /// first), at the larger of the file's alignment and tpack's default (a file asking for more than
    /// tpack's maximum is refused); a big-endian file's element tensors are
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
        // A larger alignment cannot be kept, and silently using a smaller one would contradict the file's own
        // `general.alignment`, which is kept as metadata: refused. A smaller one is raised to tpack's default
        // (both are powers of two, so every payload stays aligned as the file asks).
        let alignment = u32::try_from(file.alignment).ok().filter(|&a| a <= MAX_ALIGNMENT).ok_or_else(|| {
            CliError::input(format!(
                "{}: general.alignment is {}, more than the largest payload alignment tpack can store \
                 ({MAX_ALIGNMENT}), so its layout cannot be kept; rewrite the GGUF file with an alignment of at \
                 most {MAX_ALIGNMENT} (gguf-py: GGUFWriter.add_custom_alignment) and convert that",
                input.display(),
                file.alignment
            ))
        })?;
        let alignment = alignment.max(DEFAULT_ALIGNMENT);
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

#[cfg(test)]
mod tests {
    use super::widen_f32_bits;
    use proptest::prelude::*;

    /// Expected bits worked out by hand from the IEEE 754 fields (the hardware conversion, which numpy's
    /// `astype(np.float64)` and Rust's `f64::from` use, quiets signalling NaNs, so it cannot be the reference).
    #[test]
    fn widening_keeps_every_bit_of_special_values() {
        for (f32_bits, f64_bits) in [
            (0x7f80_0001, 0x7ff0_0000_2000_0000), // signalling NaN, payload 1
            (0xff80_0001, 0xfff0_0000_2000_0000), // the same, negative
            (0x7fbf_ffff, 0x7ff7_ffff_e000_0000), // signalling NaN, largest payload
            (0x7fc0_0000, 0x7ff8_0000_0000_0000), // the default quiet NaN
            (0xffc0_0001, 0xfff8_0000_2000_0000), // quiet NaN with a payload, negative
            (0x7f80_0000, 0x7ff0_0000_0000_0000), // +∞
            (0xff80_0000, 0xfff0_0000_0000_0000), // −∞
            (0x0000_0000, 0x0000_0000_0000_0000), // +0
            (0x8000_0000, 0x8000_0000_0000_0000), // −0
            (0x0000_0001, 0x36a0_0000_0000_0000), // smallest subnormal, 2^-149
            (0x807f_ffff, 0xb80f_ffff_c000_0000), // largest subnormal, negative
            (0x0080_0000, 0x3810_0000_0000_0000), // smallest normal, 2^-126
            (0x3f80_0000, 0x3ff0_0000_0000_0000), // 1
            (0x7f7f_ffff, 0x47ef_ffff_e000_0000), // largest finite
        ] {
            assert_eq!(widen_f32_bits(f32_bits), f64_bits, "{f32_bits:08x}");
        }
    }

    #[test]
    fn widening_every_exponent_and_subnormal_shift_matches_the_exact_value() {
        for exponent in 0..0xffu32 {
            for mantissa in [0, 1, 2, 0x40_0000, 0x55_5555, 0x7f_ffff] {
                let bits = (exponent << 23) | mantissa;
                for sign in [0, 0x8000_0000] {
                    let v = f32::from_bits(bits | sign);
                    assert_eq!(widen_f32_bits(bits | sign), f64::from(v).to_bits(), "{:08x}", bits | sign);
                }
            }
        }
        for shift in 0..23 {
            let v = f32::from_bits(1 << shift);
            assert_eq!(widen_f32_bits(1 << shift), f64::from(v).to_bits(), "subnormal 2^{shift}");
        }
    }

    proptest! {
        /// Numbers widen to their exact value; NaNs keep sign and payload, moved up 29 bits.
        #[test]
        fn widening_is_exact(bits in any::<u32>()) {
            let v = f32::from_bits(bits);
            let wide = widen_f32_bits(bits);
            if v.is_nan() {
                prop_assert_eq!(wide >> 63, u64::from(bits >> 31));
                prop_assert_eq!((wide >> 52) & 0x7ff, 0x7ff);
                prop_assert_eq!(wide & ((1 << 52) - 1), u64::from(bits & 0x7f_ffff) << 29);
            } else {
                prop_assert_eq!(wide, f64::from(v).to_bits());
            }
        }
    }
}
