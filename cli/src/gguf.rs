//! A strict, panic-free, zero-copy parser for GGUF files (the model format of llama.cpp and ggml), versions 2
//! and 3.
//!
//! The reference is ggml's `docs/gguf.md`, its reader `ggml/src/gguf.cpp` and the Python package `gguf`
//! (`gguf-py/gguf/constants.py` for the type codes and the block and type sizes of the GGML tensor types).
//! A GGUF file is, with every number little-endian (or, in a big-endian file, every number big-endian; the
//! version field tells which, since 2 and 3 read byte-swapped are neither):
//!
//! ```text
//! "GGUF" | u32 version | u64 tensor_count | u64 metadata_kv_count
//! metadata_kv_count × ( string key | u32 value_type | value )
//! tensor_count      × ( string name | u32 n_dims | n_dims × u64 ne | u32 ggml_type | u64 offset )
//! padding up to a multiple of the alignment (`general.alignment`, a u32; 32 when absent)
//! tensor data: each tensor at (data section start + its offset), the offset a multiple of the alignment
//! ```
//!
//! A string is a u64 byte length and that many bytes of UTF-8, with no terminator. An array value is a u32
//! element type, a u64 element count and the elements; its elements may themselves be arrays, each with its
//! own element type and count. Version 1 differed (u32 counts and lengths) and is refused; version 2 and
//! version 3 share one layout (version 3 added big-endian files, which are read too).
//!
//! The input is untrusted: nothing here panics or indexes unchecked, every offset computation is checked,
//! memory stays proportional to the input's size whatever counts it declares, and the running time is linear
//! in the input's size.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::collections::HashSet;
use std::fmt;

/// The four bytes every GGUF file starts with, whatever its byte order.
pub const MAGIC: [u8; 4] = *b"GGUF";
/// The metadata key that sets the alignment of the data section and of every tensor in it.
pub const ALIGNMENT_KEY: &str = "general.alignment";
/// The alignment when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// The most dimensions a GGML tensor has (`GGML_MAX_DIMS`).
pub const MAX_DIMS: u32 = 4;
/// How deeply metadata arrays may nest: an array of arrays is depth 2. The format sets no bound, but ggml
/// reads no nested arrays at all and gguf-py writes them only when asked to; the bound keeps the (recursive)
/// parser's stack use fixed.
pub const MAX_ARRAY_DEPTH: usize = 4;

/// A parsed GGUF file, borrowing its strings and tensor data from the input.
#[derive(Debug, Clone, PartialEq)]
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
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(&'a str),
    U64(u64),
    I64(i64),
    F64(f64),
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
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    Bool(Vec<bool>),
    String(Vec<&'a str>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
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

/// One tensor: its info and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufTensor<'a> {
    pub name: &'a str,
    /// The shape in GGUF order: `ne[0]`, the innermost (contiguous) dimension, first. 1 to 4 entries, each at
    /// most `i64::MAX`; `ne[0]` is a multiple of the type's block size. A reversed `dims` is the row-major
    /// (numpy) shape.
    pub dims: Vec<u64>,
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

// The metadata value type codes (gguf.md `gguf_metadata_value_type`).
const T_U8: u32 = 0;
const T_I8: u32 = 1;
const T_U16: u32 = 2;
const T_I16: u32 = 3;
const T_U32: u32 = 4;
const T_I32: u32 = 5;
const T_F32: u32 = 6;
const T_BOOL: u32 = 7;
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;
const T_U64: u32 = 10;
const T_I64: u32 = 11;
const T_F64: u32 = 12;

/// The gguf.md name of metadata value type `code`, or `None` if `code` is not one.
pub fn value_type_name(code: u32) -> Option<&'static str> {
    const NAMES: [&str; 13] = [
        "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array",
        "uint64", "int64", "float64",
    ];
    NAMES.get(usize::try_from(code).ok()?).copied()
}

/// The fewest bytes one value of type `code` occupies in a file (a string's length, an array's element
/// type and count), or `None` if `code` is not a value type. Checked against what is left before any
/// allocation, so that a declared element count cannot make the parser reserve more than the input could
/// fill.
fn min_encoded_size(code: u32) -> Option<u64> {
    Some(match code {
        T_U8 | T_I8 | T_BOOL => 1,
        T_U16 | T_I16 => 2,
        T_U32 | T_I32 | T_F32 => 4,
        T_U64 | T_I64 | T_F64 | T_STRING => 8,
        T_ARRAY => 12,
        _ => return None,
    })
}

macro_rules! ggml_types {
    ($($variant:ident = $code:literal, $block:literal, $size:expr;)*) => {
        /// A GGML tensor type that GGUF files may hold (`enum ggml_type`), with its block and type sizes
        /// from ggml's type traits. Quantized types store blocks of `block_size()` elements in `type_size()`
        /// bytes.
        #[allow(non_camel_case_types)] // the names ggml, llama.cpp and gguf-py use
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum GgmlType {
            $($variant,)*
        }

        impl GgmlType {
            /// Every type, in code order.
            pub const ALL: &'static [GgmlType] = &[$(GgmlType::$variant,)*];

            /// The type with code `code`, or `None` if the code is unknown or its type has been removed.
            pub fn from_code(code: u32) -> Option<GgmlType> {
                match code {
                    $($code => Some(GgmlType::$variant),)*
                    _ => None,
                }
            }

            /// The code stored in tensor infos.
            pub fn code(self) -> u32 {
                match self {
                    $(GgmlType::$variant => $code,)*
                }
            }

            /// The name as gguf-py spells it (`"Q8_0"`, `"BF16"`, `"IQ2_XXS"`).
            pub fn name(self) -> &'static str {
                match self {
                    $(GgmlType::$variant => stringify!($variant),)*
                }
            }

            /// How many elements one block holds (1 for the plain types).
            pub fn block_size(self) -> u64 {
                match self {
                    $(GgmlType::$variant => $block,)*
                }
            }

            /// How many bytes one block occupies.
            pub fn type_size(self) -> u64 {
                match self {
                    $(GgmlType::$variant => $size,)*
                }
            }
        }
    };
}

/// The elements in one super-block of the k-quants and most i-quants (`QK_K`).
const QK_K: u64 = 256;

