//! Accessors of one validated entry: name, dtype, shape, payload bytes and typed views.

use core::iter::FusedIterator;
use core::ops::Range;

use zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout};

use crate::checksum::crc32;
use crate::error::Error;
use crate::format::{Descriptor, Dtype, FLAG_HAS_TARGET, MAX_RANK};
use crate::read::{payload_of, Container};

/// One entry of a validated [`Container`]. Every accessor is infallible and O(1), except
/// [`Entry::verify`] (linear in the payload) and [`Entry::nested`] (linear in the nested table).
#[derive(Clone, Copy, Debug)]
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
    index: u32,
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

    /// Number of elements (1 for a scalar). Cannot overflow: the reader has checked it.
    #[must_use]
    pub fn elements(&self) -> u64 {
        self.dims().iter().try_fold(1u64, |a, &d| a.checked_mul(d)).unwrap_or(u64::MAX)
    }
}

impl<'a> Entry<'a> {
    pub(crate) fn new(container: &Container<'a>, index: u32, descriptor: &'a Descriptor) -> Self {
        Self {
            bytes: container.bytes,
            names: container.names,
            checksums: container.checksums,
            descriptor,
            index,
            depth: container.depth,
        }
    }

    /// Position in the table (payload order).
    #[must_use]
    pub fn index(&self) -> usize {
        usize::try_from(self.index).unwrap_or(usize::MAX)
    }

    /// The raw on-disk descriptor.
    #[must_use]
    pub fn descriptor(&self) -> &'a Descriptor {
        self.descriptor
    }

    /// The name; validated UTF-8 of at most 1024 bytes.
    #[must_use]
    pub fn name(&self) -> &'a str {
        // The reader validated this UTF-8 (R18); the fallback is unreachable.
        let d = self.descriptor;
        let start = usize::try_from(d.name_offset.get()).unwrap_or(usize::MAX);
        let len = usize::try_from(d.name_len.get()).unwrap_or(0);
        let bytes = start.checked_add(len).and_then(|end| self.names.get(start..end)).unwrap_or(&[]);
        core::str::from_utf8(bytes).unwrap_or("")
    }

    /// The element type; [`Dtype::Unknown`] only in files of a newer minor version.
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
        payload_of(self.bytes, self.descriptor)
    }

    /// The payload checksum stored in the trailer.
    #[must_use]
    pub fn checksum(&self) -> u32 {
        usize::try_from(self.index).ok().and_then(|i| self.checksums.get(i)).map_or(0, |c| c.get())
    }

    /// Checks the payload against its stored checksum (R50).
    ///
    /// # Errors
    /// [`Error::EntryChecksum`] when they differ.
    pub fn verify(&self) -> Result<(), Error> {
        let stored = self.checksum();
        let computed = crc32(self.payload());
        if stored == computed {
            Ok(())
        } else {
            Err(Error::EntryChecksum { entry: self.index, stored, computed })
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

    /// The nested container a [`Dtype::Container`] entry holds; `None` for any other dtype.
    ///
    /// The reader validated it already, so this re-parse cannot fail; it costs time linear in the nested
    /// table.
    #[must_use]
    pub fn nested(&self) -> Option<Container<'a>> {
        if self.dtype() != Dtype::Container {
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
    u8 => U8 | Bool | F8E4M3 | F8E5M2 | Raw | Container | Q8_0 | Q4_0;
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
    u8 => U8 | Bool | F8E4M3 | F8E5M2 | Raw | Container | Q8_0 | Q4_0;
}

/// The entries of a container in table order.
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    container: Container<'a>,
    next: usize,
}

impl<'a> Entries<'a> {
    pub(crate) fn new(container: Container<'a>) -> Self {
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
