//! Containers, entries and metadata as words (for people) and as JSON (for scripts).
//!
//! The JSON is the canonical decoding of spec §13 with one difference: an f64 is a JSON number when it is
//! finite (the shortest text that reads back as the same bits) and `{"f64_bits": "<16 hex digits>"}` when
//! it is NaN or ±∞, where §13 writes the hex digits of every f64. `tpack inspect --json`, the `metadata`
//! list of a pack manifest and safetensors `__metadata__` all spell values this way; the conformance
//! reader (`examples/conformance_reader.rs`) keeps §13's hex.

use serde_json::{json, Map, Value};
use tpack::{Container, Dtype, Entry, MetaValue, Packing};

/// The spec's name of a dtype, or `dtype N` for one from a newer minor version (its `Display`).
#[must_use]
pub fn dtype_name(dtype: Dtype) -> String {
    dtype.to_string()
}

/// Lowercase hex of `bytes`.
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// The key of the object that holds the bit pattern of an f64 JSON has no number for.
pub const F64_BITS_KEY: &str = "f64_bits";

/// An f64 that JSON has no number for (NaN, ±∞) as `{"f64_bits": "<16 lowercase hex digits>"}`, every
/// bit of it, payload and sign included.
#[must_use]
pub fn f64_bits(v: f64) -> Value {
    json!({ F64_BITS_KEY: format!("{:016x}", v.to_bits()) })
}

/// An f64 as the tool's JSON writes it: a number when finite, which serde_json writes in the shortest form
/// that parses back to the same bits (−0 as `-0.0`); otherwise [`f64_bits`].
#[must_use]
pub fn f64_json(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or_else(|| f64_bits(v), Value::Number)
}

/// One entry as spec §13 decodes it, with its nested container when it has one.
#[must_use]
pub fn entry_json(e: &Entry<'_>) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(e.name()));
    m.insert("dtype".into(), e.dtype().name().map_or_else(|| json!(e.dtype().code()), |n| json!(n)));
    m.insert("shape".into(), json!(e.shape().dims()));
    m.insert("offset".into(), json!(e.offset()));
    m.insert("length".into(), json!(e.byte_len()));
    m.insert("alignment".into(), json!(e.alignment()));
    m.insert("target".into(), json!(e.target()));
    m.insert("checksum".into(), json!(e.checksum()));
    if let Some(block) = block_json(e.dtype()) {
        m.insert("block".into(), block);
    }
    if let Some(nested) = e.nested() {
        m.insert("container".into(), container_json(&nested));
    }
    Value::Object(m)
}

/// A metadata value as spec §13 writes it, except for f64 ([`f64_json`]): an f32 as the 8 hex digits of its
/// bits, an `array[]` as a list of `{"type", "value"}` items.
#[must_use]
pub fn meta_value_json(value: &MetaValue<'_>) -> Value {
    match value {
        MetaValue::U64(v) => json!(v),
        MetaValue::I64(v) => json!(v),
        MetaValue::F64(v) => f64_json(*v),
        MetaValue::Bool(v) => json!(v),
        MetaValue::String(s) => json!(s),
        MetaValue::Bytes(b) => json!(hex(b)),
        MetaValue::U64Array(a) => json!(a.iter().map(|v| v.get()).collect::<Vec<_>>()),
        MetaValue::I64Array(a) => json!(a.iter().map(|v| v.get()).collect::<Vec<_>>()),
        MetaValue::F64Array(a) => Value::Array(a.iter().map(|v| f64_json(v.get())).collect()),
        MetaValue::StringArray(items) => json!((*items).collect::<Vec<_>>()),
        MetaValue::U8(v) => json!(v),
        MetaValue::I8(v) => json!(v),
        MetaValue::U16(v) => json!(v),
        MetaValue::I16(v) => json!(v),
        MetaValue::U32(v) => json!(v),
        MetaValue::I32(v) => json!(v),
        MetaValue::F32(v) => json!(f32_hex(*v)),
        MetaValue::U8Array(a) => json!(a),
        MetaValue::I8Array(a) => json!(a),
        MetaValue::U16Array(a) => json!(a.iter().map(|v| v.get()).collect::<Vec<_>>()),
        MetaValue::I16Array(a) => json!(a.iter().map(|v| v.get()).collect::<Vec<_>>()),
        MetaValue::U32Array(a) => json!(a.iter().map(|v| v.get()).collect::<Vec<_>>()),
        MetaValue::I32Array(a) => json!(a.iter().map(|v| v.get()).collect::<Vec<_>>()),
        MetaValue::F32Array(a) => json!(a.iter().map(|v| f32_hex(v.get())).collect::<Vec<_>>()),
        MetaValue::BoolArray(a) => json!(a),
        MetaValue::ArrayArray(items) => Value::Array(
            (*items)
                .map(|item| json!({"type": meta_type_json(&item), "value": meta_value_json(&item)}))
                .collect(),
        ),
        MetaValue::Unknown { bytes, .. } => json!(hex(bytes)),
        // `MetaValue` is non-exhaustive; a future variant is shown as its type only.
        _ => Value::Null,
    }
}

