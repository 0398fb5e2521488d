//! [`MetaView`]: a metadata value seen one level at a time, whatever it was read from (a tpack container, a
//! GGUF file, a manifest), so that it can be shown without being built: an array is an iterator over the
//! bytes it was read from, and a renderer that stops after the items it shows reads no further.
//!
//! Rejected: converting every value to one owned tree first. A valid 8 MB container holding one `array[]` of
//! a million empty arrays then took 743 MiB to print 2.7 KB of text (issue 22).

use tpack::format::MetaType;
use tpack::MetaValue;
use tpack_gguf::GgufValue;

use crate::owned_value::OwnedValue;

/// A metadata value that can be walked level by level.
pub(crate) trait MetaView<'a>: Sized + 'a {
    /// The value's type in tpack's terms (spec §7.1).
    fn value_type(&self) -> MetaType;

    /// What the value holds at this level.
    fn level(self) -> Level<'a, Self>;
}

/// One level of a [`MetaView`].
pub(crate) enum Level<'a, V> {
    /// A value that is not an array (a number, `bool`, `string`, `bytes`, or a type this tool does not
    /// know), as the core's [`MetaValue`], which borrows it.
    Leaf(MetaValue<'a>),
    /// An array: how many items it has, and the items in order, each a view (a scalar for the elements of a
    /// numeric or `string[]` array, an array for the items of an `array[]`). Counting may walk the array
    /// once more; it takes no memory.
    Array {
        /// The number of items.
        len: usize,
        /// The items, read as they are reached.
        items: Box<dyn Iterator<Item = V> + 'a>,
    },
}

/// The items of `slice` as views, each made by `item`.
fn array<'a, T: Copy + 'a, V>(slice: &'a [T], item: impl Fn(T) -> V + 'a) -> Level<'a, V> {
    Level::Array { len: slice.len(), items: Box::new(slice.iter().map(move |&x| item(x))) }
}

impl<'a> MetaView<'a> for MetaValue<'a> {
    fn value_type(&self) -> MetaType {
        MetaValue::value_type(self)
    }

    fn level(self) -> Level<'a, Self> {
        match self {
            MetaValue::U64Array(a) => array(a, |v| MetaValue::U64(v.get())),
            MetaValue::I64Array(a) => array(a, |v| MetaValue::I64(v.get())),
            MetaValue::F64Array(a) => array(a, |v| MetaValue::F64(v.get())),
            MetaValue::U8Array(a) => array(a, MetaValue::U8),
            MetaValue::I8Array(a) => array(a, MetaValue::I8),
            MetaValue::U16Array(a) => array(a, |v| MetaValue::U16(v.get())),
            MetaValue::I16Array(a) => array(a, |v| MetaValue::I16(v.get())),
            MetaValue::U32Array(a) => array(a, |v| MetaValue::U32(v.get())),
            MetaValue::I32Array(a) => array(a, |v| MetaValue::I32(v.get())),
            MetaValue::F32Array(a) => array(a, |v| MetaValue::F32(v.get())),
            MetaValue::BoolArray(a) => array(a, MetaValue::Bool),
            // Both iterators are `Copy` views of the pool: counting walks a copy.
            MetaValue::StringArray(items) => {
                Level::Array { len: items.count(), items: Box::new(items.map(MetaValue::String)) }
            }
            MetaValue::ArrayArray(items) => Level::Array { len: items.count(), items: Box::new(items) },
            leaf => Level::Leaf(leaf),
        }
    }
}

/// The tpack type of a GGUF array with elements named `element` (gguf.md's names), one to one.
fn gguf_array_type(element: &str) -> MetaType {
    match element {
        "uint8" => MetaType::U8_ARRAY,
        "int8" => MetaType::I8_ARRAY,
        "uint16" => MetaType::U16_ARRAY,
        "int16" => MetaType::I16_ARRAY,
        "uint32" => MetaType::U32_ARRAY,
        "int32" => MetaType::I32_ARRAY,
        "float32" => MetaType::F32_ARRAY,
        "bool" => MetaType::BOOL_ARRAY,
        "string" => MetaType::STRING_ARRAY,
        "uint64" => MetaType::U64_ARRAY,
        "int64" => MetaType::I64_ARRAY,
        "float64" => MetaType::F64_ARRAY,
        _ => MetaType::ARRAY_ARRAY,
    }
}

