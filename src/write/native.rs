//! [`NativeArray`]: a metadata array as its caller holds it — numbers in the host's byte order, strings one by
//! one — which a writer encodes as it stores it, so that a caller holding native numbers (a C array, a
//! `&[f32]`) or C strings writes them without first making the pool encoding, which a writer without an
//! allocator has nowhere to keep.

use crate::format::MetaType;

/// A numeric array in the host's byte order, or a `string[]` given item by item, to declare as metadata with
/// [`Writer::metadata_native`](super::Writer::metadata_native). One-byte arrays (`u8[]`, `i8[]`, `bool[]`)
/// have no byte order: they are [`MetaValue`](crate::MetaValue)s as they are.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum NativeArray<'a> {
    /// `u16[]` (format 1.1).
    U16(&'a [u16]),
    /// `i16[]` (format 1.1).
    I16(&'a [i16]),
    /// `u32[]` (format 1.1).
    U32(&'a [u32]),
    /// `i32[]` (format 1.1).
    I32(&'a [i32]),
    /// `u64[]`.
    U64(&'a [u64]),
    /// `i64[]`.
    I64(&'a [i64]),
    /// `f32[]` (format 1.1; any bit pattern, kept exactly).
    F32(&'a [f32]),
    /// `f64[]` (any bit pattern, kept exactly).
    F64(&'a [f64]),
    /// `string[]`.
    Strings(StringItems<'a>),
}

/// A function that calls its argument with each item in order, stops as soon as that returns `false` (and
/// returns `false`), and returns `true` after the last item.
pub type EachItem<'a> = &'a dyn Fn(&mut dyn FnMut(&str) -> bool) -> bool;

/// The items of a `string[]` value, given one by one by a function ([`EachItem`]), which is called twice
/// (once to size the value, once to store it) and must give the same items both times.
#[derive(Clone, Copy)]
pub struct StringItems<'a> {
    each: EachItem<'a>,
}

impl<'a> StringItems<'a> {
    /// The items `each` gives.
    #[must_use]
    pub fn new(each: EachItem<'a>) -> Self {
        Self { each }
    }

    /// The pool encoding: each item a u32 little-endian length, then its bytes; `false` also for an item
    /// longer than `u32::MAX` bytes, which no encoding can hold.
    fn encode(&self, emit: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        (self.each)(&mut |s| {
            u32::try_from(s.len()).is_ok_and(|len| emit(&len.to_le_bytes()) && emit(s.as_bytes()))
        })
    }

    fn pool_len(&self) -> Option<usize> {
        let mut len = 0usize;
        let complete = (self.each)(&mut |s| match len.checked_add(4).and_then(|l| l.checked_add(s.len())) {
            Some(sum) => {
                len = sum;
                true
            }
            None => false,
        });
        complete.then_some(len)
    }
}

impl core::fmt::Debug for StringItems<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut list = f.debug_list();
        (self.each)(&mut |s| {
            list.entry(&s);
            true
        });
        list.finish()
    }
}

impl NativeArray<'_> {
    /// The array's metadata type.
    #[must_use]
    pub fn value_type(&self) -> MetaType {
        match self {
            NativeArray::U16(_) => MetaType::U16_ARRAY,
            NativeArray::I16(_) => MetaType::I16_ARRAY,
            NativeArray::U32(_) => MetaType::U32_ARRAY,
            NativeArray::I32(_) => MetaType::I32_ARRAY,
            NativeArray::U64(_) => MetaType::U64_ARRAY,
            NativeArray::I64(_) => MetaType::I64_ARRAY,
            NativeArray::F32(_) => MetaType::F32_ARRAY,
            NativeArray::F64(_) => MetaType::F64_ARRAY,
            NativeArray::Strings(_) => MetaType::STRING_ARRAY,
        }
    }

    /// The pool encoding (spec §7.1), element by element, little-endian: `emit` returns `false` to stop.
    pub(super) fn encode(&self, emit: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        match *self {
            NativeArray::U16(a) => a.iter().all(|x| emit(&x.to_le_bytes())),
            NativeArray::I16(a) => a.iter().all(|x| emit(&x.to_le_bytes())),
            NativeArray::U32(a) => a.iter().all(|x| emit(&x.to_le_bytes())),
            NativeArray::I32(a) => a.iter().all(|x| emit(&x.to_le_bytes())),
            NativeArray::U64(a) => a.iter().all(|x| emit(&x.to_le_bytes())),
            NativeArray::I64(a) => a.iter().all(|x| emit(&x.to_le_bytes())),
            NativeArray::F32(a) => a.iter().all(|x| emit(&x.to_bits().to_le_bytes())),
            NativeArray::F64(a) => a.iter().all(|x| emit(&x.to_bits().to_le_bytes())),
            NativeArray::Strings(items) => items.encode(emit),
        }
    }

    /// The pool bytes the encoding takes, or `None` past `usize`.
    pub(super) fn pool_len(&self) -> Option<usize> {
        let (count, width) = match self {
            NativeArray::U16(a) => (a.len(), 2),
            NativeArray::I16(a) => (a.len(), 2),
            NativeArray::U32(a) => (a.len(), 4),
            NativeArray::I32(a) => (a.len(), 4),
            NativeArray::U64(a) => (a.len(), 8),
            NativeArray::I64(a) => (a.len(), 8),
            NativeArray::F32(a) => (a.len(), 4),
            NativeArray::F64(a) => (a.len(), 8),
            NativeArray::Strings(items) => return items.pool_len(),
        };
        count.checked_mul(width)
    }
}
