//! [`OwnedMetaValue`]: a metadata value that owns its data, for values that outlive the container or the
//! caller's buffers they came from (a manifest, a foreign file, a Python object, a C caller's bytes).
//!
//! It holds the value as the pool encodes it (spec §7.1), so that viewing it as a [`MetaValue`] is O(1) at
//! every nesting level: the view's `string[]` and `array[]` iterators read the encoding lazily. Strings and
//! `bool[]` are kept in their own types instead, because viewing their encoded bytes would re-validate every
//! byte. Rejected: one variant per type with `Vec`s of native numbers, which needs a second, little-endian
//! copy of every array (and, for `array[]`, a tree of them built bottom-up) before a writer can borrow it.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use zerocopy::IntoBytes;

use super::{check_value, ArrayArray, MetaValue};
use crate::error::Rule;
use crate::format::MetaType;

/// A typed metadata value (spec §7.1) that owns its data.
///
/// Made from a borrowed [`MetaValue`] (`OwnedMetaValue::try_from(value)`), from native values (`From`
/// impls for scalars, strings and numeric slices; [`OwnedMetaValue::bytes`], [`OwnedMetaValue::u8_array`],
/// [`OwnedMetaValue::string_array`], [`OwnedMetaValue::array_array`]) or from a pool encoding
/// ([`OwnedMetaValue::from_encoded`]); viewed as a `MetaValue` in O(1) by [`OwnedMetaValue::as_value`], which
/// is what the writers take.
///
/// Every `OwnedMetaValue` is a value a writer accepts: a known type, `array[]` items that are arrays nested
/// at most 8 levels, strings and items that fit their u32 lengths. Equality compares types and bits, so a
/// NaN equals itself and `0.0` differs from `-0.0`.
///
/// ```
/// use tpack::{MetaValue, OwnedMetaValue};
/// let dims = OwnedMetaValue::from(&[2u32, 3][..]);
/// let nested = OwnedMetaValue::array_array([dims.clone(), OwnedMetaValue::string_array(["a", "b"])?])?;
/// let MetaValue::ArrayArray(mut items) = nested.as_value() else { unreachable!() };
/// assert_eq!(items.next(), Some(dims.as_value()));
/// # Ok::<(), tpack::UnwritableValue>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct OwnedMetaValue {
    value_type: MetaType,
    data: Data,
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum Data {
    /// `u64`, `i64`, `f64` and `bool`: the record's inline `value` bits.
    Inline(u64),
    /// `string`.
    Text(String),
    /// `bool[]`.
    Bools(Vec<bool>),
    /// Every other type: the pool encoding, valid for `value_type` (R47–R49).
    Encoded(Vec<u8>),
}

/// Why a value cannot become an [`OwnedMetaValue`]: a writer would refuse it, for the spec rule
/// [`UnwritableValue::rule`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnwritableValue {
    rule: Rule,
}

impl UnwritableValue {
    /// The rule the value would break: R46 for a type this crate does not write (one from a newer minor
    /// version), R47 for a value that does not fit its type (an `array[]` item that is not an array, nesting
    /// deeper than 8 levels, an item or value longer than `u32::MAX` bytes, an encoding that does not frame),
    /// R48 and R49 for a bad boolean or string in an encoding.
    #[must_use]
    pub const fn rule(self) -> Rule {
        self.rule
    }
}

impl fmt::Display for UnwritableValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the metadata value would break {}: {}", self.rule, self.rule.description())
    }
}

impl core::error::Error for UnwritableValue {}

const SHAPE: UnwritableValue = UnwritableValue { rule: Rule::MetaValueShape };

impl OwnedMetaValue {
    /// The value's type.
    #[must_use]
    pub fn value_type(&self) -> MetaType {
        self.value_type
    }

