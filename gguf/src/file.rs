//! What [`crate::parse`] returns: the file, its metadata values and its tensors, borrowing from the input.

use alloc::vec::Vec;

use crate::format::{
    value_type_name, GgmlType, T_ARRAY, T_BOOL, T_F32, T_F64, T_I16, T_I32, T_I64, T_I8, T_STRING, T_U16,
    T_U32, T_U64, T_U8,
};

/// A parsed GGUF file, borrowing its strings and tensor data from the input.
///
/// Made by [`crate::parse`] only (`#[non_exhaustive]`): its fields describe a validated file, and a field
/// added for a later GGUF version is not a breaking change.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Gguf<'a> {
    /// The format version: 2 or 3.
    pub version: u32,
    /// The alignment of the data section and of every tensor offset: `general.alignment`, or 32.
    pub alignment: u64,
    /// The metadata in file order; keys are unique and nonempty.
    pub metadata: Vec<(&'a str, GgufValue<'a>)>,
    /// The tensors in file order (not necessarily data order); names are unique and nonempty.
    pub tensors: Vec<GgufTensor<'a>>,
    /// Whether every number in the file, tensor elements included, is big-endian (gguf-py's
    /// `GGUFWriter(endianess=BIG)`). Metadata values here are already converted; tensor `data` is as stored.
    pub big_endian: bool,
    /// The absolute file offset of the data section: the end of the tensor infos rounded up to `alignment`.
    /// With no tensors the file may end before it (ggml does not require that padding).
    pub data_offset: u64,
}

impl<'a> Gguf<'a> {
    /// The value of metadata key `key`, if present.
    pub fn get(&self, key: &str) -> Option<&GgufValue<'a>> {
        self.metadata.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The tensor named `name`, if present.
    pub fn tensor(&self, name: &str) -> Option<&GgufTensor<'a>> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

/// One metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum GgufValue<'a> {
    /// A `uint8`.
    U8(u8),
    /// A `int8`.
    I8(i8),
    /// A `uint16`.
    U16(u16),
    /// A `int16`.
    I16(i16),
    /// A `uint32`.
    U32(u32),
    /// A `int32`.
    I32(i32),
    /// A `float32`.
    F32(f32),
    /// A `bool`, stored as one byte that is 0 or 1.
    Bool(bool),
    /// A `string`: UTF-8, borrowed from the input.
    String(&'a str),
    /// A `uint64`.
    U64(u64),
    /// A `int64`.
    I64(i64),
    /// A `float64`.
    F64(f64),
    /// An `array`.
    Array(GgufArray<'a>),
}

impl GgufValue<'_> {
    /// The GGUF name of this value's type, as in gguf.md (`"uint32"`, `"string"`, `"array"`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            GgufValue::U8(_) => "uint8",
            GgufValue::I8(_) => "int8",
            GgufValue::U16(_) => "uint16",
            GgufValue::I16(_) => "int16",
            GgufValue::U32(_) => "uint32",
            GgufValue::I32(_) => "int32",
            GgufValue::F32(_) => "float32",
            GgufValue::Bool(_) => "bool",
            GgufValue::String(_) => "string",
            GgufValue::U64(_) => "uint64",
            GgufValue::I64(_) => "int64",
            GgufValue::F64(_) => "float64",
            GgufValue::Array(_) => "array",
        }
    }
}

/// One metadata array: all its elements have one type. Elements of an array of arrays each carry their own
/// element type and length.
#[derive(Debug, Clone, PartialEq)]
pub enum GgufArray<'a> {
    /// `uint8` elements.
    U8(Vec<u8>),
    /// `int8` elements.
    I8(Vec<i8>),
    /// `uint16` elements.
    U16(Vec<u16>),
    /// `int16` elements.
    I16(Vec<i16>),
    /// `uint32` elements.
    U32(Vec<u32>),
    /// `int32` elements.
    I32(Vec<i32>),
    /// `float32` elements.
    F32(Vec<f32>),
    /// `bool` elements.
    Bool(Vec<bool>),
    /// `string` elements, borrowed from the input.
    String(Vec<&'a str>),
    /// `uint64` elements.
    U64(Vec<u64>),
    /// `int64` elements.
    I64(Vec<i64>),
    /// `float64` elements.
    F64(Vec<f64>),
    /// Arrays, each with its own element type and length.
    Array(Vec<GgufArray<'a>>),
}

impl GgufArray<'_> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            GgufArray::U8(v) => v.len(),
            GgufArray::I8(v) => v.len(),
            GgufArray::U16(v) => v.len(),
            GgufArray::I16(v) => v.len(),
            GgufArray::U32(v) => v.len(),
            GgufArray::I32(v) => v.len(),
            GgufArray::F32(v) => v.len(),
            GgufArray::Bool(v) => v.len(),
            GgufArray::String(v) => v.len(),
            GgufArray::U64(v) => v.len(),
            GgufArray::I64(v) => v.len(),
            GgufArray::F64(v) => v.len(),
            GgufArray::Array(v) => v.len(),
        }
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The GGUF name of the element type (`"uint32"`, `"string"`, `"array"`, ...).
    pub fn element_type_name(&self) -> &'static str {
        let code = match self {
            GgufArray::U8(_) => T_U8,
            GgufArray::I8(_) => T_I8,
            GgufArray::U16(_) => T_U16,
            GgufArray::I16(_) => T_I16,
            GgufArray::U32(_) => T_U32,
            GgufArray::I32(_) => T_I32,
            GgufArray::F32(_) => T_F32,
            GgufArray::Bool(_) => T_BOOL,
            GgufArray::String(_) => T_STRING,
            GgufArray::U64(_) => T_U64,
            GgufArray::I64(_) => T_I64,
            GgufArray::F64(_) => T_F64,
            GgufArray::Array(_) => T_ARRAY,
        };
        value_type_name(code).unwrap_or("array")
    }
}

/// One tensor: its info and its bytes. Made by [`crate::parse`] only (`#[non_exhaustive]`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GgufTensor<'a> {
    /// The name: unique in the file and nonempty.
    pub name: &'a str,
    /// The shape in GGUF order: `ne[0]`, the innermost (contiguous) dimension, first. 1 to 4 entries, each at
    /// most `i64::MAX`; `ne[0]` is a multiple of the type's block size. A reversed `dims` is the row-major
    /// (numpy) shape.
    pub dims: Vec<u64>,
    /// The element or block type.
    pub ggml_type: GgmlType,
    /// The absolute file offset of the data: the data section's offset plus the offset stored in the file.
    pub offset: u64,
    /// The tensor's bytes, exactly [`GgmlType::tensor_size`] of `dims` long.
    pub data: &'a [u8],
}

impl GgufTensor<'_> {
    /// The number of elements (the product of `dims`; at most `i64::MAX`).
    pub fn n_elements(&self) -> u64 {
        self.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).unwrap_or(u64::MAX)
    }
}
