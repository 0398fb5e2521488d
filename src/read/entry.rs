//! Accessors of one validated entry: name, dtype, shape, payload bytes and typed views.

use core::fmt;
use core::iter::FusedIterator;
use core::ops::Range;

use zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout};

use super::Container;
use crate::checksum::crc32;
use crate::error::{Error, Nesting};
use crate::format::{Descriptor, Dtype, Packing, FLAG_HAS_TARGET, MAX_RANK};
use crate::layout::{name_in, slice};

/// One entry of a validated [`Container`]. Every accessor is infallible and O(1), except
/// [`Entry::verify`] (linear in the payload) and [`Entry::nested`] (a re-parse of the nested container).
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    // Only what the accessors need, not the whole `Container`: an `Entry` is made on every lookup and
    // iteration step, and copying the container's eight slices dominated a hashed lookup.
    /// The container's bytes (payloads and nested containers live there).
    bytes: &'a [u8],
    /// The name pool.
    names: &'a [u8],
    /// The stored payload checksums.
    checksums: &'a [U32],
    descriptor: &'a Descriptor,
    /// Position in the table.
    position: u32,
    /// Nesting depth of the container holding this entry.
    depth: u8,
}

/// An entry's shape: up to [`MAX_RANK`] dimensions, outermost first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    dims: [u64; MAX_RANK],
    rank: u8,
}

impl Shape {
    /// The dimensions, outermost first; empty for a scalar.
    #[must_use]
    pub fn dims(&self) -> &[u64] {
        self.dims.get(..usize::from(self.rank)).unwrap_or(&[])
    }

    /// Number of dimensions.
    #[must_use]
    pub fn rank(&self) -> usize {
        usize::from(self.rank)
    }

    /// Number of elements: the product of the dimensions (1 for a scalar). Exact for the shape of every entry
    /// a reader accepts, whatever its dtype: rule R25 bounds the product to 64 bits for every entry.
    #[must_use]
    pub fn elements(&self) -> u64 {
        // R25 was checked for this shape; the fallback is unreachable.
        crate::layout::element_count(self.dims().iter().copied()).unwrap_or(0)
    }
}

impl<'a> Entry<'a> {
    pub(super) fn new(container: &Container<'a>, position: u32, descriptor: &'a Descriptor) -> Self {
        Self {
            bytes: container.bytes,
            names: container.names,
            checksums: container.checksums,
            descriptor,
            position,
            depth: container.depth,
        }
    }

    /// Position in the table (payload order), from 0: what [`Container::entry`] takes, and the `entry` of an
    /// [`Error`] about this entry.
    #[must_use]
    pub fn position(&self) -> usize {
        usize::try_from(self.position).unwrap_or(usize::MAX)
    }

    /// [`Entry::position`] as the table stores it.
    pub(crate) const fn index(&self) -> u32 {
        self.position
    }

    /// The raw on-disk descriptor.
    #[must_use]
    pub fn descriptor(&self) -> &'a Descriptor {
        self.descriptor
    }

    /// The name's bytes: UTF-8 (the reader checked, R18) of 1 to 1024 bytes, what [`Entry::name`] gives as a
    /// `&str`. For a binding that hands out bytes: [`Entry::name`] links `core::str::from_utf8` (about 620 bytes
    /// of flash on a Cortex-M4), which a firmware that only verifies, decodes and prints messages can do without.
    #[must_use]
    pub fn name_bytes(&self) -> &'a [u8] {
        name_in(self.names, self.descriptor)
    }

    /// The name; validated UTF-8 of at most 1024 bytes.
    #[must_use]
    pub fn name(&self) -> &'a str {
        // The reader validated this UTF-8 (R18); the fallback is unreachable.
        core::str::from_utf8(name_in(self.names, self.descriptor)).unwrap_or("")
    }

    /// The element type; one this crate does not know ([`Dtype::is_known`]) only in files of a newer minor
    /// version.
    #[must_use]
    pub fn dtype(&self) -> Dtype {
        Dtype::from_code(self.descriptor.dtype.get())
    }

    /// The shape.
    #[must_use]
    pub fn shape(&self) -> Shape {
        let mut dims = [0u64; MAX_RANK];
        for (out, d) in dims.iter_mut().zip(&self.descriptor.dims) {
            *out = d.get();
        }
        Shape { dims, rank: self.descriptor.rank }
    }

    /// Payload alignment in bytes, relative to the container's start.
    #[must_use]
    pub fn alignment(&self) -> u32 {
        self.descriptor.alignment.get()
    }

    /// The load address, if the entry has one.
    #[must_use]
    pub fn target(&self) -> Option<u64> {
        (self.descriptor.flags & FLAG_HAS_TARGET != 0).then(|| self.descriptor.target.get())
    }

    /// Payload offset from the container's start.
    #[must_use]
    pub fn offset(&self) -> u64 {
        self.descriptor.offset.get()
    }

    /// Payload length in bytes.
    #[must_use]
    pub fn byte_len(&self) -> u64 {
        self.descriptor.length.get()
    }

    /// The payload's byte range within the container.
    #[must_use]
    pub fn range(&self) -> Range<u64> {
        // offset + length was checked against the container's length (R33).
        self.offset()..self.offset().saturating_add(self.byte_len())
    }

    /// The payload bytes, borrowed from the container.
    #[must_use]
    pub fn payload(&self) -> &'a [u8] {
        // R33 placed the payload inside the container; the fallback is unreachable.
        slice(self.bytes, self.descriptor.offset.get(), self.descriptor.length.get()).unwrap_or(&[])
    }

    /// The payload checksum stored in the trailer.
    #[must_use]
    pub fn checksum(&self) -> u32 {
        usize::try_from(self.position).ok().and_then(|i| self.checksums.get(i)).map_or(0, |c| c.get())
    }

    /// Checks the payload against its stored checksum (R50).
    ///
    /// # Errors
    /// [`Error::EntryChecksum`] when they differ.
    pub fn verify(&self) -> Result<(), Error> {
        self.check_checksum(crc32(self.payload()))
    }

    /// R50 for a payload whose checksum is `computed`.
    pub(crate) fn check_checksum(&self, computed: u32) -> Result<(), Error> {
        let stored = self.checksum();
        if stored == computed {
            Ok(())
        } else {
            Err(Error::EntryChecksum { entry: self.position, stored, computed, nesting: Nesting::OUTERMOST })
        }
    }

    /// The payload as little-endian elements of type `T`, on any host and at any alignment; `None` unless the
    /// dtype stores elements of `T` (see [`LeElement`]).
    #[must_use]
    pub fn le<T: LeElement>(&self) -> Option<&'a [T]> {
        if !T::accepts(self.dtype()) {
            return None;
        }
        <[T]>::ref_from_bytes(self.payload()).ok()
    }

    /// The payload as native `T` values, where that is possible without copying: the host is little-endian,
    /// the dtype stores `T` and the payload is aligned for `T` in memory. `None` otherwise; use
    /// [`Entry::le`] then.
    #[must_use]
    pub fn native<T: NativeElement>(&self) -> Option<&'a [T]> {
        if cfg!(target_endian = "big") && core::mem::size_of::<T>() > 1 {
            return None;
        }
        if !T::accepts(self.dtype()) {
            return None;
        }
        <[T]>::ref_from_bytes(self.payload()).ok()
    }

    /// The nested container a [`Dtype::CONTAINER`] entry holds; `None` for any other dtype.
    ///
    /// The reader validated it already, so this cannot fail; but it parses the nested container again, which
    /// costs what [`Container::parse`] of it costs (linear in its table, names and metadata, and in those of
    /// containers nested in it). Keep the result rather than calling this in a loop.
    #[must_use]
    pub fn nested(&self) -> Option<Container<'a>> {
        if self.dtype() != Dtype::CONTAINER {
            return None;
        }
        Container::parse_at(self.payload(), self.depth.saturating_add(1)).ok()
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An element type that [`Entry::le`] can view a payload as.
pub trait LeElement: FromBytes + Immutable + KnownLayout + Sized + sealed::Sealed {
    /// Whether entries of `dtype` hold elements of this type.
    fn accepts(dtype: Dtype) -> bool;
}

