//! How a writer keeps a declared metadata value until it knows the key order: an item header (a zerocopy
//! struct), then the key, then the pool bytes — appended to one byte buffer in declaration order.

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::bookkeeping::{extend, Buf};
use super::native::NativeArray;
use crate::format::MetaType;
use crate::meta_value::MetaValue;

/// The fixed part of an item: what the record will hold but for the offsets, which the key order decides.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct ItemHeader {
    /// Key length in bytes.
    key_len: U16,
    /// Value type code.
    value_type: u8,
    /// The record's inline `value`: a scalar's bits, else 0.
    inline: U64,
    /// Pool bytes of the value after the key.
    value_len: U32,
}

/// A stored item, viewed.
pub(super) struct Item<'a> {
    pub(super) key: &'a [u8],
    pub(super) value_type: MetaType,
    pub(super) inline: u64,
    pub(super) value: &'a [u8],
}

/// Why an item could not be stored.
pub(super) enum PushError {
    /// The value's pool bytes do not fit a record's `u32` length (R40).
    TooLong,
    /// The buffer is full.
    Full,
}

/// A value as an item keeps it: a borrowed [`MetaValue`], or a [`NativeArray`] encoded as it is stored.
#[derive(Clone, Copy)]
pub(super) enum Value<'v, 'a> {
    Meta(&'v MetaValue<'a>),
    Native(&'v NativeArray<'a>),
}

impl Value<'_, '_> {
    pub(super) fn value_type(self) -> MetaType {
        match self {
            Value::Meta(v) => v.value_type(),
            Value::Native(v) => v.value_type(),
        }
    }

    fn pool_len(self) -> Option<usize> {
        match self {
            Value::Meta(v) => v.pool_len(),
            Value::Native(v) => v.pool_len(),
        }
    }

    fn inline_bits(self) -> u64 {
        match self {
            Value::Meta(v) => v.inline_bits(),
            Value::Native(_) => 0,
        }
    }

    fn encode(self, emit: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        match self {
            Value::Meta(v) => v.encode(&mut |piece| emit(piece)),
            Value::Native(v) => v.encode(emit),
        }
    }
}

/// Appends the item for `key` (1 to 1024 bytes, checked by the caller) and `value` to `items`.
pub(super) fn push<B: Buf<u8>>(
    items: &mut B,
    key_len: u16,
    key: &str,
    value: Value<'_, '_>,
) -> Result<(), PushError> {
    let value_len = value.pool_len().and_then(|len| u32::try_from(len).ok()).ok_or(PushError::TooLong)?;
    let header = ItemHeader {
        key_len: U16::new(key_len),
        value_type: value.value_type().code(),
        inline: U64::new(value.inline_bits()),
        value_len: U32::new(value_len),
    };
    let stored = extend(items, header.as_bytes())
        && extend(items, key.as_bytes())
        && value.encode(&mut |piece| extend(items, piece));
    if stored {
        Ok(())
    } else {
        Err(PushError::Full)
    }
}

/// The item that starts at byte `start` of `items`; empty fields if the bytes are not an item (never for a
/// buffer that `push` filled).
pub(super) fn item_at(items: &[u8], start: u32) -> Item<'_> {
    let rest = usize::try_from(start).ok().and_then(|s| items.get(s..)).unwrap_or(&[]);
    let Ok((header, rest)) = ItemHeader::ref_from_prefix(rest) else {
        return Item { key: &[], value_type: MetaType::from_code(0), inline: 0, value: &[] };
    };
    let (key, rest) = rest.split_at_checked(usize::from(header.key_len.get())).unwrap_or((&[], &[]));
    let value_len = usize::try_from(header.value_len.get()).unwrap_or(0);
    let value = rest.get(..value_len).unwrap_or(&[]);
    Item { key, value_type: MetaType::from_code(header.value_type), inline: header.inline.get(), value }
}