/// A GGUF value as tpack stores it: `uint8` → `u8`, `float32` → `f32`, an array of arrays → `array[]`, as
/// `tpack convert` converts it.
impl<'a> MetaView<'a> for GgufValue<'a> {
    fn value_type(&self) -> MetaType {
        match self {
            GgufValue::Array(a) => gguf_array_type(a.element_type_name()),
            scalar => gguf_scalar(scalar).value_type(),
        }
    }

    fn level(self) -> Level<'a, Self> {
        match self {
            GgufValue::Array(a) => Level::Array { len: a.len(), items: Box::new(a.iter()) },
            scalar => Level::Leaf(gguf_scalar(&scalar)),
        }
    }
}

/// A GGUF scalar as the tpack scalar of the same type (an array, which is none, as an empty `array[]`).
fn gguf_scalar<'a>(v: &GgufValue<'a>) -> MetaValue<'a> {
    match *v {
        GgufValue::U8(x) => MetaValue::U8(x),
        GgufValue::I8(x) => MetaValue::I8(x),
        GgufValue::U16(x) => MetaValue::U16(x),
        GgufValue::I16(x) => MetaValue::I16(x),
        GgufValue::U32(x) => MetaValue::U32(x),
        GgufValue::I32(x) => MetaValue::I32(x),
        GgufValue::F32(x) => MetaValue::F32(x),
        GgufValue::Bool(x) => MetaValue::Bool(x),
        GgufValue::String(s) => MetaValue::String(s),
        GgufValue::U64(x) => MetaValue::U64(x),
        GgufValue::I64(x) => MetaValue::I64(x),
        GgufValue::F64(x) => MetaValue::F64(x),
        GgufValue::Array(_) => MetaValue::ArrayArray(tpack::ArrayArray::new(&[])),
    }
}

/// A value the tool owns (read from a foreign file), seen in place: the value itself, or an element of one of
/// its arrays.
#[derive(Clone, Copy)]
pub(crate) enum OwnedView<'a> {
    /// A whole value, or an item of an `array[]`.
    Value(&'a OwnedValue),
    /// An element of a numeric or `string[]` array.
    Element(MetaValue<'a>),
}

impl<'a> MetaView<'a> for OwnedView<'a> {
    fn value_type(&self) -> MetaType {
        match self {
            OwnedView::Value(v) => owned_type(v),
            OwnedView::Element(e) => e.value_type(),
        }
    }

    fn level(self) -> Level<'a, Self> {
        let element = OwnedView::Element;
        let value = match self {
            OwnedView::Element(e) => return Level::Leaf(e),
            OwnedView::Value(v) => v,
        };
        match value {
            OwnedValue::U64Array(a) => array(a, move |x| element(MetaValue::U64(x))),
            OwnedValue::I64Array(a) => array(a, move |x| element(MetaValue::I64(x))),
            OwnedValue::F64Array(a) => array(a, move |x| element(MetaValue::F64(x))),
            OwnedValue::StringArray(a) => Level::Array {
                len: a.len(),
                items: Box::new(a.iter().map(move |s| element(MetaValue::String(s)))),
            },
            OwnedValue::U8Array(a) => array(a, move |x| element(MetaValue::U8(x))),
            OwnedValue::I8Array(a) => array(a, move |x| element(MetaValue::I8(x))),
            OwnedValue::U16Array(a) => array(a, move |x| element(MetaValue::U16(x))),
            OwnedValue::I16Array(a) => array(a, move |x| element(MetaValue::I16(x))),
            OwnedValue::U32Array(a) => array(a, move |x| element(MetaValue::U32(x))),
            OwnedValue::I32Array(a) => array(a, move |x| element(MetaValue::I32(x))),
            OwnedValue::F32Array(a) => array(a, move |x| element(MetaValue::F32(x))),
            OwnedValue::BoolArray(a) => array(a, move |x| element(MetaValue::Bool(x))),
            OwnedValue::ArrayArray(items) => {
                Level::Array { len: items.len(), items: Box::new(items.iter().map(OwnedView::Value)) }
            }
            OwnedValue::U64(x) => Level::Leaf(MetaValue::U64(*x)),
            OwnedValue::I64(x) => Level::Leaf(MetaValue::I64(*x)),
            OwnedValue::F64(x) => Level::Leaf(MetaValue::F64(*x)),
            OwnedValue::Bool(x) => Level::Leaf(MetaValue::Bool(*x)),
            OwnedValue::String(s) => Level::Leaf(MetaValue::String(s)),
            OwnedValue::Bytes(b) => Level::Leaf(MetaValue::Bytes(b)),
            OwnedValue::U8(x) => Level::Leaf(MetaValue::U8(*x)),
            OwnedValue::I8(x) => Level::Leaf(MetaValue::I8(*x)),
            OwnedValue::U16(x) => Level::Leaf(MetaValue::U16(*x)),
            OwnedValue::I16(x) => Level::Leaf(MetaValue::I16(*x)),
            OwnedValue::U32(x) => Level::Leaf(MetaValue::U32(*x)),
            OwnedValue::I32(x) => Level::Leaf(MetaValue::I32(*x)),
            OwnedValue::F32(x) => Level::Leaf(MetaValue::F32(*x)),
        }
    }
}