    /// The value as the readers give it and the writers take it. O(1): nothing is copied or re-validated.
    #[must_use]
    pub fn as_value(&self) -> MetaValue<'_> {
        match &self.data {
            // Made only from an inline type's valid bits, so the fallback is unreachable.
            Data::Inline(bits) => {
                MetaValue::from_inline(self.value_type, *bits).unwrap_or(MetaValue::U64(*bits))
            }
            Data::Text(text) => MetaValue::String(text),
            Data::Bools(bools) => MetaValue::BoolArray(bools),
            Data::Encoded(bytes) => MetaValue::decode(self.value_type, bytes),
        }
    }

    /// The value of type `value_type` whose pool encoding (spec §7.1) is `encoded`, validated as a reader
    /// validates a record's value (R47–R49).
    ///
    /// # Errors
    /// R46 for a type this crate does not know or one stored inline in the record (`u64`, `i64`, `f64`,
    /// `bool`: convert those from native values); R47–R49 for bytes that break those rules.
    pub fn from_encoded(value_type: MetaType, encoded: Vec<u8>) -> Result<Self, UnwritableValue> {
        if !value_type.is_known() || value_type.is_inline() {
            return Err(UnwritableValue { rule: Rule::MetaUnknownType });
        }
        check_value(0, value_type, &encoded).map_err(|e| UnwritableValue { rule: e.rule() })?;
        Ok(Self::encoded(value_type, encoded))
    }

    /// A `bytes` value.
    pub fn bytes(bytes: impl Into<Vec<u8>>) -> Self {
        Self { value_type: MetaType::BYTES, data: Data::Encoded(bytes.into()) }
    }

    /// A `u8[]` value (format 1.1).
    pub fn u8_array(items: impl Into<Vec<u8>>) -> Self {
        Self { value_type: MetaType::U8_ARRAY, data: Data::Encoded(items.into()) }
    }

    /// A `string[]` value.
    ///
    /// # Errors
    /// R47 when an item is longer than `u32::MAX` bytes.
    pub fn string_array<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Result<Self, UnwritableValue> {
        let mut encoded = Vec::new();
        for item in items {
            let item = item.as_ref().as_bytes();
            let len = u32::try_from(item.len()).map_err(|_| SHAPE)?;
            encoded.extend_from_slice(&len.to_le_bytes());
            encoded.extend_from_slice(item);
        }
        Ok(Self::encoded(MetaType::STRING_ARRAY, encoded))
    }

    /// An `array[]` value (format 1.1) holding `items` in order.
    ///
    /// # Errors
    /// R47 when an item is not an array, when the value would nest arrays more than 8 levels deep, or when
    /// an item is longer than `u32::MAX` bytes.
    pub fn array_array(items: impl IntoIterator<Item = OwnedMetaValue>) -> Result<Self, UnwritableValue> {
        let mut encoded = Vec::new();
        for item in items {
            if !item.value_type.is_array() {
                return Err(SHAPE);
            }
            let start = encoded.len();
            encoded.extend_from_slice(&[item.value_type.code(), 0, 0, 0, 0, 0, 0, 0]);
            let ok = item.as_value().encode(&mut |piece| {
                encoded.extend_from_slice(piece);
                true
            });
            let body = encoded.len().checked_sub(start).and_then(|n| n.checked_sub(8));
            let len = body.and_then(|n| u32::try_from(n).ok()).filter(|_| ok).ok_or(SHAPE)?;
            if let Some(field) = encoded.get_mut(start.saturating_add(4)..start.saturating_add(8)) {
                field.copy_from_slice(&len.to_le_bytes());
            }
        }
        // The items are valid values, so only the depth can break R47 here; the check walks the headers.
        if !ArrayArray::from_validated(&encoded).is_writable(1) {
            return Err(SHAPE);
        }
        Ok(Self::encoded(MetaType::ARRAY_ARRAY, encoded))
    }

    fn encoded(value_type: MetaType, encoded: Vec<u8>) -> Self {
        let data = match value_type {
            // Validated, so the conversions cannot fail; their fallbacks keep the value's type honest anyway.
            MetaType::STRING => Data::Text(String::from_utf8(encoded).unwrap_or_default()),
            MetaType::BOOL_ARRAY => Data::Bools(encoded.into_iter().map(|b| b != 0).collect()),
            _ => Data::Encoded(encoded),
        };
        Self { value_type, data }
    }

    fn inline(value_type: MetaType, bits: u64) -> Self {
        Self { value_type, data: Data::Inline(bits) }
    }
}

impl TryFrom<MetaValue<'_>> for OwnedMetaValue {
    type Error = UnwritableValue;

    /// Copies `value`. A value read from a container of a known minor version always converts.
    ///
    /// # Errors
    /// R46 for [`MetaValue::Unknown`]; R47 for a caller-made value a writer would refuse (see
    /// [`OwnedMetaValue::array_array`], [`OwnedMetaValue::string_array`]).
    fn try_from(value: MetaValue<'_>) -> Result<Self, UnwritableValue> {
        let value_type = value.value_type();
        match value {
            MetaValue::Unknown { .. } => Err(UnwritableValue { rule: Rule::MetaUnknownType }),
            MetaValue::U64(_) | MetaValue::I64(_) | MetaValue::F64(_) | MetaValue::Bool(_) => {
                Ok(Self::inline(value_type, value.inline_bits()))
            }
            MetaValue::String(text) => Ok(Self { value_type, data: Data::Text(text.into()) }),
            MetaValue::BoolArray(bools) => Ok(Self { value_type, data: Data::Bools(bools.to_vec()) }),
            other => {
                if !other.is_writable() {
                    return Err(SHAPE);
                }
                let mut encoded = Vec::new();
                let ok = other.encode(&mut |piece| {
                    encoded.extend_from_slice(piece);
                    true
                });
                // `encode` fails only for an item longer than u32::MAX bytes.
                ok.then(|| Self::encoded(value_type, encoded)).ok_or(SHAPE)
            }
        }
    }
}

