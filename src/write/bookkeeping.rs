//! Where a writer keeps its bookkeeping — descriptors, names, metadata and checksums: O(entries + name and
//! metadata bytes), never payload bytes. [`FixedBookkeeping`] has a capacity fixed at compile time and
//! needs no allocator; [`SliceBookkeeping`] lives in storage the caller lends, of a capacity chosen at run
//! time (no allocator either: a static buffer, a C caller's block); [`VecBookkeeping`] (feature `alloc`)
//! grows on the heap.

use core::fmt;
use core::mem::size_of;

use zerocopy::FromBytes;

use crate::format::Descriptor;

mod sealed {
    pub trait Sealed {}
}

/// A growable-or-bounded buffer: what a writer needs of a vector. Sealed: implemented by the buffers of
/// [`FixedBookkeeping`], [`SliceBookkeeping`] and [`VecBookkeeping`] only, so that it can grow methods
/// without a breaking change.
pub trait Buf<T>: sealed::Sealed {
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

/// A buffer over a borrowed slice: the items are `slots[..len]`; the rest is room (its contents are
/// whatever the storage held, never read). The buffers of [`SliceBookkeeping`].
#[doc(hidden)]
pub struct SliceBuf<'a, T> {
    slots: &'a mut [T],
    len: usize,
}

impl<'a, T> SliceBuf<'a, T> {
    fn new(slots: &'a mut [T]) -> Self {
        Self { slots, len: 0 }
    }
}

impl<T> sealed::Sealed for SliceBuf<'_, T> {}

impl<T> Buf<T> for SliceBuf<'_, T> {
    fn try_push(&mut self, value: T) -> bool {
        match self.slots.get_mut(self.len) {
            Some(slot) => {
                *slot = value;
                // Below `slots.len()`, so no overflow.
                self.len = self.len.saturating_add(1);
                true
            }
            None => false,
        }
    }
    fn items(&self) -> &[T] {
        self.slots.get(..self.len).unwrap_or(&[])
    }
    fn items_mut(&mut self) -> &mut [T] {
        self.slots.get_mut(..self.len).unwrap_or(&mut [])
    }
}

/// How a writer keeps its bookkeeping: the choice of buffers, as a type. Sealed; the implementors are
/// [`FixedBookkeeping`], [`SliceBookkeeping`] and [`VecBookkeeping`].
pub trait Bookkeeping: sealed::Sealed + Sized {
    /// Buffer of descriptors.
    #[doc(hidden)]
    type Descriptors: Buf<Descriptor>;
    /// Buffer of name and metadata bytes.
    #[doc(hidden)]
    type Bytes: Buf<u8>;
    /// Buffer of entry numbers, metadata item offsets and checksums.
    #[doc(hidden)]
    type Words: Buf<u32>;
    /// The empty buffers.
    #[doc(hidden)]
    fn into_ledger(self) -> Ledger<Self>;
}

/// Bookkeeping of a fixed capacity, without an allocator (for `no_std`): up to `ENTRIES` entries and
/// `ENTRIES` metadata records, up to `BYTES` bytes of names and, separately, `BYTES` bytes of encoded
/// metadata (each record takes 15 bytes plus its key and pool value). Running out is
/// [`crate::write::WriteError::BufferFull`], never a panic. The writer holds the buffers inline: about
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
    fn into_ledger(self) -> Ledger<Self> {
        Ledger {
            descriptors: heapless::Vec::new(),
            names: heapless::Vec::new(),
            meta_items: heapless::Vec::new(),
            meta_order: heapless::Vec::new(),
            checksums: heapless::Vec::new(),
            index: heapless::Vec::new(),
        }
    }
}

/// Bookkeeping in storage the caller lends, of a capacity chosen at run time, without an allocator: up to
/// `entries` entries and `entries` metadata records, up to `bytes` bytes of names and, separately, `bytes`
/// bytes of encoded metadata — the capacities of [`FixedBookkeeping`]`<entries, bytes>`, which it matches
/// byte for byte in what it accepts. Running out is [`crate::write::WriteError::BufferFull`], never a panic.
///
/// The storage is any byte slice of at least [`SliceBookkeeping::storage_len`] bytes, at any alignment
/// (a `static` buffer, a block from a C caller). The writer borrows it until it is finished or dropped;
/// what the storage held before is overwritten and never read.
///
/// ```
/// use tpack::write::{EntryDecl, SliceBookkeeping, StreamWriter};
/// use tpack::Dtype;
/// let mut storage = [0u8; 2048];
/// let bookkeeping = SliceBookkeeping::new(&mut storage, 8, 256)?;
/// let mut out = Vec::new();
/// let mut w = StreamWriter::new(embedded_io_adapters::std::FromStd::new(&mut out), bookkeeping);
/// w.declare(EntryDecl::new("w", Dtype::U8, &[2]))?;
/// w.write_entry(&[1, 2])?;
/// w.finish()?;
/// assert_eq!(tpack::Container::parse(&out)?.get("w").unwrap().payload(), [1, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SliceBookkeeping<'a> {
    ledger: Ledger<SliceBookkeeping<'a>>,
}

impl fmt::Debug for SliceBookkeeping<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SliceBookkeeping")
            .field("entries", &self.ledger.descriptors.slots.len())
            .field("bytes", &self.ledger.names.slots.len())
            .finish()
    }
}

