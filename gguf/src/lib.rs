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
//! memory stays proportional to the number of keys and tensors whatever counts the file declares (a metadata
//! array is a validated view of the input, read element by element with [`GgufArray::iter`], never copied),
//! and the running time is O(n log n) in the input's size (the uniqueness and overlap checks sort or search).
//!
//! ```
//! // The smallest GGUF file: a version-3 header declaring no tensors and no metadata.
//! let mut bytes = b"GGUF".to_vec();
//! bytes.extend(3u32.to_le_bytes());
//! bytes.extend(0u64.to_le_bytes());
//! bytes.extend(0u64.to_le_bytes());
//! let file = tpack_gguf::parse(&bytes)?;
//! assert_eq!((file.version, file.alignment, file.tensors.len()), (3, 32, 0));
//! assert!(tpack_gguf::parse(b"GGML").is_err());
//! # Ok::<(), tpack_gguf::GgufError>(())
//! ```
//!
//! The crate is `no_std` and needs only `alloc`: the list of metadata keys, the tensor list and each
//! tensor's dimensions are vectors (their lengths come from the file), and error messages name keys and tensors as owned
//! strings. Uniqueness of keys and names is checked with a `BTreeSet`, so no hasher is needed either. It
//! knows nothing of tpack: mapping GGML types to other formats is the caller's business.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::as_conversions,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

extern crate alloc;
#[cfg(test)]
extern crate std;

mod error;
mod file;
mod format;
mod read;
#[cfg(test)]
mod tests;
mod value;

pub use error::GgufError;
pub use file::{Gguf, GgufTensor};
pub use format::{
    value_type_name, GgmlType, ALIGNMENT_KEY, DEFAULT_ALIGNMENT, MAGIC, MAX_ARRAY_DEPTH, MAX_DIMS,
};
pub use read::parse;
pub use value::{GgufArray, GgufElements, GgufValue};