// Block and type sizes: the type traits in ggml.c (sizes of the block structs in ggml-common.h), which
// gguf-py's GGML_QUANT_SIZES mirrors, except for Q8_1: gguf-py says 40 bytes (two f32 scales, an older
// layout), while ggml, which loads the files, has two f16 scales and asserts 36 bytes.
mod sizes {
    use super::QK_K;
    pub const Q2_K: u64 = 2 + 2 + QK_K / 16 + QK_K / 4;
    pub const Q3_K: u64 = 2 + QK_K / 4 + QK_K / 8 + 12;
    pub const Q4_K: u64 = 2 + 2 + QK_K / 2 + 12;
    pub const Q5_K: u64 = 2 + 2 + QK_K / 2 + QK_K / 8 + 12;
    pub const Q6_K: u64 = 2 + QK_K / 2 + QK_K / 4 + QK_K / 16;
    pub const Q8_K: u64 = 4 + QK_K + QK_K / 8;
    pub const IQ2_XXS: u64 = 2 + QK_K / 4;
    pub const IQ2_XS: u64 = 2 + QK_K / 4 + QK_K / 32;
    pub const IQ3_XXS: u64 = 2 + QK_K / 4 + QK_K / 8;
    pub const IQ1_S: u64 = 2 + QK_K / 8 + QK_K / 16;
    pub const IQ3_S: u64 = 2 + QK_K / 4 + QK_K / 8 + QK_K / 32 + 4;
    pub const IQ2_S: u64 = 2 + QK_K / 4 + QK_K / 16;
    pub const IQ4_XS: u64 = 2 + 2 + QK_K / 2 + QK_K / 64;
    pub const IQ1_M: u64 = QK_K / 8 + QK_K / 16 + QK_K / 32;
    pub const TQ1_0: u64 = 2 + 4 * 13;
    pub const TQ2_0: u64 = 2 + 64;
}

ggml_types! {
    F32 = 0, 1, 4;
    F16 = 1, 1, 2;
    Q4_0 = 2, 32, 18;
    Q4_1 = 3, 32, 20;
    Q5_0 = 6, 32, 22;
    Q5_1 = 7, 32, 24;
    Q8_0 = 8, 32, 34;
    Q8_1 = 9, 32, 36;
    Q2_K = 10, 256, sizes::Q2_K;
    Q3_K = 11, 256, sizes::Q3_K;
    Q4_K = 12, 256, sizes::Q4_K;
    Q5_K = 13, 256, sizes::Q5_K;
    Q6_K = 14, 256, sizes::Q6_K;
    Q8_K = 15, 256, sizes::Q8_K;
    IQ2_XXS = 16, 256, sizes::IQ2_XXS;
    IQ2_XS = 17, 256, sizes::IQ2_XS;
    IQ3_XXS = 18, 256, sizes::IQ3_XXS;
    IQ1_S = 19, 256, sizes::IQ1_S;
    IQ4_NL = 20, 32, 18;
    IQ3_S = 21, 256, sizes::IQ3_S;
    IQ2_S = 22, 256, sizes::IQ2_S;
    IQ4_XS = 23, 256, sizes::IQ4_XS;
    I8 = 24, 1, 1;
    I16 = 25, 1, 2;
    I32 = 26, 1, 4;
    I64 = 27, 1, 8;
    F64 = 28, 1, 8;
    IQ1_M = 29, 256, sizes::IQ1_M;
    BF16 = 30, 1, 2;
    TQ1_0 = 34, 256, sizes::TQ1_0;
    TQ2_0 = 35, 256, sizes::TQ2_0;
    MXFP4 = 39, 32, 17;
    NVFP4 = 40, 64, 36;
    Q1_0 = 41, 128, 18;
}