impl TryFrom<&MetaValue<'_>> for OwnedMetaValue {
    type Error = UnwritableValue;

    /// See the impl for `MetaValue`.
    fn try_from(value: &MetaValue<'_>) -> Result<Self, UnwritableValue> {
        Self::try_from(*value)
    }
}

impl fmt::Debug for OwnedMetaValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.as_value(), f)
    }
}

impl PartialEq<MetaValue<'_>> for OwnedMetaValue {
    /// As `MetaValue`'s own equality: by value, so a NaN differs from itself.
    fn eq(&self, other: &MetaValue<'_>) -> bool {
        self.as_value() == *other
    }
}

impl From<&str> for OwnedMetaValue {
    fn from(text: &str) -> Self {
        Self { value_type: MetaType::STRING, data: Data::Text(text.into()) }
    }
}

impl From<String> for OwnedMetaValue {
    fn from(text: String) -> Self {
        Self { value_type: MetaType::STRING, data: Data::Text(text) }
    }
}

impl From<&[bool]> for OwnedMetaValue {
    fn from(items: &[bool]) -> Self {
        Self { value_type: MetaType::BOOL_ARRAY, data: Data::Bools(items.to_vec()) }
    }
}

impl From<Vec<bool>> for OwnedMetaValue {
    fn from(items: Vec<bool>) -> Self {
        Self { value_type: MetaType::BOOL_ARRAY, data: Data::Bools(items) }
    }
}

/// `From` a native scalar stored inline in the record.
macro_rules! from_inline {
    ($($native:ty => $type:ident, |$v:ident| $bits:expr;)*) => {$(
        impl From<$native> for OwnedMetaValue {
            fn from($v: $native) -> Self {
                Self::inline(MetaType::$type, $bits)
            }
        }
    )*};
}

from_inline! {
    u64 => U64, |v| v;
    i64 => I64, |v| u64::from_le_bytes(v.to_le_bytes());
    f64 => F64, |v| v.to_bits();
    bool => BOOL, |v| u64::from(v);
}

/// `From` a native scalar stored in the pool (format 1.1), little-endian.
macro_rules! from_pool_scalar {
    ($($native:ty => $type:ident, |$v:ident| $bytes:expr;)*) => {$(
        impl From<$native> for OwnedMetaValue {
            fn from($v: $native) -> Self {
                Self::encoded(MetaType::$type, $bytes.to_vec())
            }
        }
    )*};
}

from_pool_scalar! {
    u8 => U8, |v| [v];
    i8 => I8, |v| v.to_le_bytes();
    u16 => U16, |v| v.to_le_bytes();
    i16 => I16, |v| v.to_le_bytes();
    u32 => U32, |v| v.to_le_bytes();
    i32 => I32, |v| v.to_le_bytes();
    f32 => F32, |v| v.to_bits().to_le_bytes();
}

/// `From` a slice of native numbers: the array type of that element, its elements little-endian. (`u8`
/// has [`OwnedMetaValue::u8_array`] and [`OwnedMetaValue::bytes`] instead, since a byte slice could be
/// either.)
macro_rules! from_slice {
    ($($native:ty => $type:ident, $le:ty;)*) => {$(
        impl From<&[$native]> for OwnedMetaValue {
            fn from(items: &[$native]) -> Self {
                let le: Vec<$le> = items.iter().map(|&v| <$le>::new(v)).collect();
                Self::encoded(MetaType::$type, le.as_bytes().to_vec())
            }
        }

        impl From<Vec<$native>> for OwnedMetaValue {
            fn from(items: Vec<$native>) -> Self {
                Self::from(items.as_slice())
            }
        }
    )*};
}

from_slice! {
    u64 => U64_ARRAY, U64;
    i64 => I64_ARRAY, I64;
    f64 => F64_ARRAY, F64;
    u16 => U16_ARRAY, U16;
    i16 => I16_ARRAY, I16;
    u32 => U32_ARRAY, U32;
    i32 => I32_ARRAY, I32;
    f32 => F32_ARRAY, F32;
}

impl From<&[i8]> for OwnedMetaValue {
    fn from(items: &[i8]) -> Self {
        Self::encoded(MetaType::I8_ARRAY, items.as_bytes().to_vec())
    }
}

impl From<Vec<i8>> for OwnedMetaValue {
    fn from(items: Vec<i8>) -> Self {
        Self::from(items.as_slice())
    }
}
