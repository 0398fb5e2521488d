//! Writing containers: one streaming [`Writer`] over `embedded-io` sinks, in two modes ([`SeekWriter`],
//! [`StreamWriter`]), with bookkeeping in caller-chosen buffers, and (feature `alloc`) the in-memory
//! [`Builder`].
//!
//! ```
//! use tpack::write::{Builder, NewEntry};
//! let mut builder = Builder::new();
//! builder.push(NewEntry::new("w", tpack::Dtype::U8, &[2], &[1, 2]))?;
//! let bytes = builder.finish()?;
//! assert_eq!(tpack::Container::parse(&bytes)?.get("w").unwrap().payload(), [1, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The parts, by job: `decl` (what an entry is), `plan` (the layout engine: the canonical layout of spec
//! §11, without I/O), `meta_item` (how declared metadata is kept until it is sorted), `native` (numeric arrays in host order), `bookkeeping` (the
//! buffers), `writer` (the sink driver and its protocol), `sort`.

mod bookkeeping;
#[cfg(feature = "alloc")]
mod builder;
mod decl;
mod error;
mod meta_item;
mod native;
mod plan;
mod sort;
mod writer;

#[cfg(feature = "alloc")]
pub use bookkeeping::VecBookkeeping;
pub use bookkeeping::{Bookkeeping, Buffer, FixedBookkeeping, ShortStorage, SliceBookkeeping};
#[cfg(feature = "alloc")]
pub use builder::Builder;
pub use decl::{EntryDecl, NewEntry};
pub use error::{WriteError, WriteErrorClass};
pub use native::{EachItem, NativeArray, StringItems};
pub use writer::{Mode, OnePass, SeekWriter, Seekable, StreamWriter, Writer};