impl GgmlType {
    /// The name of a type code that ggml once had but no longer accepts in GGUF files (`None` for any other
    /// code): `Q4_2` and `Q4_3` predate GGUF, and ggml dropped the interleaved layouts (31 to 33, 36 to 38)
    /// from files in favour of repacking at load time.
    pub fn removed_name(code: u32) -> Option<&'static str> {
        Some(match code {
            4 => "Q4_2",
            5 => "Q4_3",
            31 => "Q4_0_4_4",
            32 => "Q4_0_4_8",
            33 => "Q4_0_8_8",
            36 => "IQ4_NL_4_4",
            37 => "IQ4_NL_4_8",
            38 => "IQ4_NL_8_8",
            _ => return None,
        })
    }

    /// The byte size of a tensor of this type with shape `dims` (GGUF order), or `None` if `dims[0]` is not a
    /// multiple of the block size, a dimension exceeds `i64::MAX` (ggml's dimensions are signed), or the
    /// element count or byte size overflows. Any zero dimension gives 0 bytes, as in ggml.
    pub fn tensor_size(self, dims: &[u64]) -> Option<u64> {
        let (&ne0, outer) = dims.split_first()?;
        if dims.iter().any(|&d| i64::try_from(d).is_err()) || ne0.checked_rem(self.block_size())? != 0 {
            return None;
        }
        if dims.contains(&0) {
            return Some(0);
        }
        let elements = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))?;
        i64::try_from(elements).ok()?;
        let row = ne0.checked_div(self.block_size())?.checked_mul(self.type_size())?;
        outer.iter().try_fold(row, |n, &d| n.checked_mul(d))
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a file is not an acceptable GGUF file. Offsets are absolute byte offsets into the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GgufError {
    /// The input does not start with `GGUF`.
    BadMagic,
    /// The version is neither 2 nor 3 (version 1 used 32-bit counts).
    UnsupportedVersion(u32),
    /// The input ends inside the item `what` that starts at `offset`, or a declared length or count cannot
    /// fit in what is left of it.
    Truncated { what: &'static str, offset: u64 },
    /// The string `what` whose length prefix is at `offset` is not UTF-8.
    InvalidUtf8 { what: &'static str, offset: u64 },
    /// The metadata key at `offset` is the empty string.
    EmptyKey { offset: u64 },
    /// Two metadata entries have this key.
    DuplicateKey(String),
    /// A value, or an array's elements, under metadata key `key` has a type code that is not a value type.
    UnknownValueType { key: String, code: u32 },
    /// A boolean under metadata key `key` is stored as a byte other than 0 or 1.
    InvalidBool { key: String, value: u8 },
    /// Arrays under metadata key `key` nest deeper than [`MAX_ARRAY_DEPTH`].
    ArrayTooDeep { key: String },
    /// `general.alignment` has a type other than uint32; `found` is the type's GGUF name.
    AlignmentType { found: &'static str },
    /// `general.alignment` is not a power of two (or is zero).
    BadAlignment(u32),
    /// The tensor info at position `index` (from 0) has an empty name.
    EmptyTensorName { index: u64 },
    /// Two tensors have this name.
    DuplicateTensor(String),
    /// A tensor has `n_dims` dimensions, not 1 to [`MAX_DIMS`].
    BadDims { tensor: String, n_dims: u32 },
    /// A tensor's type code is not a GGML type.
    UnknownTensorType { tensor: String, code: u32 },
    /// A tensor's type code names a type that ggml no longer accepts in files ([`GgmlType::removed_name`]).
    RemovedTensorType { tensor: String, code: u32, name: &'static str },
    /// A tensor's innermost dimension `ne0` is not a multiple of its type's block size.
    RowNotBlockMultiple { tensor: String, ggml_type: GgmlType, ne0: u64 },
    /// A tensor's dimensions, element count or byte size do not fit in a signed or unsigned 64-bit integer.
    TensorTooLarge { tensor: String },
    /// A tensor's offset in the data section is not a multiple of the alignment.
    MisalignedTensor { tensor: String, offset: u64, alignment: u64 },
    /// A tensor's `size` bytes at `offset` in the data section (which starts at `data_offset`) run past the
    /// end of the `file_len`-byte file.
    TensorOutOfBounds { tensor: String, offset: u64, size: u64, data_offset: u64, file_len: u64 },
    /// Two tensors share bytes.
    OverlappingTensors { first: String, second: String },
}

impl fmt::Display for GgufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GgufError::BadMagic => write!(f, "not a GGUF file: it does not start with the bytes \"GGUF\""),
            GgufError::UnsupportedVersion(v) => {
                write!(f, "the file is GGUF version {v}, and only versions 2 and 3 are supported")
            }
            GgufError::Truncated { what, offset } => {
                write!(f, "the file is truncated: the {what} at byte {offset} runs past its end")
            }
            GgufError::InvalidUtf8 { what, offset } => {
                write!(f, "the {what} at byte {offset} is not valid UTF-8")
            }
            GgufError::EmptyKey { offset } => write!(f, "the metadata key at byte {offset} is empty"),
            GgufError::DuplicateKey(key) => write!(f, "metadata key {key:?} appears more than once"),
            GgufError::UnknownValueType { key, code } => {
                write!(f, "metadata key {key:?} has value type code {code}, which is not a GGUF value type")
            }
            GgufError::InvalidBool { key, value } => {
                write!(f, "metadata key {key:?} holds a boolean stored as {value}, which is neither 0 nor 1")
            }
            GgufError::ArrayTooDeep { key } => {
                write!(f, "metadata key {key:?} nests arrays more than {MAX_ARRAY_DEPTH} levels deep")
            }
            GgufError::AlignmentType { found } => {
                write!(f, "{ALIGNMENT_KEY} is a {found}, but it must be a uint32")
            }
            GgufError::BadAlignment(a) => write!(f, "{ALIGNMENT_KEY} is {a}, which is not a power of two"),
            GgufError::EmptyTensorName { index } => write!(f, "tensor #{index} has an empty name"),
            GgufError::DuplicateTensor(name) => write!(f, "tensor {name:?} appears more than once"),
            GgufError::BadDims { tensor, n_dims } => {
                write!(f, "tensor {tensor:?} has {n_dims} dimensions, but GGUF tensors have 1 to {MAX_DIMS}")
            }
            GgufError::UnknownTensorType { tensor, code } => {
                write!(f, "tensor {tensor:?} has type code {code}, which is not a GGML type")
            }
            GgufError::RemovedTensorType { tensor, code, name } => write!(
                f,
                "tensor {tensor:?} has type {name} (code {code}), which GGUF files no longer support"
            ),
            GgufError::RowNotBlockMultiple { tensor, ggml_type, ne0 } => write!(
                f,
                "tensor {tensor:?} has rows of {ne0} elements, which is not a multiple of the {ggml_type} \
                 block size {}",
                ggml_type.block_size()
            ),
            GgufError::TensorTooLarge { tensor } => {
                write!(f, "tensor {tensor:?} is too large: its shape or byte size overflows 64 bits")
            }
            GgufError::MisalignedTensor { tensor, offset, alignment } => write!(
                f,
                "tensor {tensor:?} starts at data offset {offset}, which is not a multiple of the \
                 alignment {alignment}"
            ),
            GgufError::TensorOutOfBounds { tensor, offset, size, data_offset, file_len } => write!(
                f,
                "tensor {tensor:?} ({size} bytes at offset {offset} of the data section, which starts at \
                 byte {data_offset}) runs past the end of the {file_len}-byte file"
            ),
            GgufError::OverlappingTensors { first, second } => {
                write!(f, "tensors {first:?} and {second:?} overlap")
            }
        }
    }
}

impl std::error::Error for GgufError {}

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

/// The error for an item `what` starting at `at` that the input cannot hold.
fn truncated(what: &'static str, at: usize) -> GgufError {
    GgufError::Truncated { what, offset: to_u64(at) }
}

/// A `usize` as a `u64` (lossless on every platform Rust supports; saturating just in case).
fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A cursor over the input. Every read either consumes exactly what it returns or fails with the offset of
/// the item it was reading.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Numbers are big-endian (told by the version field, which the header reads first).
    big_endian: bool,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// The next `n` bytes.
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], GgufError> {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        let (head, _) = rest.split_at_checked(n).ok_or_else(|| truncated(what, self.pos))?;
        self.pos = self.pos.saturating_add(n);
        Ok(head)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], GgufError> {
        let at = self.pos;
        let head = self.take(N, what)?;
        let mut bytes = <[u8; N]>::try_from(head).map_err(|_| truncated(what, at))?;
        // Numbers are then decoded little-endian: reversing a big-endian one first reads it right.
        if self.big_endian {
            bytes.reverse();
        }
        Ok(bytes)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, GgufError> {
        self.array::<1>(what).map(u8::from_le_bytes)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, GgufError> {
        self.array(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, GgufError> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// A string: a u64 byte length, then that many bytes of UTF-8.
    fn string(&mut self, what: &'static str) -> Result<&'a str, GgufError> {
        let at = self.pos;
        let len = self.u64(what)?;
        let len = usize::try_from(len).map_err(|_| truncated(what, at))?;
        let raw = self.take(len, what).map_err(|_| truncated(what, at))?;
        std::str::from_utf8(raw).map_err(|_| GgufError::InvalidUtf8 { what, offset: to_u64(at) })
    }

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
        let mut seen = HashSet::new();
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

    /// One value of type `code`, under metadata key `key`.
    fn value(&mut self, code: u32, key: &str) -> Result<GgufValue<'a>, GgufError> {
        const W: &str = "metadata value";
        Ok(match code {
            T_U8 => GgufValue::U8(self.u8(W)?),
            T_I8 => GgufValue::I8(self.array(W).map(i8::from_le_bytes)?),
            T_U16 => GgufValue::U16(self.array(W).map(u16::from_le_bytes)?),
            T_I16 => GgufValue::I16(self.array(W).map(i16::from_le_bytes)?),
            T_U32 => GgufValue::U32(self.u32(W)?),
            T_I32 => GgufValue::I32(self.array(W).map(i32::from_le_bytes)?),
            T_F32 => GgufValue::F32(self.array(W).map(f32::from_le_bytes)?),
            T_BOOL => GgufValue::Bool(self.bool(key)?),
            T_STRING => GgufValue::String(self.string("string value")?),
            T_U64 => GgufValue::U64(self.u64(W)?),
            T_I64 => GgufValue::I64(self.array(W).map(i64::from_le_bytes)?),
            T_F64 => GgufValue::F64(self.array(W).map(f64::from_le_bytes)?),
            T_ARRAY => GgufValue::Array(self.gguf_array(key, 1)?),
            _ => return Err(GgufError::UnknownValueType { key: key.into(), code }),
        })
    }

    fn bool(&mut self, key: &str) -> Result<bool, GgufError> {
        byte_to_bool(self.u8("metadata value")?, key)
    }

    /// An array (element type, count, elements) at nesting level `depth` (1 for a top-level array).
    fn gguf_array(&mut self, key: &str, depth: usize) -> Result<GgufArray<'a>, GgufError> {
        if depth > MAX_ARRAY_DEPTH {
            return Err(GgufError::ArrayTooDeep { key: key.into() });
        }
        let at = self.pos;
        let code = self.u32("array header")?;
        let count = self.u64("array header")?;
        let min =
            min_encoded_size(code).ok_or_else(|| GgufError::UnknownValueType { key: key.into(), code })?;
        // Every element takes at least `min` bytes: refuse counts the input cannot hold before reserving.
        let n = count
            .checked_mul(min)
            .filter(|&need| need <= to_u64(self.remaining()))
            .and_then(|_| usize::try_from(count).ok())
            .ok_or_else(|| truncated("array", at))?;
        Ok(match code {
            T_U8 => GgufArray::U8(self.take(n, "array elements")?.to_vec()),
            T_I8 => GgufArray::I8(self.fixed(n, i8::from_le_bytes)?),
            T_U16 => GgufArray::U16(self.fixed(n, u16::from_le_bytes)?),
            T_I16 => GgufArray::I16(self.fixed(n, i16::from_le_bytes)?),
            T_U32 => GgufArray::U32(self.fixed(n, u32::from_le_bytes)?),
            T_I32 => GgufArray::I32(self.fixed(n, i32::from_le_bytes)?),
            T_F32 => GgufArray::F32(self.fixed(n, f32::from_le_bytes)?),
            T_BOOL => GgufArray::Bool(
                self.take(n, "array elements")?
                    .iter()
                    .map(|&b| byte_to_bool(b, key))
                    .collect::<Result<_, _>>()?,
            ),
            T_U64 => GgufArray::U64(self.fixed(n, u64::from_le_bytes)?),
            T_I64 => GgufArray::I64(self.fixed(n, i64::from_le_bytes)?),
            T_F64 => GgufArray::F64(self.fixed(n, f64::from_le_bytes)?),
            T_STRING => GgufArray::String(self.repeat(n, |r| r.string("string in an array"))?),
            T_ARRAY => GgufArray::Array(self.repeat(n, |r| r.gguf_array(key, depth.saturating_add(1)))?),
            _ => return Err(GgufError::UnknownValueType { key: key.into(), code }),
        })
    }

    /// `n` fixed-size little-endian numbers.
    fn fixed<const N: usize, T>(&mut self, n: usize, from: fn([u8; N]) -> T) -> Result<Vec<T>, GgufError> {
        let at = self.pos;
        let len = n.checked_mul(N).ok_or_else(|| truncated("array elements", at))?;
        let raw = self.take(len, "array elements")?;
        let big_endian = self.big_endian;
        // `chunks_exact` yields only N-byte chunks, so the conversion never fails.
        Ok(raw
            .chunks_exact(N)
            .filter_map(|c| <[u8; N]>::try_from(c).ok())
            .map(|mut c| {
                if big_endian {
                    c.reverse();
                }
                from(c)
            })
            .collect())
    }

    /// `n` items read by `item`. The caller has checked that the input can hold `n` items, so reserving them
    /// up front is bounded by the input's size.
    fn repeat<T>(
        &mut self,
        n: usize,
        mut item: impl FnMut(&mut Self) -> Result<T, GgufError>,
    ) -> Result<Vec<T>, GgufError> {
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(item(self)?);
        }
        Ok(items)
    }

    /// `count` tensor infos, sizes computed. The vector grows as infos are read (each takes at least 32
    /// bytes), so a huge `count` fails as truncation.
    fn tensor_infos(&mut self, count: u64) -> Result<Vec<TensorInfo<'a>>, GgufError> {
        let mut seen = HashSet::new();
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

/// A stored boolean: strictly 0 or 1 (ggml reads any nonzero byte as true; gguf-py writes only 0 and 1).
fn byte_to_bool(b: u8, key: &str) -> Result<bool, GgufError> {
    match b {
        0 => Ok(false),
        1 => Ok(true),
        value => Err(GgufError::InvalidBool { key: key.into(), value }),
    }
}

/// The byte size of tensor `name`, distinguishing a row length that is not a block multiple from overflow.
fn tensor_size(name: &str, dims: &[u64], ggml_type: GgmlType) -> Result<u64, GgufError> {
    let ne0 = dims.first().copied().unwrap_or(0);
    if ne0.checked_rem(ggml_type.block_size()) != Some(0) {
        return Err(GgufError::RowNotBlockMultiple { tensor: name.into(), ggml_type, ne0 });
    }
    ggml_type.tensor_size(dims).ok_or_else(|| GgufError::TensorTooLarge { tensor: name.into() })
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    // A tiny little-endian GGUF encoder: each helper returns the encoded bytes of one item.

    fn string(s: &[u8]) -> Vec<u8> {
        let mut out = (s.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(s);
        out
    }

    /// A metadata pair: key, value type code, encoded value.
    fn kv(key: &str, code: u32, value: &[u8]) -> Vec<u8> {
        let mut out = string(key.as_bytes());
        out.extend_from_slice(&code.to_le_bytes());
        out.extend_from_slice(value);
        out
    }

    /// An encoded array value (without the leading ARRAY type code): element type, count, elements.
    fn array(code: u32, count: u64, elements: &[u8]) -> Vec<u8> {
        let mut out = code.to_le_bytes().to_vec();
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(elements);
        out
    }

    fn tensor_info(name: &str, dims: &[u64], code: u32, offset: u64) -> Vec<u8> {
        let mut out = string(name.as_bytes());
        out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
        for d in dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&code.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        out
    }

    fn header(version: u32, tensors: u64, kvs: u64) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&tensors.to_le_bytes());
        out.extend_from_slice(&kvs.to_le_bytes());
        out
    }

    /// A version-3 file: header, `kvs`, `infos`, zero padding to `alignment`, `data`.
    fn file(kvs: &[Vec<u8>], infos: &[Vec<u8>], alignment: usize, data: &[u8]) -> Vec<u8> {
        let mut out = header(3, infos.len() as u64, kvs.len() as u64);
        kvs.iter().chain(infos).for_each(|item| out.extend_from_slice(item));
        out.resize(out.len().next_multiple_of(alignment), 0);
        out.extend_from_slice(data);
        out
    }

    /// A file with one F32 tensor `t` of 4 elements and the given metadata.
    fn with_meta(kvs: &[Vec<u8>]) -> Vec<u8> {
        file(kvs, &[tensor_info("t", &[4], 0, 0)], 32, &[0; 16])
    }

    /// A file with no metadata and the given tensor infos, and `data_len` bytes of data.
    fn with_tensors(infos: &[Vec<u8>], data_len: usize) -> Vec<u8> {
        file(&[], infos, 32, &vec![0; data_len])
    }

    fn err(bytes: &[u8]) -> GgufError {
        parse(bytes).expect_err("the file should be refused")
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    fn alignment_kv(a: u32) -> Vec<u8> {
        kv(ALIGNMENT_KEY, T_U32, &a.to_le_bytes())
    }

    /// Every metadata type, arrays of several kinds, four tensor types out of order, alignment 64.
    fn everything() -> Vec<u8> {
        let strings = cat(&[&string(b"a"), &string("é€".as_bytes()), &string(b"")]);
        let inner_u32 = array(T_U32, 2, &cat(&[&7u32.to_le_bytes(), &8u32.to_le_bytes()]));
        let inner_str = array(T_STRING, 1, &string(b"x"));
        let kvs = [
            kv("u8", T_U8, &[200]),
            kv("i8", T_I8, &(-5i8).to_le_bytes()),
            kv("u16", T_U16, &65000u16.to_le_bytes()),
            kv("i16", T_I16, &(-300i16).to_le_bytes()),
            kv("u32", T_U32, &4_000_000_000u32.to_le_bytes()),
            kv("i32", T_I32, &(-70_000i32).to_le_bytes()),
            kv("f32", T_F32, &1.5f32.to_le_bytes()),
            kv("bool", T_BOOL, &[1]),
            kv("string", T_STRING, &string("hé".as_bytes())),
            kv("u64", T_U64, &u64::MAX.to_le_bytes()),
            kv("i64", T_I64, &i64::MIN.to_le_bytes()),
            kv("f64", T_F64, &(-2.25f64).to_le_bytes()),
            alignment_kv(64),
            kv("arr.u8", T_ARRAY, &array(T_U8, 3, &[1, 2, 3])),
            kv("arr.i8", T_ARRAY, &array(T_I8, 2, &[0xff, 1])),
            kv("arr.u16", T_ARRAY, &array(T_U16, 1, &513u16.to_le_bytes())),
            kv("arr.i16", T_ARRAY, &array(T_I16, 1, &(-2i16).to_le_bytes())),
            kv("arr.u32", T_ARRAY, &array(T_U32, 1, &9u32.to_le_bytes())),
            kv("arr.i32", T_ARRAY, &array(T_I32, 1, &(-9i32).to_le_bytes())),
            kv("arr.f32", T_ARRAY, &array(T_F32, 1, &0.5f32.to_le_bytes())),
            kv("arr.bool", T_ARRAY, &array(T_BOOL, 3, &[0, 1, 0])),
            kv("arr.string", T_ARRAY, &array(T_STRING, 3, &strings)),
            kv("arr.u64", T_ARRAY, &array(T_U64, 1, &10u64.to_le_bytes())),
            kv("arr.i64", T_ARRAY, &array(T_I64, 1, &(-10i64).to_le_bytes())),
            kv("arr.f64", T_ARRAY, &array(T_F64, 1, &0.25f64.to_le_bytes())),
            kv("arr.empty", T_ARRAY, &array(T_U32, 0, &[])),
            kv("arr.nested", T_ARRAY, &array(T_ARRAY, 2, &cat(&[&inner_u32, &inner_str]))),
        ];
        // Data section (alignment 64): q8 at 0 (2 rows × 34 = 68 bytes), f32 at 128 (8 × 4 = 32),
        // q4 at 192 (18), f16 at 256 (3 × 2 = 6). The file ends with the last tensor.
        let infos = [
            tensor_info("f32", &[4, 2], GgmlType::F32.code(), 128),
            tensor_info("f16", &[3], GgmlType::F16.code(), 256),
            tensor_info("q8", &[32, 2], GgmlType::Q8_0.code(), 0),
            tensor_info("q4", &[32], GgmlType::Q4_0.code(), 192),
        ];
        let data: Vec<u8> = (0..262u32).map(|i| i as u8).collect();
        file(&kvs, &infos, 64, &data)
    }

    #[test]
    fn parses_every_metadata_type_array_and_tensor() {
        let bytes = everything();
        let g = parse(&bytes).unwrap();
        assert_eq!((g.version, g.alignment, g.metadata.len(), g.tensors.len()), (3, 64, 27, 4));
        assert_eq!(g.data_offset % 64, 0);
        assert_eq!(g.data_offset as usize, bytes.len() - 262);
        let scalars = [
            ("u8", GgufValue::U8(200)),
            ("i8", GgufValue::I8(-5)),
            ("u16", GgufValue::U16(65000)),
            ("i16", GgufValue::I16(-300)),
            ("u32", GgufValue::U32(4_000_000_000)),
            ("i32", GgufValue::I32(-70_000)),
            ("f32", GgufValue::F32(1.5)),
            ("bool", GgufValue::Bool(true)),
            ("string", GgufValue::String("hé")),
            ("u64", GgufValue::U64(u64::MAX)),
            ("i64", GgufValue::I64(i64::MIN)),
            ("f64", GgufValue::F64(-2.25)),
            (ALIGNMENT_KEY, GgufValue::U32(64)),
        ];
        for (key, value) in &scalars {
            assert_eq!(g.get(key), Some(value), "{key}");
        }
        let arrays = [
            ("arr.u8", GgufArray::U8(vec![1, 2, 3])),
            ("arr.i8", GgufArray::I8(vec![-1, 1])),
            ("arr.u16", GgufArray::U16(vec![513])),
            ("arr.i16", GgufArray::I16(vec![-2])),
            ("arr.u32", GgufArray::U32(vec![9])),
            ("arr.i32", GgufArray::I32(vec![-9])),
            ("arr.f32", GgufArray::F32(vec![0.5])),
            ("arr.bool", GgufArray::Bool(vec![false, true, false])),
            ("arr.string", GgufArray::String(vec!["a", "é€", ""])),
            ("arr.u64", GgufArray::U64(vec![10])),
            ("arr.i64", GgufArray::I64(vec![-10])),
            ("arr.f64", GgufArray::F64(vec![0.25])),
            ("arr.empty", GgufArray::U32(vec![])),
            ("arr.nested", GgufArray::Array(vec![GgufArray::U32(vec![7, 8]), GgufArray::String(vec!["x"])])),
        ];
        for (key, array) in arrays {
            assert_eq!(g.get(key), Some(&GgufValue::Array(array)), "{key}");
        }
        // File order is kept.
        assert_eq!(g.metadata[0].0, "u8");
        assert_eq!(g.metadata[26].0, "arr.nested");

        let start = g.data_offset;
        let expect = [
            ("f32", vec![4, 2], GgmlType::F32, 128, 32),
            ("f16", vec![3], GgmlType::F16, 256, 6),
            ("q8", vec![32, 2], GgmlType::Q8_0, 0, 68),
            ("q4", vec![32], GgmlType::Q4_0, 192, 18),
        ];
        for (t, (name, dims, ty, rel, len)) in g.tensors.iter().zip(expect) {
            assert_eq!(
                (t.name, &t.dims, t.ggml_type, t.offset, t.data.len()),
                (name, &dims, ty, start + rel, len)
            );
            let at = t.offset as usize;
            assert_eq!(t.data, &bytes[at..at + len]);
        }
        assert_eq!(g.tensor("q4").unwrap().n_elements(), 32);
        assert_eq!(g.tensor("f32").unwrap().n_elements(), 8);
    }

    #[test]
    fn default_alignment_and_version_2() {
        let mut bytes = with_meta(&[kv("general.name", T_STRING, &string(b"tiny"))]);
        bytes[4] = 2;
        let g = parse(&bytes).unwrap();
        assert_eq!((g.version, g.alignment), (2, 32));
        assert_eq!(g.data_offset as usize, bytes.len() - 16);
        assert_eq!(g.tensors[0].offset, g.data_offset);
    }

    #[test]
    fn no_tensors_needs_no_padding() {
        let bytes = cat(&[&header(3, 0, 1), &kv("a", T_U8, &[1])]);
        let g = parse(&bytes).unwrap();
        assert!(g.tensors.is_empty());
        assert_eq!(g.data_offset, (bytes.len() as u64).next_multiple_of(32));
        assert!(parse(&header(3, 0, 0)).unwrap().metadata.is_empty());
    }

    #[test]
    fn zero_sized_tensors_and_trailing_bytes_are_accepted() {
        let bytes = with_tensors(
            &[
                tensor_info("empty", &[0, 5], 0, 32),
                tensor_info("also.empty", &[4, 0, 1u64 << 62], 0, 32),
                tensor_info("full", &[8], 0, 0),
            ],
            40,
        );
        let g = parse(&bytes).unwrap();
        assert!(g.tensors[0].data.is_empty() && g.tensors[1].data.is_empty());
        assert_eq!(g.tensors[2].data.len(), 32);
    }

    #[test]
    fn every_proper_prefix_is_refused() {
        let bytes = everything();
        for len in 0..bytes.len() {
            match parse(&bytes[..len]) {
                Err(
                    GgufError::Truncated { .. } | GgufError::TensorOutOfBounds { .. } | GgufError::BadMagic,
                ) => {}
                other => panic!("prefix of {len} bytes: {other:?}"),
            }
        }
        assert_eq!(err(b""), GgufError::BadMagic);
        assert_eq!(err(b"GG"), GgufError::Truncated { what: "magic", offset: 0 });
        assert_eq!(err(b"GGUF\x03\0\0\0\0"), GgufError::Truncated { what: "header", offset: 8 });
    }

    #[test]
    fn refuses_bad_magic_and_versions() {
        let mut bytes = with_meta(&[]);
        bytes[..4].copy_from_slice(b"GGML");
        assert_eq!(err(&bytes), GgufError::BadMagic);
        for v in [0u32, 1, 4, 0x0100_0000, 0xffff_ffff] {
            let mut bytes = with_meta(&[]);
            bytes[4..8].copy_from_slice(&v.to_le_bytes());
            assert_eq!(err(&bytes), GgufError::UnsupportedVersion(v), "{v}");
        }
    }

    #[test]
    fn reads_big_endian_headers() {
        for v in [2u32, 3] {
            let mut bytes = MAGIC.to_vec();
            bytes.extend_from_slice(&v.to_be_bytes());
            bytes.extend_from_slice(&0u64.to_be_bytes());
            bytes.extend_from_slice(&0u64.to_be_bytes());
            let file = parse(&bytes).unwrap();
            assert!(file.big_endian);
            assert_eq!(file.version, v);
            // A big-endian count is read as such: 1 tensor declared, none present.
            bytes[8..16].copy_from_slice(&1u64.to_be_bytes());
            assert!(matches!(err(&bytes), GgufError::Truncated { .. }));
        }
    }

    /// The big-endian file gguf-py wrote (`tests/fixtures/bigendian.gguf`): numbers read right.
    #[test]
    fn reads_the_big_endian_fixture() {
        let bytes = include_bytes!("../tests/fixtures/bigendian.gguf");
        let file = parse(bytes).unwrap();
        assert!(file.big_endian);
        assert_eq!(file.get("test.uint32"), Some(&GgufValue::U32(305_419_896)));
        assert_eq!(file.get("test.int64"), Some(&GgufValue::I64(-81_985_529_216_486_895)));
        assert_eq!(file.get("test.float32"), Some(&GgufValue::F32(-1.5)));
        assert_eq!(
            file.get("test.array.int32"),
            Some(&GgufValue::Array(GgufArray::I32(vec![1, -2, 16_909_060])))
        );
        let t = file.tensor("w.f32").unwrap();
        assert_eq!((t.dims.as_slice(), t.ggml_type), (&[8u64, 2][..], GgmlType::F32));
        // Tensor data stays as stored: big-endian.
        let first = f32::from_be_bytes(t.data[..4].try_into().unwrap());
        assert!(first.is_finite());
    }

    #[test]
    fn huge_counts_fail_fast_as_truncation() {
        let huge = 1u64 << 60;
        let t = std::time::Instant::now();
        assert!(matches!(err(&header(3, huge, 0)), GgufError::Truncated { what: "tensor name", .. }));
        assert!(matches!(err(&header(3, 0, huge)), GgufError::Truncated { what: "metadata key", .. }));
        assert!(matches!(err(&header(3, u64::MAX, u64::MAX)), GgufError::Truncated { .. }));
        for code in [T_U8, T_BOOL, T_U64, T_STRING, T_ARRAY] {
            for count in [huge, u64::MAX, 1 << 20] {
                let bytes = with_meta(&[kv("a", T_ARRAY, &array(code, count, &[0; 64]))]);
                assert_eq!(
                    err(&bytes),
                    GgufError::Truncated { what: "array", offset: 24 + 9 + 4 },
                    "{code} × {count}"
                );
            }
        }
        // A string length past the end, and one beyond usize.
        for len in [1000u64, u64::MAX] {
            let bytes = cat(&[&header(3, 0, 1), &len.to_le_bytes(), b"abc"]);
            assert_eq!(err(&bytes), GgufError::Truncated { what: "metadata key", offset: 24 });
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn refuses_invalid_utf8() {
        let bad = b"a\xffb";
        let key = cat(&[&header(3, 0, 1), &string(bad), &T_U8.to_le_bytes(), &[0]]);
        assert_eq!(err(&key), GgufError::InvalidUtf8 { what: "metadata key", offset: 24 });
        let value = with_meta(&[kv("k", T_STRING, &string(bad))]);
        assert_eq!(err(&value), GgufError::InvalidUtf8 { what: "string value", offset: 24 + 9 + 4 });
        let in_array =
            with_meta(&[kv("k", T_ARRAY, &array(T_STRING, 2, &cat(&[&string(b"ok"), &string(bad)])))]);
        assert_eq!(
            err(&in_array),
            GgufError::InvalidUtf8 { what: "string in an array", offset: 24 + 9 + 4 + 12 + 10 }
        );
        let name = cat(&[&header(3, 1, 0), &string(bad), &1u32.to_le_bytes(), &4u64.to_le_bytes()]);
        assert_eq!(err(&name), GgufError::InvalidUtf8 { what: "tensor name", offset: 24 });
    }

    #[test]
    fn refuses_bad_keys() {
        assert_eq!(err(&with_meta(&[kv("", T_U8, &[0])])), GgufError::EmptyKey { offset: 24 });
        let dup = with_meta(&[kv("a", T_U8, &[0]), kv("b", T_U8, &[0]), kv("a", T_U16, &[0, 0])]);
        assert_eq!(err(&dup), GgufError::DuplicateKey("a".into()));
    }

    #[test]
    fn refuses_unknown_value_types() {
        for code in [13u32, 99, u32::MAX] {
            let scalar = with_meta(&[kv("k", code, &[0; 8])]);
            assert_eq!(err(&scalar), GgufError::UnknownValueType { key: "k".into(), code });
            let elements = with_meta(&[kv("k", T_ARRAY, &array(code, 1, &[0; 8]))]);
            assert_eq!(err(&elements), GgufError::UnknownValueType { key: "k".into(), code });
        }
    }

    #[test]
    fn refuses_bools_other_than_0_and_1() {
        let scalar = with_meta(&[kv("b", T_BOOL, &[2])]);
        assert_eq!(err(&scalar), GgufError::InvalidBool { key: "b".into(), value: 2 });
        let elements = with_meta(&[kv("b", T_ARRAY, &array(T_BOOL, 3, &[1, 0, 255]))]);
        assert_eq!(err(&elements), GgufError::InvalidBool { key: "b".into(), value: 255 });
    }

    /// An array nested `depth` levels deep, the innermost holding one u8.
    fn nested(depth: usize) -> Vec<u8> {
        let mut value = array(T_U8, 1, &[5]);
        for _ in 1..depth {
            value = array(T_ARRAY, 1, &value);
        }
        value
    }

    #[test]
    fn limits_array_nesting() {
        let ok = with_meta(&[kv("n", T_ARRAY, &nested(MAX_ARRAY_DEPTH))]);
        let mut expect = GgufArray::U8(vec![5]);
        for _ in 1..MAX_ARRAY_DEPTH {
            expect = GgufArray::Array(vec![expect]);
        }
        assert_eq!(parse(&ok).unwrap().get("n"), Some(&GgufValue::Array(expect)));
        let deep = with_meta(&[kv("n", T_ARRAY, &nested(MAX_ARRAY_DEPTH + 1))]);
        assert_eq!(err(&deep), GgufError::ArrayTooDeep { key: "n".into() });
    }

    #[test]
    fn checks_general_alignment() {
        for a in [1u32, 8, 64, 4096] {
            let bytes = file(&[alignment_kv(a)], &[tensor_info("t", &[1], 0, 0)], a as usize, &[0; 4]);
            let g = parse(&bytes).unwrap();
            assert_eq!((g.alignment, g.data_offset % u64::from(a)), (u64::from(a), 0));
        }
        // The largest alignment: fine without tensors, and the padding is missing with one.
        let empty = cat(&[&header(3, 0, 1), &alignment_kv(1 << 31)]);
        assert_eq!(parse(&empty).unwrap().data_offset, 1 << 31);
        let one = cat(&[&header(3, 1, 1), &alignment_kv(1 << 31), &tensor_info("t", &[1], 0, 0), &[0; 64]]);
        assert!(matches!(err(&one), GgufError::Truncated { what: "padding before the tensor data", .. }));
        for a in [0u32, 3, 48, u32::MAX] {
            assert_eq!(err(&with_meta(&[alignment_kv(a)])), GgufError::BadAlignment(a));
        }
        let as_u64 = with_meta(&[kv(ALIGNMENT_KEY, T_U64, &32u64.to_le_bytes())]);
        assert_eq!(err(&as_u64), GgufError::AlignmentType { found: "uint64" });
        let as_array = with_meta(&[kv(ALIGNMENT_KEY, T_ARRAY, &array(T_U32, 1, &32u32.to_le_bytes()))]);
        assert_eq!(err(&as_array), GgufError::AlignmentType { found: "array" });
    }

    #[test]
    fn refuses_bad_tensor_names() {
        assert_eq!(
            err(&with_tensors(&[tensor_info("", &[1], 0, 0)], 4)),
            GgufError::EmptyTensorName { index: 0 }
        );
        let dup = with_tensors(&[tensor_info("a", &[1], 0, 0), tensor_info("a", &[1], 0, 32)], 36);
        assert_eq!(err(&dup), GgufError::DuplicateTensor("a".into()));
    }

    #[test]
    fn refuses_bad_dimension_counts() {
        for dims in [&[][..], &[1, 1, 1, 1, 1]] {
            let bytes = with_tensors(&[tensor_info("t", dims, 0, 0)], 4);
            assert_eq!(err(&bytes), GgufError::BadDims { tensor: "t".into(), n_dims: dims.len() as u32 });
        }
        let four = with_tensors(&[tensor_info("t", &[1, 2, 3, 4], 0, 0)], 96);
        assert_eq!(parse(&four).unwrap().tensors[0].data.len(), 96);
    }

    #[test]
    fn refuses_unknown_and_removed_tensor_types() {
        for code in [42u32, 99, u32::MAX] {
            let bytes = with_tensors(&[tensor_info("blk.0.attn_q.weight", &[32], code, 0)], 128);
            let e = err(&bytes);
            assert_eq!(e, GgufError::UnknownTensorType { tensor: "blk.0.attn_q.weight".into(), code });
            if code == 99 {
                assert_eq!(
                    e.to_string(),
                    "tensor \"blk.0.attn_q.weight\" has type code 99, which is not a GGML type"
                );
            }
        }
        let removed = with_tensors(&[tensor_info("t", &[32], 31, 0)], 128);
        assert_eq!(
            err(&removed),
            GgufError::RemovedTensorType { tensor: "t".into(), code: 31, name: "Q4_0_4_4" }
        );
    }

    #[test]
    fn refuses_rows_that_are_not_whole_blocks() {
        let bytes = with_tensors(&[tensor_info("t", &[33, 2], GgmlType::Q8_0.code(), 0)], 136);
        let e = err(&bytes);
        assert_eq!(
            e,
            GgufError::RowNotBlockMultiple { tensor: "t".into(), ggml_type: GgmlType::Q8_0, ne0: 33 }
        );
        assert_eq!(
            e.to_string(),
            "tensor \"t\" has rows of 33 elements, which is not a multiple of the Q8_0 block size 32"
        );
    }

    #[test]
    fn refuses_overflowing_shapes() {
        let shapes: [(&[u64], GgmlType); 4] = [
            (&[1 << 63], GgmlType::I8),                       // beyond i64
            (&[1 << 32, 1 << 31], GgmlType::I8),              // 2^63 elements
            (&[1 << 62], GgmlType::F32),                      // 2^64 bytes
            (&[1 << 40, 1 << 40, 1 << 40, 0], GgmlType::F32), // ok: zero elements
        ];
        for (dims, ty) in shapes {
            let bytes = with_tensors(&[tensor_info("t", dims, ty.code(), 0)], 0);
            if dims.contains(&0) {
                assert!(parse(&bytes).is_ok());
            } else {
                assert_eq!(err(&bytes), GgufError::TensorTooLarge { tensor: "t".into() }, "{dims:?}");
            }
        }
    }

    #[test]
    fn refuses_misplaced_tensors() {
        let misaligned = with_tensors(&[tensor_info("t", &[1], 0, 4)], 8);
        assert_eq!(
            err(&misaligned),
            GgufError::MisalignedTensor { tensor: "t".into(), offset: 4, alignment: 32 }
        );
        let past_end = with_tensors(&[tensor_info("t", &[2], 0, 0)], 7);
        let data_offset = (past_end.len() - 7) as u64;
        let e = err(&past_end);
        assert_eq!(
            e,
            GgufError::TensorOutOfBounds {
                tensor: "t".into(),
                offset: 0,
                size: 8,
                data_offset,
                file_len: past_end.len() as u64
            }
        );
        let far = with_tensors(&[tensor_info("t", &[1], 0, u64::MAX - 31)], 4);
        assert!(matches!(err(&far), GgufError::TensorOutOfBounds { .. }));
        let overlap = with_tensors(
            &[tensor_info("a", &[16], 0, 0), tensor_info("b", &[8], 0, 64), tensor_info("c", &[8], 0, 32)],
            96,
        );
        assert_eq!(err(&overlap), GgufError::OverlappingTensors { first: "a".into(), second: "c".into() });
        let same = with_tensors(&[tensor_info("a", &[1], 0, 0), tensor_info("b", &[1], 0, 0)], 4);
        assert!(matches!(err(&same), GgufError::OverlappingTensors { .. }));
        // Padding before the data section must be there when tensors are.
        let mut no_padding = with_tensors(&[tensor_info("t", &[0], 0, 0)], 0);
        no_padding.truncate(24 + 8 + 1 + 4 + 8 + 4 + 8);
        assert_eq!(
            err(&no_padding),
            GgufError::Truncated { what: "padding before the tensor data", offset: 57 }
        );
    }

    #[test]
    fn ggml_type_table() {
        let mut codes = std::collections::HashSet::new();
        let mut names = std::collections::HashSet::new();
        for &t in GgmlType::ALL {
            assert_eq!(GgmlType::from_code(t.code()), Some(t));
            assert!(codes.insert(t.code()) && names.insert(t.name()));
            assert!(t.block_size() >= 1 && t.type_size() >= 1);
            assert_eq!(GgmlType::removed_name(t.code()), None);
        }
        assert_eq!(GgmlType::ALL.len(), 34);
        // A few sizes spelled out (gguf-py GGML_QUANT_SIZES).
        let known = [
            (GgmlType::Q4_K, 256, 144),
            (GgmlType::Q6_K, 256, 210),
            (GgmlType::Q8_K, 256, 292),
            (GgmlType::IQ4_XS, 256, 136),
            (GgmlType::IQ1_M, 256, 56),
            (GgmlType::TQ1_0, 256, 54),
            (GgmlType::BF16, 1, 2),
        ];
        for (t, block, size) in known {
            assert_eq!((t.block_size(), t.type_size()), (block, size), "{t}");
        }
        assert_eq!(GgmlType::Q8_0.tensor_size(&[64, 3]), Some(2 * 34 * 3));
        assert_eq!(GgmlType::Q8_0.tensor_size(&[65, 3]), None);
        assert_eq!(GgmlType::F32.tensor_size(&[]), None);
    }

    #[test]
    fn messages_are_single_lowercase_sentences() {
        let all = [
            GgufError::BadMagic,
            GgufError::UnsupportedVersion(1),
            GgufError::Truncated { what: "tensor name", offset: 7 },
            GgufError::InvalidUtf8 { what: "metadata key", offset: 7 },
            GgufError::EmptyKey { offset: 7 },
            GgufError::DuplicateKey("k".into()),
            GgufError::UnknownValueType { key: "k".into(), code: 13 },
            GgufError::InvalidBool { key: "k".into(), value: 2 },
            GgufError::ArrayTooDeep { key: "k".into() },
            GgufError::AlignmentType { found: "string" },
            GgufError::BadAlignment(3),
            GgufError::EmptyTensorName { index: 1 },
            GgufError::DuplicateTensor("t".into()),
            GgufError::BadDims { tensor: "t".into(), n_dims: 5 },
            GgufError::UnknownTensorType { tensor: "t".into(), code: 99 },
            GgufError::RemovedTensorType { tensor: "t".into(), code: 31, name: "Q4_0_4_4" },
            GgufError::RowNotBlockMultiple { tensor: "t".into(), ggml_type: GgmlType::Q4_K, ne0: 3 },
            GgufError::TensorTooLarge { tensor: "t".into() },
            GgufError::MisalignedTensor { tensor: "t".into(), offset: 4, alignment: 32 },
            GgufError::TensorOutOfBounds {
                tensor: "t".into(),
                offset: 0,
                size: 8,
                data_offset: 64,
                file_len: 70,
            },
            GgufError::OverlappingTensors { first: "a".into(), second: "b".into() },
        ];
        for e in all {
            let m = e.to_string();
            let first = m.chars().next().unwrap();
            assert!(!first.is_uppercase() && !m.ends_with('.') && !m.contains('\n'), "{m}");
        }
    }
}
