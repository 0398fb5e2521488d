//! Why a file is refused: one variant per rule, each with the offset or the name that locates it.

use alloc::string::String;
use core::fmt;

use crate::format::{GgmlType, ALIGNMENT_KEY, MAX_ARRAY_DEPTH, MAX_DIMS};

/// Why a file is not an acceptable GGUF file. Offsets are absolute byte offsets into the input; `tensor` and
/// `key` fields are the tensor name or metadata key the problem is under.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GgufError {
    /// The input does not start with `GGUF`.
    BadMagic,
    /// The version is neither 2 nor 3 (version 1 used 32-bit counts).
    UnsupportedVersion(u32),
    /// The input ends inside the item `what` that starts at `offset`, or a declared length or count cannot
    /// fit in what is left of it.
    Truncated {
        /// The item being read (`"tensor name"`, `"array"`, ...).
        what: &'static str,
        /// Where the item starts.
        offset: u64,
    },
    /// The string `what` whose length prefix is at `offset` is not UTF-8.
    InvalidUtf8 {
        /// Which string (`"metadata key"`, `"string value"`, ...).
        what: &'static str,
        /// Where its length prefix is.
        offset: u64,
    },
    /// The metadata key at `offset` is the empty string.
    EmptyKey {
        /// Where the key's length prefix is.
        offset: u64,
    },
    /// Two metadata entries have this key.
    DuplicateKey(String),
    /// A value, or an array's elements, under metadata key `key` has a type code that is not a value type.
    UnknownValueType {
        /// The metadata key.
        key: String,
        /// The type code found.
        code: u32,
    },
    /// A boolean under metadata key `key` is stored as a byte other than 0 or 1.
    InvalidBool {
        /// The metadata key.
        key: String,
        /// The byte found.
        value: u8,
    },
    /// Arrays under metadata key `key` nest deeper than [`MAX_ARRAY_DEPTH`].
    ArrayTooDeep {
        /// The metadata key.
        key: String,
    },
    /// `general.alignment` has a type other than uint32.
    AlignmentType {
        /// The GGUF name of the type found.
        found: &'static str,
    },
    /// `general.alignment` is not a power of two (or is zero).
    BadAlignment(u32),
    /// The tensor info at position `index` has an empty name.
    EmptyTensorName {
        /// The tensor info's position, from 0.
        index: u64,
    },
    /// Two tensors have this name.
    DuplicateTensor(String),
    /// A tensor has `n_dims` dimensions, not 1 to [`MAX_DIMS`].
    BadDims {
        /// The tensor name.
        tensor: String,
        /// The dimension count found.
        n_dims: u32,
    },
    /// A tensor's type code is not a GGML type.
    UnknownTensorType {
        /// The tensor name.
        tensor: String,
        /// The type code found.
        code: u32,
    },
    /// A tensor's type code names a type that ggml no longer accepts in files ([`GgmlType::removed_name`]).
    RemovedTensorType {
        /// The tensor name.
        tensor: String,
        /// The type code found.
        code: u32,
        /// The removed type's name.
        name: &'static str,
    },
    /// A tensor's innermost dimension `ne0` is not a multiple of its type's block size.
    RowNotBlockMultiple {
        /// The tensor name.
        tensor: String,
        /// The tensor's type.
        ggml_type: GgmlType,
        /// The innermost dimension.
        ne0: u64,
    },
    /// A tensor's dimensions, element count or byte size do not fit in a signed or unsigned 64-bit integer.
    TensorTooLarge {
        /// The tensor name.
        tensor: String,
    },
    /// A tensor's offset in the data section is not a multiple of the alignment.
    MisalignedTensor {
        /// The tensor name.
        tensor: String,
        /// The offset stored in the file, relative to the data section.
        offset: u64,
        /// The file's alignment.
        alignment: u64,
    },
    /// A tensor's `size` bytes at `offset` in the data section (which starts at `data_offset`) run past the
    /// end of the `file_len`-byte file.
    TensorOutOfBounds {
        /// The tensor name.
        tensor: String,
        /// The offset stored in the file, relative to the data section.
        offset: u64,
        /// The byte size its shape and type give.
        size: u64,
        /// The absolute offset of the data section.
        data_offset: u64,
        /// The input's length.
        file_len: u64,
    },
    /// Two tensors share bytes.
    OverlappingTensors {
        /// The tensor that starts first.
        first: String,
        /// The tensor that starts inside it.
        second: String,
    },
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

impl core::error::Error for GgufError {}