/// An f32 as spec §13 writes it: the 8 lowercase hex digits of its bit pattern.
#[must_use]
pub fn f32_hex(v: f32) -> String {
    format!("{:08x}", v.to_bits())
}

/// The type name of a metadata value (`u64`, `string[]`, …), or its code for a newer type.
#[must_use]
pub fn meta_type_json(value: &MetaValue<'_>) -> Value {
    let t = value.value_type();
    t.name().map_or_else(|| json!(t.code()), |n| json!(n))
}

/// The whole container as spec §13 decodes it.
#[must_use]
pub fn container_json(c: &Container<'_>) -> Value {
    let (major, minor) = c.version();
    let entries: Vec<Value> = c.entries().map(|e| entry_json(&e)).collect();
    let metadata: Vec<Value> = c
        .metadata()
        .iter()
        .map(|(key, value)| json!({"key": key, "type": meta_type_json(&value), "value": meta_value_json(&value)}))
        .collect();
    json!({
        "version": [major, minor],
        "compat_flags": c.compat_flags(),
        "entries": entries,
        "metadata": metadata,
    })
}

/// Items shown before an array is cut short in text output.
const SHOWN_ITEMS: usize = 8;

fn list<T: std::fmt::Display>(items: impl ExactSizeIterator<Item = T>) -> String {
    let total = items.len();
    let shown: Vec<String> = items.take(SHOWN_ITEMS).map(|v| v.to_string()).collect();
    if total > SHOWN_ITEMS {
        format!("[{}, … {} more]", shown.join(", "), total - SHOWN_ITEMS)
    } else {
        format!("[{}]", shown.join(", "))
    }
}

/// The first [`SHOWN_ITEMS`] of `shown` (the start of `total` items), with how many more there are.
fn list_of(shown: Vec<String>, total: usize) -> String {
    let first: Vec<&str> = shown.iter().take(SHOWN_ITEMS).map(String::as_str).collect();
    if total > SHOWN_ITEMS {
        format!("[{}, … {} more]", first.join(", "), total - SHOWN_ITEMS)
    } else {
        format!("[{}]", first.join(", "))
    }
}

