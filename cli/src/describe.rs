//! Dtypes and metadata values in words, for people (their JSON is [`crate::metadata_json::render`]'s).

use serde_json::{json, Value};
use tpack::format::MetaType;
use tpack::{Dtype, MetaValue, Packing};

use crate::meta_view::{Level, MetaView};

/// The spec's name of a dtype, or `dtype N` for one from a newer minor version (its `Display`).
#[must_use]
pub fn dtype_name(dtype: Dtype) -> String {
    dtype.to_string()
}

/// Items shown before an array is cut short in text output.
const SHOWN_ITEMS: usize = 8;

/// Bytes shown of a `bytes` value in text output.
const SHOWN_BYTES: usize = 32;

/// The most bytes of text a value is rendered to; a longer one is cut there and ends with `…`. Four bytes
/// per column of a 100-column line: no line shows more, and rendering stops here, so a value of a million
/// items costs what its first line does.
pub const TEXT_BUDGET: usize = 400;

/// A metadata value in words: numbers as numbers (an f32 as the shortest decimal that reads back as it),
/// strings quoted and escaped, arrays cut to their first [`SHOWN_ITEMS`] items with how many more there are,
/// the items of an `array[]` each with its type; at most [`TEXT_BUDGET`] bytes, at any depth.
#[must_use]
pub fn meta_value_text<'a, V: MetaView<'a>>(value: V) -> String {
    let mut out = Budget { text: String::new(), full: false };
    write_value(&mut out, value);
    if out.full {
        out.text.push('…');
    }
    out.text
}

/// Text that stops growing at [`TEXT_BUDGET`] bytes.
struct Budget {
    text: String,
    full: bool,
}

impl Budget {
    fn push(&mut self, s: &str) {
        if self.full {
            return;
        }
        let room = TEXT_BUDGET.saturating_sub(self.text.len());
        if s.len() <= room {
            self.text.push_str(s);
        } else {
            self.text.push_str(prefix(s, room));
            self.full = true;
        }
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn prefix(s: &str, max: usize) -> &str {
    let end = (0..=max.min(s.len())).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
    s.get(..end).unwrap_or_default()
}

fn write_value<'a, V: MetaView<'a>>(out: &mut Budget, value: V) {
    let typed_items = value.value_type() == MetaType::ARRAY_ARRAY;
    match value.level() {
        Level::Leaf(leaf) => out.push(&leaf_text(&leaf)),
        Level::Array { len, items } => {
            out.push("[");
            for (i, item) in items.take(SHOWN_ITEMS).enumerate() {
                if out.full {
                    return;
                }
                if i > 0 {
                    out.push(", ");
                }
                if typed_items {
                    out.push(&format!("{} ", item.value_type()));
                }
                write_value(out, item);
            }
            if len > SHOWN_ITEMS {
                out.push(&format!(", … {} more", len - SHOWN_ITEMS));
            }
            out.push("]");
        }
    }
}

/// A value that is no array in words; a string is quoted from at most [`TEXT_BUDGET`] bytes of it.
fn leaf_text(value: &MetaValue<'_>) -> String {
    match *value {
        MetaValue::U64(v) => v.to_string(),
        MetaValue::I64(v) => v.to_string(),
        MetaValue::F64(v) => format!("{v:?}"),
        MetaValue::Bool(v) => v.to_string(),
        MetaValue::String(s) => crate::text::quoted(prefix(s, TEXT_BUDGET)),
        MetaValue::Bytes(b) if b.len() <= SHOWN_BYTES => format!("0x{}", hex::encode(b)),
        MetaValue::Bytes(b) => {
            format!("0x{}… ({} bytes)", hex::encode(b.get(..SHOWN_BYTES).unwrap_or(b)), b.len())
        }
        MetaValue::U8(v) => v.to_string(),
        MetaValue::I8(v) => v.to_string(),
        MetaValue::U16(v) => v.to_string(),
        MetaValue::I16(v) => v.to_string(),
        MetaValue::U32(v) => v.to_string(),
        MetaValue::I32(v) => v.to_string(),
        MetaValue::F32(v) => format!("{v:?}"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tpack::{ArrayArray, StringArray};

    /// Strings inside arrays of arrays are escaped as every other string; each item is named by its type.
    #[test]
    fn nested_values_are_shown_with_their_types_and_escaped() {
        let strings = ["\u{1b}[2J", "\u{202e}x"];
        let items = [MetaValue::StringArray(StringArray::new(&strings)), MetaValue::BoolArray(&[true])];
        let text = meta_value_text(MetaValue::ArrayArray(ArrayArray::new(&items)));
        assert_eq!(text, r#"[string[] ["\u{1b}[2J", "\u{202e}x"], bool[] [true]]"#);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
        assert_eq!(meta_value_text(MetaValue::F32(0.1)), "0.1");
        assert_eq!(dtype_with_geometry(Dtype::Q4_K), "Q4_K (256 elements / 144 bytes per block)");
        assert_eq!(dtype_with_geometry(Dtype::F32), "F32");
        assert_eq!(block_json(Dtype::NVFP4), Some(json!({"elements": 64, "bytes": 36})));
    }

    /// A value far longer than a line is rendered to the budget and cut there, at any depth.
    #[test]
    fn long_values_stop_at_the_budget() {
        let long = "x".repeat(10 * TEXT_BUDGET);
        let text = meta_value_text(MetaValue::String(&long));
        assert!(text.len() <= TEXT_BUDGET + '…'.len_utf8() && text.ends_with('…'), "{}", text.len());
        let many = vec![MetaValue::U8Array(&[1, 2, 3, 4, 5, 6, 7, 8, 9]); 20];
        let outer = [MetaValue::ArrayArray(ArrayArray::new(&many))];
        let text = meta_value_text(MetaValue::ArrayArray(ArrayArray::new(&outer)));
        assert!(text.starts_with("[array[] [u8[] [1, 2, 3, 4, 5, 6, 7, 8, … 1 more], u8[] [1,"), "{text}");
        assert!(text.contains("… 12 more]]"), "{text}");
        assert_eq!(meta_value_text(MetaValue::U16Array(&[])), "[]");
    }
}
