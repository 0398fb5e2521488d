//! Metadata → JSON: the canonical decoding of spec §13, with two differences. An f64 is a JSON number when it
//! is finite (the shortest text that reads back as the same bits) and `{"f64_bits": "<16 hex digits>"}` when
//! it is NaN or ±∞, where §13 writes the hex digits of every f64. An f32 is written as §13 writes it (its 8
//! hex digits) in a manifest, which must give back every bit, and like an f64 in `inspect --json`
//! ([`F32Form`]). The conformance reader (`examples/conformance_reader.rs`) keeps §13's hex.
//!
//! Values are walked lazily ([`MetaView`]) and cut while they are walked ([`Limit`]): rendering a value of a
//! million items with a limit of 32 reads 32 of them (and counts the rest), at every level of an `array[]`.

use serde_json::{json, Map, Value};
use tpack::format::MetaType;
use tpack::MetaValue;

use crate::meta_view::{Level, MetaView};

/// How much of a value to render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// Every item, at every level.
    Whole,
    /// At most this many items of each array (at every level) and bytes of a `bytes` value.
    Items(usize),
}

/// How an f32 is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum F32Form {
    /// Spec §13: the 8 lowercase hex digits of its bits, so that every f32 reads back exactly.
    Hex,
    /// As an f64 is: a number when finite (the shortest decimal that reads back as the same f32), else
    /// `{"f32_bits": "<8 hex digits>"}`.
    Number,
}

/// How values are rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Style {
    /// How much of each value.
    pub(crate) limit: Limit,
    /// How f32s are written.
    pub(crate) f32: F32Form,
}

impl Style {
    /// Everything, f32s as hex: what a manifest holds, so that `pack` gives back every bit.
    pub(crate) const EXACT: Style = Style { limit: Limit::Whole, f32: F32Form::Hex };
}

/// The key of the object that holds the bit pattern of an f64 JSON has no number for.
pub(crate) const F64_BITS_KEY: &str = "f64_bits";

/// The key of the object that holds the bit pattern of an f32 JSON has no number for.
pub(crate) const F32_BITS_KEY: &str = "f32_bits";

/// An f64 that JSON has no number for (NaN, ±∞) as `{"f64_bits": "<16 lowercase hex digits>"}`, every bit
/// of it, payload and sign included.
#[must_use]
pub(crate) fn f64_bits(v: f64) -> Value {
    json!({ F64_BITS_KEY: format!("{:016x}", v.to_bits()) })
}

/// An f64 as the tool's JSON writes it: a number when finite, which serde_json writes in the shortest form
/// that parses back to the same bits (−0 as `-0.0`); otherwise [`f64_bits`].
#[must_use]
pub(crate) fn f64_json(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or_else(|| f64_bits(v), Value::Number)
}

/// An f32 as spec §13 writes it: the 8 lowercase hex digits of its bit pattern.
#[must_use]
pub(crate) fn f32_hex(v: f32) -> String {
    format!("{:08x}", v.to_bits())
}

/// An f32 in `form`. As a number it is the shortest decimal that reads back as the same f32 (`0.1`, not the
/// f64 `0.10000000149011612`); NaN and ±∞ keep every bit in `{"f32_bits": …}`.
#[must_use]
pub(crate) fn f32_json(v: f32, form: F32Form) -> Value {
    match form {
        F32Form::Hex => json!(f32_hex(v)),
        F32Form::Number => format!("{v:?}")
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| json!({ F32_BITS_KEY: f32_hex(v) }), Value::Number),
    }
}

/// The name of a metadata type, or its code for a type from a newer minor version.
#[must_use]
pub(crate) fn type_json(t: MetaType) -> Value {
    t.name().map_or_else(|| json!(t.code()), |n| json!(n))
}

/// A value rendered in a [`Style`].
#[derive(Debug)]
pub(crate) struct Rendered {
    /// The JSON of the value, cut to the style's limit.
    pub(crate) value: Value,
    /// The value's whole length (items, or bytes of a `bytes` value) when it was cut.
    pub(crate) cut_from: Option<usize>,
    /// How many values were cut, this one and the items of an `array[]` at every level.
    pub(crate) cuts: usize,
}

/// A metadata value as JSON (see the module documentation), walking only what `style` keeps.
#[must_use]
pub(crate) fn value<'a, V: MetaView<'a>>(v: V, style: Style) -> Rendered {
    let is_array_array = v.value_type() == MetaType::ARRAY_ARRAY;
    match v.level() {
        Level::Leaf(leaf) => leaf_json(&leaf, style),
        Level::Array { len, items } => {
            let keep = match style.limit {
                Limit::Whole => len,
                Limit::Items(n) => n.min(len),
            };
            let mut cuts = 0usize;
            let values = items
                .take(keep)
                .map(|item| {
                    if is_array_array {
                        let (object, item_cuts) = holder(None, item, style);
                        cuts = cuts.saturating_add(item_cuts);
                        object
                    } else {
                        value(item, style).value
                    }
                })
                .collect();
            let cut_from = (keep < len).then_some(len);
            Rendered {
                value: Value::Array(values),
                cut_from,
                cuts: cuts.saturating_add(usize::from(keep < len)),
            }
        }
    }
}

