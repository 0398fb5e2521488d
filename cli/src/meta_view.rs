//! [`MetaView`]: a metadata value seen one level at a time, whatever it was read from (a tpack container, a
//! GGUF file, or a value an importer owns, whose core view reads its encoding lazily), so that it can be shown without being built: an array is an iterator over the
//! bytes it was read from, and a renderer that stops after the items it shows reads no further.
//!
//! Rejected: converting every value to one owned tree first. A valid 8 MB container holding one `array[]` of
//! a million empty arrays then took 743 MiB to print 2.7 KB of text (issue 22).

use tpack::format::MetaType;
use tpack::MetaValue;
use tpack_gguf::GgufValue;

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