/// The type of an owned value (without building its view, which for an `array[]` copies every level).
fn owned_type(v: &OwnedValue) -> MetaType {
    match v {
        OwnedValue::U64(_) => MetaType::U64,
        OwnedValue::I64(_) => MetaType::I64,
        OwnedValue::F64(_) => MetaType::F64,
        OwnedValue::Bool(_) => MetaType::BOOL,
        OwnedValue::String(_) => MetaType::STRING,
        OwnedValue::Bytes(_) => MetaType::BYTES,
        OwnedValue::U64Array(_) => MetaType::U64_ARRAY,
        OwnedValue::I64Array(_) => MetaType::I64_ARRAY,
        OwnedValue::F64Array(_) => MetaType::F64_ARRAY,
        OwnedValue::StringArray(_) => MetaType::STRING_ARRAY,
        OwnedValue::U8(_) => MetaType::U8,
        OwnedValue::I8(_) => MetaType::I8,
        OwnedValue::U16(_) => MetaType::U16,
        OwnedValue::I16(_) => MetaType::I16,
        OwnedValue::U32(_) => MetaType::U32,
        OwnedValue::I32(_) => MetaType::I32,
        OwnedValue::F32(_) => MetaType::F32,
        OwnedValue::U8Array(_) => MetaType::U8_ARRAY,
        OwnedValue::I8Array(_) => MetaType::I8_ARRAY,
        OwnedValue::U16Array(_) => MetaType::U16_ARRAY,
        OwnedValue::I16Array(_) => MetaType::I16_ARRAY,
        OwnedValue::U32Array(_) => MetaType::U32_ARRAY,
        OwnedValue::I32Array(_) => MetaType::I32_ARRAY,
        OwnedValue::F32Array(_) => MetaType::F32_ARRAY,
        OwnedValue::BoolArray(_) => MetaType::BOOL_ARRAY,
        OwnedValue::ArrayArray(_) => MetaType::ARRAY_ARRAY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata_json::render::{self, Style};

    /// An owned value seen in place walks as the core's view of it does, at every level.
    #[test]
    fn owned_values_walk_as_their_core_views() {
        let values = [
            OwnedValue::ArrayArray(vec![
                OwnedValue::U8Array(vec![1, 2]),
                OwnedValue::ArrayArray(vec![
                    OwnedValue::StringArray(vec!["x".into()]),
                    OwnedValue::BoolArray(vec![]),
                ]),
                OwnedValue::F32Array(vec![f32::from_bits(0x7f80_0001), 0.5]),
                OwnedValue::I64Array(vec![-1]),
            ]),
            OwnedValue::F64(f64::NAN),
            OwnedValue::Bytes(vec![0xab; 40]),
            OwnedValue::String("s".into()),
        ];
        for style in [Style::EXACT, Style { limit: render::Limit::Items(1), f32: render::F32Form::Number }] {
            for v in &values {
                let owned = render::holder(None, OwnedView::Value(v), style);
                let core = v.with_value(|m| render::holder(None, m, style));
                assert_eq!(owned, core, "{v:?}");
            }
        }
    }
}