/// A metadata value in words: numbers as numbers (an f32 as the shortest decimal that reads back as it),
/// strings quoted, long arrays cut short; the items of an `array[]` each with its type.
#[must_use]
pub fn meta_value_text(value: &MetaValue<'_>) -> String {
    match value {
        MetaValue::U64(v) => v.to_string(),
        MetaValue::I64(v) => v.to_string(),
        MetaValue::F64(v) => format!("{v:?}"),
        MetaValue::Bool(v) => v.to_string(),
        MetaValue::String(s) => crate::text::quoted(s),
        MetaValue::Bytes(b) if b.len() <= 32 => format!("0x{}", hex(b)),
        MetaValue::Bytes(b) => format!("0x{}… ({} bytes)", hex(b.get(..32).unwrap_or(b)), b.len()),
        MetaValue::U64Array(a) => list(a.iter().map(|v| v.get())),
        MetaValue::I64Array(a) => list(a.iter().map(|v| v.get())),
        MetaValue::F64Array(a) => list(a.iter().map(|v| format!("{:?}", v.get()))),
        MetaValue::StringArray(items) => {
            let shown: Vec<String> = (*items).take(SHOWN_ITEMS + 1).map(crate::text::quoted).collect();
            list_of(shown, (*items).count())
        }
        MetaValue::U8(v) => v.to_string(),
        MetaValue::I8(v) => v.to_string(),
        MetaValue::U16(v) => v.to_string(),
        MetaValue::I16(v) => v.to_string(),
        MetaValue::U32(v) => v.to_string(),
        MetaValue::I32(v) => v.to_string(),
        MetaValue::F32(v) => format!("{v:?}"),
        MetaValue::U8Array(a) => list(a.iter()),
        MetaValue::I8Array(a) => list(a.iter()),
        MetaValue::U16Array(a) => list(a.iter().map(|v| v.get())),
        MetaValue::I16Array(a) => list(a.iter().map(|v| v.get())),
        MetaValue::U32Array(a) => list(a.iter().map(|v| v.get())),
        MetaValue::I32Array(a) => list(a.iter().map(|v| v.get())),
        MetaValue::F32Array(a) => list(a.iter().map(|v| format!("{:?}", v.get()))),
        MetaValue::BoolArray(a) => list(a.iter()),
        MetaValue::ArrayArray(items) => {
            // Each item's text is itself cut to SHOWN_ITEMS items, so the line stays bounded at any depth.
            let shown: Vec<String> = (*items)
                .take(SHOWN_ITEMS + 1)
                .map(|item| format!("{} {}", item.value_type(), meta_value_text(&item)))
                .collect();
            list_of(shown, (*items).count())
        }
        MetaValue::Unknown { bytes, .. } => {
            format!("{} bytes of a type this tool does not know", bytes.len())
        }
        _ => "a value this tool does not know".to_owned(),
    }
}

/// A dtype's name with its block geometry when it has blocks: `Q4_K (256 elements / 144 bytes per block)`.
#[must_use]
pub fn dtype_with_geometry(dtype: Dtype) -> String {
    match dtype.packing() {
        Some(Packing::Block { block_elems, block_bytes }) => {
            format!("{dtype} ({block_elems} elements / {block_bytes} bytes per block)")
        }
        _ => dtype_name(dtype),
    }
}

/// A block dtype's geometry as JSON, `{"elements": 256, "bytes": 144}`; `None` for other dtypes.
#[must_use]
pub fn block_json(dtype: Dtype) -> Option<Value> {
    match dtype.packing() {
        Some(Packing::Block { block_elems, block_bytes }) => {
            Some(json!({"elements": block_elems, "bytes": block_bytes}))
        }
        _ => None,
    }
}

/// A metadata type name for text output.
#[must_use]
pub fn meta_type_text(value: &MetaValue<'_>) -> String {
    value.value_type().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpack::zerocopy::little_endian::F32;
    use tpack::{ArrayArray, StringArray};

    /// Strings inside arrays of arrays are escaped as every other string; each item is named by its type.
    #[test]
    fn nested_values_are_shown_with_their_types_and_escaped() {
        let strings = ["\u{1b}[2J", "\u{202e}x"];
        let items = [MetaValue::StringArray(StringArray::new(&strings)), MetaValue::BoolArray(&[true])];
        let text = meta_value_text(&MetaValue::ArrayArray(ArrayArray::new(&items)));
        assert_eq!(text, r#"[string[] ["\u{1b}[2J", "\u{202e}x"], bool[] [true]]"#);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
        let f = [F32::new(f32::from_bits(0x7f80_0001)), F32::new(0.1)];
        assert_eq!(meta_value_json(&MetaValue::F32Array(&f)), json!(["7f800001", "3dcccccd"]));
        assert_eq!(meta_value_text(&MetaValue::F32(0.1)), "0.1");
        assert_eq!(dtype_with_geometry(Dtype::Q4_K), "Q4_K (256 elements / 144 bytes per block)");
        assert_eq!(dtype_with_geometry(Dtype::F32), "F32");
        assert_eq!(block_json(Dtype::NVFP4), Some(json!({"elements": 64, "bytes": 36})));
    }
}