/// A record `{"key", "type", "value"}` (or, without a key, an `array[]` item `{"type", "value"}`), marked
/// `"elided": true` with the whole length in `"count"` when its value was cut; with how many values were cut.
#[must_use]
pub(crate) fn holder<'a, V: MetaView<'a>>(key: Option<&str>, v: V, style: Style) -> (Value, usize) {
    let mut object = Map::new();
    if let Some(key) = key {
        object.insert("key".into(), json!(key));
    }
    object.insert("type".into(), type_json(v.value_type()));
    let rendered = value(v, style);
    object.insert("value".into(), rendered.value);
    if let Some(count) = rendered.cut_from {
        object.insert("elided".into(), json!(true));
        object.insert("count".into(), json!(count));
    }
    (Value::Object(object), rendered.cuts)
}

/// A value that is no array.
fn leaf_json(v: &MetaValue<'_>, style: Style) -> Rendered {
    let whole = |value| Rendered { value, cut_from: None, cuts: 0 };
    match *v {
        MetaValue::U64(x) => whole(json!(x)),
        MetaValue::I64(x) => whole(json!(x)),
        MetaValue::F64(x) => whole(f64_json(x)),
        MetaValue::Bool(x) => whole(json!(x)),
        MetaValue::String(s) => whole(json!(s)),
        MetaValue::U8(x) => whole(json!(x)),
        MetaValue::I8(x) => whole(json!(x)),
        MetaValue::U16(x) => whole(json!(x)),
        MetaValue::I16(x) => whole(json!(x)),
        MetaValue::U32(x) => whole(json!(x)),
        MetaValue::I32(x) => whole(json!(x)),
        MetaValue::F32(x) => whole(f32_json(x, style.f32)),
        MetaValue::Bytes(b) | MetaValue::Unknown { bytes: b, .. } => {
            let keep = match style.limit {
                Limit::Whole => b.len(),
                Limit::Items(n) => n.min(b.len()),
            };
            let cut = keep < b.len();
            Rendered {
                value: json!(hex::encode(b.get(..keep).unwrap_or(b))),
                cut_from: cut.then_some(b.len()),
                cuts: usize::from(cut),
            }
        }
        // An array never reaches here (`MetaView::level` gives its items); a variant added to the
        // non-exhaustive `MetaValue` later is shown as null until this tool knows it.
        _ => whole(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpack::zerocopy::little_endian::F32;
    use tpack::{ArrayArray, StringArray};

    const SHOWN: Style = Style { limit: Limit::Items(2), f32: F32Form::Number };

    #[test]
    fn f32s_are_numbers_for_people_and_bits_for_manifests() {
        assert_eq!(f32_json(0.1, F32Form::Number).to_string(), "0.1");
        assert_eq!(f32_json(500_000.0, F32Form::Number).to_string(), "500000.0");
        assert_eq!(f32_json(-0.0, F32Form::Number).to_string(), "-0.0");
        assert_eq!(f32_json(f32::from_bits(0x7f80_0001), F32Form::Number), json!({"f32_bits": "7f800001"}));
        assert_eq!(f32_json(f32::NEG_INFINITY, F32Form::Number), json!({"f32_bits": "ff800000"}));
        assert_eq!(f32_json(0.1, F32Form::Hex), json!("3dcccccd"));
        let f = [F32::new(f32::from_bits(0x7f80_0001)), F32::new(0.1)];
        assert_eq!(value(MetaValue::F32Array(&f), Style::EXACT).value, json!(["7f800001", "3dcccccd"]));
        assert_eq!(value(MetaValue::F32Array(&f), SHOWN).value, json!([{"f32_bits": "7f800001"}, 0.1]));
    }

    #[test]
    fn values_are_cut_at_every_level_and_the_cuts_counted() {
        let strings = ["a", "b", "c"];
        let inner = [MetaValue::U8Array(&[1, 2, 3]), MetaValue::U8Array(&[4])];
        let items = [
            MetaValue::StringArray(StringArray::new(&strings)),
            MetaValue::ArrayArray(ArrayArray::new(&inner)),
            MetaValue::BoolArray(&[true]),
        ];
        let (record, cuts) = holder(Some("k"), MetaValue::ArrayArray(ArrayArray::new(&items)), SHOWN);
        assert_eq!(
            record,
            json!({"key": "k", "type": "array[]", "elided": true, "count": 3, "value": [
                {"type": "string[]", "value": ["a", "b"], "elided": true, "count": 3},
                {"type": "array[]", "value": [
                    {"type": "u8[]", "value": [1, 2], "elided": true, "count": 3},
                    {"type": "u8[]", "value": [4]},
                ]},
            ]})
        );
        assert_eq!(cuts, 3);
        let whole = holder(None, MetaValue::ArrayArray(ArrayArray::new(&items)), Style::EXACT);
        assert_eq!(whole.1, 0);
        assert_eq!(whole.0["value"][2], json!({"type": "bool[]", "value": [true]}));
        let bytes = value(MetaValue::Bytes(&[0xab, 0xcd, 0xef]), SHOWN);
        assert_eq!((bytes.value, bytes.cut_from, bytes.cuts), (json!("abcd"), Some(3), 1));
    }
}
