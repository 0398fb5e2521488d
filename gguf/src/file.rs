//! What [`crate::parse`] returns: the file, its metadata values and its tensors, borrowing from the input.

use alloc::vec::Vec;

use crate::format::GgmlType;
use crate::value::GgufValue;

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
