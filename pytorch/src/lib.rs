//! Reads PyTorch checkpoints without running them: `torch.save` zip archives (`.pt`, `.pth`,
//! `pytorch_model.bin`), legacy `torch.save` streams (`_use_new_zipfile_serialization=False`) and
//! TorchScript archives (`torch.jit.save`).
//!
//! A checkpoint is a Python pickle, and unpickling one with Python runs whatever code its globals name.
//! Here a restricted machine ([`pickle`]) interprets the opcodes itself and builds only tensors, storages,
//! dicts, lists, tuples and plain values; any other global is refused by its name, and nothing is imported
//! or called. The zip reader ([`zip`]) reads stored records as views of the input and refuses unsafe names,
//! duplicates and compressed records. Every view's offset, sizes and strides are checked, in overflow-checked
//! arithmetic, against its storage's length.
//!
//! Nested dicts flatten with dots (`encoder.layers.0.weight`). Each tensor is its own row-major run of bytes:
//! a view of the input when it is contiguous in its storage, else a copy; two tensors over one storage
//! (tied weights, views) are both kept, each with its own bytes, and marked [`Tensor::shares_storage`].
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod bytes;
mod checkpoint;
mod element;
mod error;
pub mod flatten;
pub mod pickle;
pub mod view;
pub mod zip;

pub use checkpoint::{read, sniff, Checkpoint, Kind, Tensor, LEGACY_HEAD, LEGACY_MAGIC};
pub use element::Element;
pub use error::{Error, Result};
pub use flatten::Scalar;

#[cfg(test)]
mod tests;
