//! A manifest entry's inline `data`: JSON numbers encoded as the little-endian elements of the entry's dtype.

use serde_json::Value as Json;
use tpack::Dtype;

use crate::metadata_json::parse::f64_of;

/// Encodes inline numbers as little-endian elements of `dtype`.
pub(super) fn encode_numbers(dtype: Dtype, items: &[Json]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let fail = |what: &str| format!("item {i} ({v}) {what}");
        let float = || v.as_f64().ok_or_else(|| fail("is not a number"));
        let int = |min: i128, max: i128| -> std::result::Result<i128, String> {
            let n = v
                .as_i64()
                .map(i128::from)
                .or_else(|| v.as_u64().map(i128::from))
                .ok_or_else(|| fail("is not an integer"))?;
            if n < min || n > max {
                return Err(fail(&format!("is out of range for {}", crate::describe::dtype_name(dtype))));
            }
            Ok(n)
        };
        match dtype {
            // NaN and ±∞ as in metadata, so an F64 `data` list can hold every bit pattern.
            Dtype::F64 => out.extend(f64_of(v).map_err(|why| format!("item {i}: {why}"))?.to_le_bytes()),
            Dtype::F32 => out.extend((float()? as f32).to_le_bytes()),
            Dtype::F16 => out.extend(half::f16::from_f64(float()?).to_le_bytes()),
            Dtype::BF16 => out.extend(half::bf16::from_f64(float()?).to_le_bytes()),
            Dtype::I64 => out.extend((int(i64::MIN.into(), i64::MAX.into())? as i64).to_le_bytes()),
            Dtype::I32 => out.extend((int(i32::MIN.into(), i32::MAX.into())? as i32).to_le_bytes()),
            Dtype::I16 => out.extend((int(i16::MIN.into(), i16::MAX.into())? as i16).to_le_bytes()),
            Dtype::I8 => out.extend((int(i8::MIN.into(), i8::MAX.into())? as i8).to_le_bytes()),
            Dtype::U64 => out.extend((int(0, u64::MAX.into())? as u64).to_le_bytes()),
            Dtype::U32 => out.extend((int(0, u32::MAX.into())? as u32).to_le_bytes()),
            Dtype::U16 => out.extend((int(0, u16::MAX.into())? as u16).to_le_bytes()),
            Dtype::U8 | Dtype::RAW => out.push(int(0, u8::MAX.into())? as u8),
            Dtype::BOOL => match v {
                Json::Bool(b) => out.push(u8::from(*b)),
                _ => out.push(int(0, 1)? as u8),
            },
            other => {
                return Err(format!(
                    "inline numbers cannot be encoded as {}; give the bytes as \"hex\" or \"file\"",
                    crate::describe::dtype_name(other)
                ))
            }
        }
    }
    Ok(out)
}
