//! Where a writer keeps its bookkeeping: the table, names, metadata and checksums — O(entries + name and
//! metadata bytes), never payload bytes. `heapless` buffers of a caller-chosen capacity without `alloc`
//! ([`HeaplessTables`]), growable `Vec`s with it ([`VecTables`]).

use crate::format::Descriptor;

/// A growable-or-bounded buffer: what a writer needs of `Vec` and `heapless::Vec`.
pub trait Buf<T> {
    /// Appends `value`; `false` when the buffer is full.
    fn try_push(&mut self, value: T) -> bool;
    /// The items so far.
    fn items(&self) -> &[T];
    /// The items so far, mutable.
    fn items_mut(&mut self) -> &mut [T];
}

impl<T, const N: usize> Buf<T> for heapless::Vec<T, N> {
    fn try_push(&mut self, value: T) -> bool {
        self.push(value).is_ok()
    }
    fn items(&self) -> &[T] {
        self
    }
    fn items_mut(&mut self) -> &mut [T] {
        self
    }
}

#[cfg(feature = "alloc")]
impl<T> Buf<T> for alloc::vec::Vec<T> {
    fn try_push(&mut self, value: T) -> bool {
        self.push(value);
        true
    }
    fn items(&self) -> &[T] {
        self
    }
    fn items_mut(&mut self) -> &mut [T] {
        self
    }
}

/// Appends all of `bytes`, or nothing when they do not fit.
pub(crate) fn extend<B: Buf<u8>>(buf: &mut B, bytes: &[u8]) -> bool {
    // Checked up front so a full buffer is left as it was, not half-written.
    for &b in bytes {
        if !buf.try_push(b) {
            return false;
        }
    }
    true
}

/// Which bookkeeping buffer ran out of room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Table {
    /// Entry descriptors (and with them the index and checksums).
    Entries,
    /// Name bytes.
    Names,
    /// Metadata records.
    MetaRecords,
    /// Metadata key and value bytes.
    MetaBytes,
}

/// The writer's bookkeeping, generic over its buffers.
#[derive(Debug, Default)]
pub struct Tables<D, B, W> {
    pub(crate) descriptors: D,
    pub(crate) names: B,
    pub(crate) meta_items: B,
    pub(crate) meta_order: W,
    pub(crate) checksums: W,
    pub(crate) index: W,
}

/// Fixed-capacity bookkeeping for `no_std` without an allocator: up to `ENTRIES` entries and metadata
/// records, and up to `BYTES` bytes of names and (separately) of encoded metadata. Running out is
/// [`crate::WriteError::Capacity`], never a panic. Its size is about `ENTRIES × 116 + 2 × BYTES` bytes.
pub type HeaplessTables<const ENTRIES: usize, const BYTES: usize> =
    Tables<heapless::Vec<Descriptor, ENTRIES>, heapless::Vec<u8, BYTES>, heapless::Vec<u32, ENTRIES>>;

/// Unbounded bookkeeping on the heap.
#[cfg(feature = "alloc")]
pub type VecTables = Tables<alloc::vec::Vec<Descriptor>, alloc::vec::Vec<u8>, alloc::vec::Vec<u32>>;

impl<D: Default, B: Default, W: Default> Tables<D, B, W> {
    /// Empty buffers.
    #[must_use]
    pub fn new() -> Self {
        Self {
            descriptors: D::default(),
            names: B::default(),
            meta_items: B::default(),
            meta_order: W::default(),
            checksums: W::default(),
            index: W::default(),
        }
    }
}
