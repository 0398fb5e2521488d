//! [`MetaValue`]: a typed metadata value, as the reader hands it out and as the writers take it — one type,
//! so that a value read from one container can be written to another as it is.

use core::fmt;
use core::iter::FusedIterator;

use zerocopy::little_endian::{F64, I64, U32, U64};
use zerocopy::{FromBytes, IntoBytes};

use crate::format::MetaType;

/// A typed metadata value (spec §7.1), borrowed: from a container when read, from the caller when written.
///
/// Numeric arrays are slices of little-endian elements, which view the pool in place on any host; to write
/// native numbers, map them first (`[1u64, 2].map(U64::new)`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum MetaValue<'a> {
    /// `u64`.
    U64(u64),
    /// `i64`.
    I64(i64),
    /// `f64` (any bit pattern, NaNs included, kept exactly).
    F64(f64),
    /// `bool`.
    Bool(bool),
    /// `string`.
    String(&'a str),
    /// `bytes`.
    Bytes(&'a [u8]),
    /// `u64[]`.
    U64Array(&'a [U64]),
    /// `i64[]`.
    I64Array(&'a [I64]),
    /// `f64[]`.
    F64Array(&'a [F64]),
    /// `string[]`.
    StringArray(StringArray<'a>),
    /// A type from a newer minor version, read from a file: its code and pool bytes. Writers refuse it (they
    /// write format 1.0, where the code is not defined: R46).
    Unknown {
        /// The type code.
        code: u8,
        /// The value's bytes in the pool.
        bytes: &'a [u8],
    },
}

impl<'a> MetaValue<'a> {
    /// The value's type.
    #[must_use]
    pub fn value_type(&self) -> MetaType {
        match self {
            MetaValue::U64(_) => MetaType::U64,
            MetaValue::I64(_) => MetaType::I64,
            MetaValue::F64(_) => MetaType::F64,
            MetaValue::Bool(_) => MetaType::BOOL,
            MetaValue::String(_) => MetaType::STRING,
            MetaValue::Bytes(_) => MetaType::BYTES,
            MetaValue::U64Array(_) => MetaType::U64_ARRAY,
            MetaValue::I64Array(_) => MetaType::I64_ARRAY,
            MetaValue::F64Array(_) => MetaType::F64_ARRAY,
            MetaValue::StringArray(_) => MetaType::STRING_ARRAY,
            MetaValue::Unknown { code, .. } => MetaType::from_code(*code),
        }
    }

    /// The record's inline `value` field: the bits of a scalar, 0 for a value in the pool.
    pub(crate) fn inline_bits(&self) -> u64 {
        match *self {
            MetaValue::U64(v) => v,
            MetaValue::I64(v) => u64::from_le_bytes(v.to_le_bytes()),
            MetaValue::F64(v) => v.to_bits(),
            MetaValue::Bool(v) => u64::from(v),
            _ => 0,
        }
    }

    /// The pool bytes of the value, as pieces in order: `emit` is called with each and returns `false` to stop
    /// (a full buffer), which makes this return `false`. A scalar emits nothing.
    pub(crate) fn encode(&self, emit: &mut impl FnMut(&[u8]) -> bool) -> bool {
        match *self {
            MetaValue::U64(_) | MetaValue::I64(_) | MetaValue::F64(_) | MetaValue::Bool(_) => true,
            MetaValue::String(s) => emit(s.as_bytes()),
            MetaValue::Bytes(b) | MetaValue::Unknown { bytes: b, .. } => emit(b),
            MetaValue::U64Array(a) => emit(a.as_bytes()),
            MetaValue::I64Array(a) => emit(a.as_bytes()),
            MetaValue::F64Array(a) => emit(a.as_bytes()),
            MetaValue::StringArray(items) => items.encode(emit),
        }
    }

    /// The number of pool bytes [`MetaValue::encode`] emits, or `None` past `usize`.
    pub(crate) fn pool_len(&self) -> Option<usize> {
        let mut len = 0usize;
        let mut overflow = false;
        self.encode(&mut |piece| {
            match len.checked_add(piece.len()) {
                Some(sum) => len = sum,
                None => overflow = true,
            }
            !overflow
        });
        (!overflow).then_some(len)
    }
}

/// The items of a `string[]` value, in order: an iterator of `&str` that is cheap to copy.
///
/// Read from a container it views the pool's encoding (each item a u32 little-endian length, then its UTF-8
/// bytes); to write one, make it from a slice with [`StringArray::new`].
#[derive(Clone, Copy)]
pub struct StringArray<'a> {
    items: Items<'a>,
}

#[derive(Clone, Copy)]
enum Items<'a> {
    /// The pool encoding, validated by the reader (R47, R49).
    Encoded(&'a [u8]),
    /// The caller's strings.
    Slice(&'a [&'a str]),
}

impl<'a> StringArray<'a> {
    /// A `string[]` value holding `items`, to write.
    #[must_use]
    pub const fn new(items: &'a [&'a str]) -> Self {
        Self { items: Items::Slice(items) }
    }

    /// A view of pool bytes that the reader validated as a `string[]` value.
    pub(crate) fn from_validated(encoded: &'a [u8]) -> Self {
        Self { items: Items::Encoded(encoded) }
    }

    /// The items' bytes of an encoded value, before UTF-8 validation; stops at the first framing error.
    pub(crate) fn encoded_items(encoded: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
        let mut rest = encoded;
        core::iter::from_fn(move || {
            let (item, tail) = split_item(rest)?;
            rest = tail;
            Some(item)
        })
    }

    /// The pool encoding, piece by piece (see [`MetaValue::encode`]). `false` also for an item longer than
    /// `u32::MAX` bytes, which no encoding can hold.
    fn encode(self, emit: &mut impl FnMut(&[u8]) -> bool) -> bool {
        match self.items {
            Items::Encoded(bytes) => emit(bytes),
            Items::Slice(items) => items.iter().all(|s| {
                u32::try_from(s.len()).is_ok_and(|len| emit(&len.to_le_bytes()) && emit(s.as_bytes()))
            }),
        }
    }
}

impl<'a> Iterator for StringArray<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match &mut self.items {
            Items::Encoded(rest) => {
                let (item, tail) = split_item(rest)?;
                *rest = tail;
                // Validated by the reader (R49); the fallback is unreachable.
                Some(core::str::from_utf8(item).unwrap_or(""))
            }
            Items::Slice(items) => {
                let (first, tail) = items.split_first()?;
                *items = tail;
                Some(first)
            }
        }
    }
}

impl FusedIterator for StringArray<'_> {}

impl PartialEq for StringArray<'_> {
    /// Item by item, whichever way each side holds them.
    fn eq(&self, other: &Self) -> bool {
        self.eq_items(*other)
    }
}

impl StringArray<'_> {
    fn eq_items(self, other: StringArray<'_>) -> bool {
        Iterator::eq(self, other)
    }
}

impl Eq for StringArray<'_> {}

impl fmt::Debug for StringArray<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(*self).finish()
    }
}

/// One `string[]` item: a u32 length, then that many bytes. `None` if the bytes do not hold a whole item.
pub(crate) fn split_item(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = U32::read_from_prefix(bytes).ok()?;
    rest.split_at_checked(usize::try_from(len.get()).ok()?)
}
