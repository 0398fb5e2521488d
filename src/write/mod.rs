//! Writing: one streaming [`Writer`] over `embedded-io` sinks, in two modes ([`SeekWriter`],
//! [`StreamWriter`]), with bookkeeping in caller-chosen buffers.
//!
//! The parts, by job: `decl` (what an entry is), `plan` (the layout engine: the canonical layout of spec
//! §11, without I/O), `meta_item` (how declared metadata is kept until it is sorted), `bookkeeping` (the
//! buffers), `writer` (the sink driver and its protocol), `sort`.

mod bookkeeping;
mod decl;
mod error;
mod meta_item;
mod plan;
mod sort;
mod writer;

#[cfg(feature = "alloc")]
pub use bookkeeping::VecBookkeeping;
pub use bookkeeping::{Bookkeeping, Buf, Buffer, FixedBookkeeping, ShortStorage, SliceBookkeeping};
pub use decl::{EntryDecl, NewEntry};
pub use error::{WriteError, WriteErrorClass};
pub use writer::{Mode, OnePass, SeekWriter, Seekable, StreamWriter, Writer};
