//! [`MetaValue`]: a typed metadata value, as the reader hands it out and as the writers take it — one type,
//! so that a value read from one container can be written to another as it is.

use core::fmt;
use core::iter::FusedIterator;

use zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use zerocopy::{FromBytes, IntoBytes, TryFromBytes};

use crate::error::Rule;
use crate::format::{MetaType, MAX_ARRAY_DEPTH};

mod check;
#[cfg(feature = "alloc")]
mod owned;

pub(crate) use check::check_value;
#[cfg(feature = "alloc")]
pub use owned::{OwnedMetaValue, UnwritableValue};

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
    /// `u8` (format 1.1).
    U8(u8),
    /// `i8` (format 1.1).
    I8(i8),
    /// `u16` (format 1.1).
    U16(u16),
    /// `i16` (format 1.1).
    I16(i16),
    /// `u32` (format 1.1).
    U32(u32),
    /// `i32` (format 1.1).
    I32(i32),
    /// `f32` (format 1.1; any bit pattern, kept exactly).
    F32(f32),
    /// `u8[]` (format 1.1).
    U8Array(&'a [u8]),
    /// `i8[]` (format 1.1).
    I8Array(&'a [i8]),
    /// `u16[]` (format 1.1).
    U16Array(&'a [U16]),
    /// `i16[]` (format 1.1).
    I16Array(&'a [I16]),
    /// `u32[]` (format 1.1).
    U32Array(&'a [U32]),
    /// `i32[]` (format 1.1).
    I32Array(&'a [I32]),
    /// `f32[]` (format 1.1).
    F32Array(&'a [F32]),
    /// `bool[]` (format 1.1).
    BoolArray(&'a [bool]),
    /// `array[]` (format 1.1): arrays, each of its own array type.
    ArrayArray(ArrayArray<'a>),
    /// A type from a newer minor version, read from a file: its code and pool bytes. Writers refuse it (they
    /// write format 1.1 at most, where the code is not defined: R46).
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
            MetaValue::U8(_) => MetaType::U8,
            MetaValue::I8(_) => MetaType::I8,
            MetaValue::U16(_) => MetaType::U16,
            MetaValue::I16(_) => MetaType::I16,
            MetaValue::U32(_) => MetaType::U32,
            MetaValue::I32(_) => MetaType::I32,
            MetaValue::F32(_) => MetaType::F32,
            MetaValue::U8Array(_) => MetaType::U8_ARRAY,
            MetaValue::I8Array(_) => MetaType::I8_ARRAY,
            MetaValue::U16Array(_) => MetaType::U16_ARRAY,
            MetaValue::I16Array(_) => MetaType::I16_ARRAY,
            MetaValue::U32Array(_) => MetaType::U32_ARRAY,
            MetaValue::I32Array(_) => MetaType::I32_ARRAY,
            MetaValue::F32Array(_) => MetaType::F32_ARRAY,
            MetaValue::BoolArray(_) => MetaType::BOOL_ARRAY,
            MetaValue::ArrayArray(_) => MetaType::ARRAY_ARRAY,
            MetaValue::Unknown { code, .. } => MetaType::from_code(*code),
        }
    }

    /// The value of an inline type (`u64`, `i64`, `f64`, `bool`: the types a record holds in its 8-byte
    /// `value` field, spec §7) whose field holds `bits`; the inverse of what a writer stores there.
    ///
    /// `None` for a type held in the pool (make it with [`MetaValue::from_encoded`]) or one this crate does
    /// not know, and for a `bool` that is neither 0 nor 1 (R48).
    ///
    /// ```
    /// use tpack::{MetaType, MetaValue};
    /// assert_eq!(MetaValue::from_inline(MetaType::I64, u64::MAX), Some(MetaValue::I64(-1)));
    /// assert_eq!(MetaValue::from_inline(MetaType::BOOL, 2), None);
    /// assert_eq!(MetaValue::from_inline(MetaType::U32, 7), None);
    /// ```
    #[must_use]
    pub fn from_inline(value_type: MetaType, bits: u64) -> Option<MetaValue<'static>> {
        Some(match value_type {
            MetaType::U64 => MetaValue::U64(bits),
            MetaType::I64 => MetaValue::I64(i64::from_le_bytes(bits.to_le_bytes())),
            MetaType::F64 => MetaValue::F64(f64::from_bits(bits)),
            MetaType::BOOL => MetaValue::Bool(match bits {
                0 => false,
                1 => true,
                _ => return None,
            }),
            _ => return None,
        })
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
            MetaValue::U8(v) => emit(&[v]),
            MetaValue::I8(v) => emit(&v.to_le_bytes()),
            MetaValue::U16(v) => emit(&v.to_le_bytes()),
            MetaValue::I16(v) => emit(&v.to_le_bytes()),
            MetaValue::U32(v) => emit(&v.to_le_bytes()),
            MetaValue::I32(v) => emit(&v.to_le_bytes()),
            MetaValue::F32(v) => emit(&v.to_bits().to_le_bytes()),
            MetaValue::U8Array(a) => emit(a),
            MetaValue::I8Array(a) => emit(a.as_bytes()),
            MetaValue::U16Array(a) => emit(a.as_bytes()),
            MetaValue::I16Array(a) => emit(a.as_bytes()),
            MetaValue::U32Array(a) => emit(a.as_bytes()),
            MetaValue::I32Array(a) => emit(a.as_bytes()),
            MetaValue::F32Array(a) => emit(a.as_bytes()),
            MetaValue::BoolArray(a) => emit(a.as_bytes()),
            MetaValue::ArrayArray(items) => items.encode(emit),
        }
    }

    /// Whether a writer can write the value: a known type, and for an `array[]`, array items nested at most
    /// [`MAX_ARRAY_DEPTH`] levels.
    pub(crate) fn is_writable(&self) -> bool {
        match self {
            MetaValue::Unknown { .. } => false,
            MetaValue::ArrayArray(items) => items.is_writable(1),
            _ => true,
        }
    }

    /// The value of `value_type` held by validated pool bytes `bytes` (spec §7.1); `Unknown` for a type this
    /// crate does not know or an inline one (the caller handles those).
    pub(crate) fn decode(value_type: MetaType, bytes: &'a [u8]) -> MetaValue<'a> {
        // Validated (R47–R49), so every fallback below is unreachable.
        let byte = bytes.first().copied().unwrap_or(0);
        let word16 = || bytes.try_into().map_or([0; 2], |b: [u8; 2]| b);
        let word32 = || bytes.try_into().map_or([0; 4], |b: [u8; 4]| b);
        match value_type {
            MetaType::STRING => MetaValue::String(core::str::from_utf8(bytes).unwrap_or("")),
            MetaType::BYTES => MetaValue::Bytes(bytes),
            MetaType::U64_ARRAY => MetaValue::U64Array(<[U64]>::ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::I64_ARRAY => MetaValue::I64Array(<[I64]>::ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::F64_ARRAY => MetaValue::F64Array(<[F64]>::ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::STRING_ARRAY => MetaValue::StringArray(StringArray::from_validated(bytes)),
            MetaType::U8 => MetaValue::U8(byte),
            MetaType::I8 => MetaValue::I8(i8::from_le_bytes([byte])),
            MetaType::U16 => MetaValue::U16(u16::from_le_bytes(word16())),
            MetaType::I16 => MetaValue::I16(i16::from_le_bytes(word16())),
            MetaType::U32 => MetaValue::U32(u32::from_le_bytes(word32())),
            MetaType::I32 => MetaValue::I32(i32::from_le_bytes(word32())),
            MetaType::F32 => MetaValue::F32(f32::from_bits(u32::from_le_bytes(word32()))),
            MetaType::U8_ARRAY => MetaValue::U8Array(bytes),
            MetaType::I8_ARRAY => MetaValue::I8Array(<[i8]>::ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::U16_ARRAY => MetaValue::U16Array(<[U16]>::ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::I16_ARRAY => MetaValue::I16Array(<[I16]>::ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::U32_ARRAY => MetaValue::U32Array(<[U32]>::ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::I32_ARRAY => MetaValue::I32Array(<[I32]>::ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::F32_ARRAY => MetaValue::F32Array(<[F32]>::ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::BOOL_ARRAY => MetaValue::BoolArray(<[bool]>::try_ref_from_bytes(bytes).unwrap_or(&[])),
            MetaType::ARRAY_ARRAY => MetaValue::ArrayArray(ArrayArray::from_validated(bytes)),
            other => MetaValue::Unknown { code: other.code(), bytes },
        }
    }

    /// The value of type `value_type` whose pool encoding (spec §7.1) is `bytes`, validated as a reader
    /// validates a record's value (R47–R49: framing, UTF-8, booleans, `array[]` nesting), so that a value
    /// taken as bytes — from another language, from a file — can be written back. The result borrows
    /// `bytes`.
    ///
    /// `None` for a type stored inline in the record (`u64`, `i64`, `f64`, `bool`: make those variants
    /// directly), a type this crate does not know, or bytes that break one of those rules.
    ///
    /// ```
    /// use tpack::{MetaType, MetaValue};
    /// let encoded = [2, 0, 0, 0, b'h', b'i', 0, 0, 0, 0];
    /// let value = MetaValue::from_encoded(MetaType::STRING_ARRAY, &encoded).unwrap();
    /// let MetaValue::StringArray(items) = value else { unreachable!() };
    /// assert_eq!(items.collect::<Vec<_>>(), ["hi", ""]);
    /// assert_eq!(MetaValue::from_encoded(MetaType::STRING_ARRAY, &encoded[..9]), None);
    /// ```
    #[must_use]
    pub fn from_encoded(value_type: MetaType, bytes: &'a [u8]) -> Option<MetaValue<'a>> {
        check::is_valid_pool_value(value_type, bytes).then(|| MetaValue::decode(value_type, bytes))
    }

    /// [`MetaValue::from_encoded`], saying which rule the bytes break when they are refused: R46
    /// ([`Rule::MetaUnknownType`]) for a type this crate does not know or one stored inline in the record,
    /// R47, R48 or R49 for bytes that break that rule — what a reader would say of a record holding them.
    ///
    /// # Errors
    /// The rule, as above.
    ///
    /// ```
    /// use tpack::{MetaType, MetaValue, Rule};
    /// assert_eq!(MetaValue::try_from_encoded(MetaType::BOOL_ARRAY, &[1, 2]), Err(Rule::MetaBool));
    /// assert_eq!(MetaValue::try_from_encoded(MetaType::from_code(99), &[]), Err(Rule::MetaUnknownType));
    /// ```
    pub fn try_from_encoded(value_type: MetaType, bytes: &'a [u8]) -> Result<MetaValue<'a>, Rule> {
        if !value_type.is_known() || value_type.is_inline() {
            return Err(Rule::MetaUnknownType);
        }
        check_value(0, value_type, bytes).map_err(|e| e.rule())?;
        Ok(MetaValue::decode(value_type, bytes))
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

/// The items of an `array[]` value, in order: an iterator of array-typed [`MetaValue`]s that is cheap to
/// copy.
///
/// Read from a container it views the pool's encoding (each item an 8-byte header — type, three zero bytes,
/// u32 length — then the item's value); to write one, make it from a slice with [`ArrayArray::new`].
#[derive(Clone, Copy)]
pub struct ArrayArray<'a> {
    items: Arrays<'a>,
}

#[derive(Clone, Copy)]
enum Arrays<'a> {
    /// The pool encoding, validated by the reader (R47–R49).
    Encoded(&'a [u8]),
    /// The caller's values.
    Slice(&'a [MetaValue<'a>]),
}

impl<'a> ArrayArray<'a> {
    /// An `array[]` value holding `items`, to write; each must be an array (`u64[]`, `string[]`, `u8[]`,
    /// `bool[]`, `array[]`, …), and a writer refuses the value otherwise.
    #[must_use]
    pub const fn new(items: &'a [MetaValue<'a>]) -> Self {
        Self { items: Arrays::Slice(items) }
    }

    /// A view of pool bytes that the reader validated as an `array[]` value.
    pub(crate) fn from_validated(encoded: &'a [u8]) -> Self {
        Self { items: Arrays::Encoded(encoded) }
    }

    fn is_writable(self, depth: u8) -> bool {
        depth <= MAX_ARRAY_DEPTH
            && self.into_iter().all(|item| match item {
                MetaValue::ArrayArray(inner) => inner.is_writable(depth.saturating_add(1)),
                other => other.value_type().is_array() && other.is_writable(),
            })
    }

    fn encode(self, emit: &mut impl FnMut(&[u8]) -> bool) -> bool {
        match self.items {
            Arrays::Encoded(bytes) => emit(bytes),
            Arrays::Slice(items) => items.iter().all(|item| {
                let Some(len) = item.pool_len().and_then(|len| u32::try_from(len).ok()) else {
                    return false;
                };
                let [a, b, c, d] = len.to_le_bytes();
                emit(&[item.value_type().code(), 0, 0, 0, a, b, c, d]) && item.encode(emit)
            }),
        }
    }
}

impl<'a> Iterator for ArrayArray<'a> {
    type Item = MetaValue<'a>;

    fn next(&mut self) -> Option<MetaValue<'a>> {
        match &mut self.items {
            Arrays::Encoded(rest) => {
                let item = split_array_item(rest)?;
                *rest = item.rest;
                Some(MetaValue::decode(item.value_type, item.body))
            }
            Arrays::Slice(items) => {
                let (first, tail) = items.split_first()?;
                *items = tail;
                Some(*first)
            }
        }
    }
}

impl FusedIterator for ArrayArray<'_> {}

impl PartialEq for ArrayArray<'_> {
    /// Item by item, whichever way each side holds them.
    fn eq(&self, other: &Self) -> bool {
        Iterator::eq(*self, *other)
    }
}

impl fmt::Debug for ArrayArray<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(*self).finish()
    }
}

/// One `array[]` item, split off the front of an encoding.
pub(crate) struct ArrayItem<'a> {
    pub(crate) value_type: MetaType,
    /// Whether the header's three reserved bytes are zero.
    pub(crate) reserved_zero: bool,
    pub(crate) body: &'a [u8],
    pub(crate) rest: &'a [u8],
}

/// The first `array[]` item of `bytes`. `None` if the bytes do not hold a whole item.
pub(crate) fn split_array_item(bytes: &[u8]) -> Option<ArrayItem<'_>> {
    let (header, rest) = bytes.split_at_checked(8)?;
    let (kind, reserved, len) = match header {
        [kind, r0, r1, r2, l0, l1, l2, l3] => {
            (*kind, [*r0, *r1, *r2], u32::from_le_bytes([*l0, *l1, *l2, *l3]))
        }
        _ => return None,
    };
    let (body, rest) = rest.split_at_checked(usize::try_from(len).ok()?)?;
    Some(ArrayItem { value_type: MetaType::from_code(kind), reserved_zero: reserved == [0; 3], body, rest })
}

/// One `string[]` item: a u32 length, then that many bytes. `None` if the bytes do not hold a whole item.
pub(crate) fn split_item(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = U32::read_from_prefix(bytes).ok()?;
    rest.split_at_checked(usize::try_from(len.get()).ok()?)
}