/// Bytes of alignment slack [`SliceBookkeeping::storage_len`] allows for, so that any start address works.
const WORD_SLACK: usize = 3;

impl<'a> SliceBookkeeping<'a> {
    /// Bytes of storage that [`SliceBookkeeping::new`] needs for `entries` entries (and metadata records)
    /// and `bytes` name (and, separately, metadata) bytes, whatever the storage's alignment: three 4-byte
    /// words and one descriptor per entry, twice `bytes`, and 3 bytes of alignment slack. `None` when that
    /// does not fit in a `usize`.
    #[must_use]
    pub const fn storage_len(entries: usize, bytes: usize) -> Option<usize> {
        // Three u32 words (index, checksum, metadata order) and a descriptor.
        const PER_ENTRY: usize = size_of::<Descriptor>() + 12;
        let per_entry = PER_ENTRY;
        let Some(tables) = entries.checked_mul(per_entry) else { return None };
        let Some(text) = bytes.checked_mul(2) else { return None };
        let Some(sum) = tables.checked_add(text) else { return None };
        sum.checked_add(WORD_SLACK)
    }

    /// Bookkeeping for up to `entries` entries (and metadata records) and `bytes` name (and metadata)
    /// bytes, in `storage`.
    ///
    /// # Errors
    /// [`ShortStorage`] when `storage` is shorter than [`SliceBookkeeping::storage_len`]`(entries, bytes)`
    /// (or that length overflows).
    pub fn new(storage: &'a mut [u8], entries: usize, bytes: usize) -> Result<Self, ShortStorage> {
        let short = ShortStorage { needed: Self::storage_len(entries, bytes), len: storage.len() };
        if short.needed.is_none_or(|needed| storage.len() < needed) {
            return Err(short);
        }
        // The words first, at the first 4-aligned byte (at most WORD_SLACK bytes in).
        let skip = storage.as_ptr().align_offset(core::mem::align_of::<u32>());
        let storage = storage.get_mut(skip..).ok_or(short)?;
        let (meta_order, rest) = <[u32]>::mut_from_prefix_with_elems(storage, entries).map_err(|_| short)?;
        let (checksums, rest) = <[u32]>::mut_from_prefix_with_elems(rest, entries).map_err(|_| short)?;
        let (index, rest) = <[u32]>::mut_from_prefix_with_elems(rest, entries).map_err(|_| short)?;
        let (descriptors, rest) =
            <[Descriptor]>::mut_from_prefix_with_elems(rest, entries).map_err(|_| short)?;
        let (names, rest) = rest.split_at_mut_checked(bytes).ok_or(short)?;
        let meta_items = rest.get_mut(..bytes).ok_or(short)?;
        Ok(Self {
            ledger: Ledger {
                descriptors: SliceBuf::new(descriptors),
                names: SliceBuf::new(names),
                meta_items: SliceBuf::new(meta_items),
                meta_order: SliceBuf::new(meta_order),
                checksums: SliceBuf::new(checksums),
                index: SliceBuf::new(index),
            },
        })
    }
}

impl sealed::Sealed for SliceBookkeeping<'_> {}

impl<'a> Bookkeeping for SliceBookkeeping<'a> {
    type Descriptors = SliceBuf<'a, Descriptor>;
    type Bytes = SliceBuf<'a, u8>;
    type Words = SliceBuf<'a, u32>;
    fn into_ledger(self) -> Ledger<Self> {
        self.ledger
    }
}

/// The storage given to [`SliceBookkeeping::new`] is too short for the capacities asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortStorage {
    /// The bytes needed ([`SliceBookkeeping::storage_len`]); `None` when that overflows a `usize`.
    pub needed: Option<usize>,
    /// The bytes given.
    pub len: usize,
}

impl fmt::Display for ShortStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.needed {
            Some(needed) => write!(f, "bookkeeping storage of {} bytes, {needed} needed", self.len),
            None => {
                write!(f, "bookkeeping storage of {} bytes, and the capacity asked for overflows", self.len)
            }
        }
    }
}

impl core::error::Error for ShortStorage {}

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
    fn into_ledger(self) -> Ledger<Self> {
        Ledger {
            descriptors: alloc::vec::Vec::new(),
            names: alloc::vec::Vec::new(),
            meta_items: alloc::vec::Vec::new(),
            meta_order: alloc::vec::Vec::new(),
            checksums: alloc::vec::Vec::new(),
            index: alloc::vec::Vec::new(),
        }
    }
}

/// Which bookkeeping buffer ran out of room ([`crate::write::WriteError::BufferFull`]).
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

impl Buffer {
    /// The buffer's number, in the order above (0 for entries … 3 for metadata bytes): what a binding that
    /// numbers the buffers (the C API's `tpack_error.value`) reports. The match is exhaustive, so a buffer
    /// added later must be given the next number here.
    #[must_use]
    pub const fn number(self) -> u8 {
        match self {
            Buffer::Entries => 0,
            Buffer::Names => 1,
            Buffer::MetadataRecords => 2,
            Buffer::MetadataBytes => 3,
        }
    }
}

/// The buffers themselves. (Public in name only: the module is private, so it cannot be named outside.)
#[doc(hidden)]
pub struct Ledger<K: Bookkeeping> {
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
