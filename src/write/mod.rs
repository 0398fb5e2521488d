//! Writing containers: streaming writers over `embedded-io` sinks ([`SeekWriter`], [`StreamWriter`]) with
//! bookkeeping in caller-sized storage, and (with `alloc`) the in-memory [`Builder`].

#[cfg(feature = "alloc")]
mod builder;
mod error;
mod sort;
mod storage;
mod stream;
mod value;

#[cfg(feature = "alloc")]
pub use builder::{Builder, NewEntry};
pub use error::WriteError;
#[cfg(feature = "alloc")]
pub use storage::VecTables;
pub use storage::{Buf, HeaplessTables, Table, Tables};
pub use stream::{EntryDecl, SeekWriter, StreamWriter};
pub use value::Value;