/// A native element type that [`Entry::native`] can view an aligned payload as on a little-endian host.
pub trait NativeElement: FromBytes + Immutable + KnownLayout + Sized + sealed::Sealed {
    /// Whether entries of `dtype` hold elements of this type.
    fn accepts(dtype: Dtype) -> bool;
}

macro_rules! elements {
    ($trait:ident: $($ty:ty => $($dtype:ident)|+;)*) => {$(
        impl $trait for $ty {
            fn accepts(dtype: Dtype) -> bool {
                matches!(dtype, $(Dtype::$dtype)|+)
            }
        }
    )*};
}

macro_rules! sealed {
    ($($ty:ty),*) => {$(impl sealed::Sealed for $ty {})*};
}

sealed!(F64, F32, I64, I32, I16, U64, U32, U16, f64, f32, i64, i32, i16, i8, u64, u32, u16, u8);

elements! { LeElement:
    F64 => F64;
    F32 => F32;
    I64 => I64;
    I32 => I32;
    I16 => I16;
    U64 => U64;
    U32 => U32;
    // F16 and BF16 have no Rust type yet: their bits are viewed as u16.
    U16 => U16 | F16 | BF16;
    // One-byte elements have no byte order.
    i8 => I8;
}

/// Whether entries of `dtype` can be viewed as bytes: one-byte elements, blocks, or bytes.
fn is_bytewise(dtype: Dtype) -> bool {
    matches!(dtype.packing(), Some(Packing::Element(1) | Packing::Block { .. } | Packing::Bytes))
}

impl LeElement for u8 {
    /// One-byte elements (`U8`, `BOOL`, the FP8s), and the raw bytes of block-quantized, `RAW` and `CONTAINER`
    /// entries.
    fn accepts(dtype: Dtype) -> bool {
        is_bytewise(dtype)
    }
}

impl NativeElement for u8 {
    /// As for [`LeElement`].
    fn accepts(dtype: Dtype) -> bool {
        is_bytewise(dtype)
    }
}

elements! { NativeElement:
    f64 => F64;
    f32 => F32;
    i64 => I64;
    i32 => I32;
    i16 => I16;
    i8 => I8;
    u64 => U64;
    u32 => U32;
    u16 => U16 | F16 | BF16;
}

impl fmt::Debug for Entry<'_> {
    /// What the entry is and where — never its payload bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("position", &self.position)
            .field("name", &self.name())
            .field("dtype", &self.dtype())
            .field("shape", &self.shape().dims())
            .field("offset", &self.offset())
            .field("byte_len", &self.byte_len())
            .field("alignment", &self.alignment())
            .field("target", &self.target())
            .finish()
    }
}

/// The entries of a container in table order.
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    container: Container<'a>,
    next: usize,
}

impl<'a> Entries<'a> {
    pub(super) fn new(container: Container<'a>) -> Self {
        Self { container, next: 0 }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        let entry = self.container.entry(self.next)?;
        self.next = self.next.saturating_add(1);
        Some(entry)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.container.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Entries<'_> {}
impl FusedIterator for Entries<'_> {}
