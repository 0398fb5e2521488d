//! tpack: a precisely specified, zero-copy container for model weights.
//!
//! A container is a fixed header, a fixed-size descriptor table, a sorted name index, a name pool, typed
//! metadata and aligned payloads, checksummed with CRC-32 (the byte-level definition is `spec/FORMAT.md`).
//! [`Container::parse`] validates every rule of the spec on any `&[u8]` — flash-mapped, memory-mapped, at any
//! alignment — without allocating and without `unsafe`; afterwards every accessor is infallible.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut builder = tpack::write::Builder::new();
//! builder.push(tpack::write::NewEntry::new("w", tpack::Dtype::F32, &[2], &[0, 0, 128, 63, 0, 0, 0, 64]))?;
//! let bytes = builder.finish()?;
//! let container = tpack::Container::parse(&bytes)?;
//! container.verify()?; // payload checksums
//! let w = container.get("w").expect("entry w");
//! let values: Vec<f32> = w.le::<zerocopy::little_endian::F32>().unwrap().iter().map(|v| v.get()).collect();
//! assert_eq!(values, [1.0, 2.0]);
//! # Ok(()) }
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
// No `unsafe` anywhere in the reader or writers; the one exception is mapping a file (feature `std`), which
// no safe API can do.
#![cfg_attr(not(feature = "std"), forbid(unsafe_code))]
#![cfg_attr(feature = "std", deny(unsafe_code))]
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

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod auth;
pub mod checksum;
mod error;
#[cfg(feature = "std")]
mod file;
pub mod format;
mod layout;
mod meta_value;
#[cfg(feature = "std")]
mod name_index;
mod read;
#[cfg(feature = "sign")]
pub mod sign;
pub mod stream;
/// UTF-8 validation without `core::str::from_utf8`, for the C API in a firmware: not a stable API.
#[doc(hidden)]
pub mod utf8;
pub mod write;

/// The `embedded-io` traits the writers' sinks implement (re-exported so that a dependent names the same
/// version).
pub use embedded_io;
/// Fixed texts packed as the rule messages are, for the C API's own messages in a firmware: not a stable API.
#[doc(hidden)]
pub use error::packed as packed_text;
pub use error::{Error, ErrorContext, Nesting, Rule, ShapeError, SignedAttribute};
#[cfg(feature = "std")]
pub use file::{AtomicFile, FileSink, MappedFile, OpenError, PrivatePayload};
pub use format::{Dtype, MetaType, Packing};
pub use meta_value::{ArrayArray, MetaValue, StringArray};
#[cfg(feature = "alloc")]
pub use meta_value::{OwnedMetaValue, UnwritableValue};
#[cfg(feature = "std")]
pub use name_index::NameIndex;
pub use read::{
    declared_len, Container, Entries, Entry, EntryVerification, LeElement, MetaIter, Metadata, NativeElement,
    Shape, Verification,
};
/// The `zerocopy` little-endian types that typed views and metadata arrays use (re-exported so that a
/// dependent names the same version).
pub use zerocopy;

/// The README's code must compile and run.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
