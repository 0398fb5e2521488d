//! Where a writer keeps its bookkeeping — descriptors, names, metadata and checksums: O(entries + name and
//! metadata bytes), never payload bytes. [`FixedBookkeeping`] has a capacity fixed at compile time and
//! needs no allocator; [`VecBookkeeping`] (feature `alloc`) grows on the heap.

use crate::format::Descriptor;

mod sealed {
    pub trait Sealed {}
}

/// A growable-or-bounded buffer: what a writer needs of a vector. Sealed: implemented by the buffers of
/// [`FixedBookkeeping`] and [`VecBookkeeping`] only, so that it can grow methods without a breaking change.
pub trait Buf<T>: sealed::Sealed + Default {
    /// Appends `value`; `false` when the buffer is full (and then it is unchanged).
    fn try_push(&mut self, value: T) -> bool;
    /// The items so far.
    fn items(&self) -> &[T];
    /// The items so far, mutable.
    fn items_mut(&mut self) -> &mut [T];
}

impl<T, const N: usize> sealed::Sealed for heapless::Vec<T, N> {}

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
impl<T> sealed::Sealed for alloc::vec::Vec<T> {}

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

/// Appends all of `bytes`; `false` when they do not all fit. The bytes that did fit stay: the caller
/// poisons the writer on `false`, so a partial item is never used.
pub(super) fn extend<B: Buf<u8>>(buf: &mut B, bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| buf.try_push(b))
}

/// How a writer keeps its bookkeeping: the choice of buffers, as a type. Sealed; the implementors are
/// [`FixedBookkeeping`] and [`VecBookkeeping`].
pub trait Bookkeeping: sealed::Sealed {
    /// Buffer of descriptors.
    #[doc(hidden)]
    type Descriptors: Buf<Descriptor>;
    /// Buffer of name and metadata bytes.
    #[doc(hidden)]
    type Bytes: Buf<u8>;
    /// Buffer of entry numbers, metadata item offsets and checksums.
    #[doc(hidden)]
    type Words: Buf<u32>;
}

/// Bookkeeping of a fixed capacity, without an allocator (for `no_std`): up to `ENTRIES` entries and
/// `ENTRIES` metadata records, up to `BYTES` bytes of names and, separately, `BYTES` bytes of encoded
/// metadata (each record takes 15 bytes plus its key and pool value). Running out is
/// [`crate::WriteError::BufferFull`], never a panic. The writer holds the buffers inline: about
/// `ENTRIES × 120 + 2 × BYTES` bytes.
///
/// Pass the type as a value: `SeekWriter::new(sink, FixedBookkeeping::<16, 1024>)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FixedBookkeeping<const ENTRIES: usize, const BYTES: usize>;

impl<const ENTRIES: usize, const BYTES: usize> sealed::Sealed for FixedBookkeeping<ENTRIES, BYTES> {}

impl<const ENTRIES: usize, const BYTES: usize> Bookkeeping for FixedBookkeeping<ENTRIES, BYTES> {
    type Descriptors = heapless::Vec<Descriptor, ENTRIES>;
    type Bytes = heapless::Vec<u8, BYTES>;
    type Words = heapless::Vec<u32, ENTRIES>;
}

/// Unbounded bookkeeping on the heap (feature `alloc`). Pass it as a value:
/// `SeekWriter::new(sink, VecBookkeeping)`.
#[cfg(feature = "alloc")]
#[derive(Clone, Copy, Debug, Default)]
pub struct VecBookkeeping;

#[cfg(feature = "alloc")]
impl sealed::Sealed for VecBookkeeping {}

#[cfg(feature = "alloc")]
impl Bookkeeping for VecBookkeeping {
    type Descriptors = alloc::vec::Vec<Descriptor>;
    type Bytes = alloc::vec::Vec<u8>;
    type Words = alloc::vec::Vec<u32>;
}

/// Which bookkeeping buffer ran out of room ([`crate::WriteError::BufferFull`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Buffer {
    /// Entry descriptors (and with them the name index and the checksums).
    Entries,
    /// Name bytes.
    Names,
    /// Metadata records.
    MetadataRecords,
    /// Encoded metadata: keys and values.
    MetadataBytes,
}

/// The buffers themselves.
pub(super) struct Ledger<K: Bookkeeping> {
    pub(super) descriptors: K::Descriptors,
    pub(super) names: K::Bytes,
    /// Encoded metadata items, in declaration order (`meta_item`).
    pub(super) meta_items: K::Bytes,
    /// Offsets of the items in `meta_items`; sorted by key when declaration ends.
    pub(super) meta_order: K::Words,
    pub(super) checksums: K::Words,
    /// Entry numbers; sorted by name when declaration ends.
    pub(super) index: K::Words,
}

impl<K: Bookkeeping> Default for Ledger<K> {
    fn default() -> Self {
        Self {
            descriptors: Default::default(),
            names: Default::default(),
            meta_items: Default::default(),
            meta_order: Default::default(),
            checksums: Default::default(),
            index: Default::default(),
        }
    }
}
