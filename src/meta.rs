//! Typed metadata: validation of the records and pool (R40–R49) and the
//! [`MetaValue`] view of a validated record.

use core::cmp::Ordering;
use core::iter::FusedIterator;

use zerocopy::little_endian::{F64, I64, U32, U64};
use zerocopy::FromBytes;

use crate::error::Error;
use crate::format::{is_newer_minor, MetaRecord, MetaType, MAX_KEY_LEN};

/// The bytes `[offset, offset + len)` of `pool`, or `None` when they are not all inside it.
fn pool_slice(pool: &[u8], offset: u32, len: u32) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    pool.get(start..end)
}

/// Checks the records against the pool, in record order. `minor` is the file's minor version.
pub(crate) fn check(records: &[MetaRecord], pool: &[u8], minor: u16) -> Result<(), Error> {
    let mut cursor: u32 = 0;
    let mut previous_key: Option<&[u8]> = None;
    for (record, r) in (0u32..).zip(records) {
        let key_len = r.key_len.get();
        if key_len == 0 || key_len > MAX_KEY_LEN {
            return Err(Error::MetaKeyLength { record });
        }
        if r.key_offset.get() != cursor {
            return Err(Error::MetaPoolLayout { record });
        }
        let key = pool_slice(pool, cursor, u32::from(key_len)).ok_or(Error::MetaBounds { record })?;
        cursor = cursor.checked_add(u32::from(key_len)).ok_or(Error::MetaBounds { record })?;
        if core::str::from_utf8(key).is_err() {
            return Err(Error::MetaKeyUtf8 { record });
        }
        if let Some(previous) = previous_key {
            match previous.cmp(key) {
                Ordering::Less => {}
                Ordering::Equal => return Err(Error::MetaDuplicateKey { record }),
                Ordering::Greater => return Err(Error::MetaKeyOrder { record }),
            }
        }
        previous_key = Some(key);

        let value_type = MetaType::from_code(r.value_type);
        if let MetaType::Unknown(code) = value_type {
            if !is_newer_minor(minor) {
                return Err(Error::MetaUnknownType { record, code });
            }
        }
        if r.reserved != 0 {
            return Err(Error::MetaValueShape { record });
        }
        if value_type.is_inline() {
            if r.value_len.get() != 0 || r.value_offset.get() != 0 {
                return Err(Error::MetaValueShape { record });
            }
            if value_type == MetaType::Bool && r.value.get() > 1 {
                return Err(Error::MetaBool { record });
            }
            continue;
        }
        if r.value.get() != 0 {
            return Err(Error::MetaValueShape { record });
        }
        if r.value_offset.get() != cursor {
            return Err(Error::MetaPoolLayout { record });
        }
        let value = pool_slice(pool, cursor, r.value_len.get()).ok_or(Error::MetaBounds { record })?;
        cursor = cursor.checked_add(r.value_len.get()).ok_or(Error::MetaBounds { record })?;
        check_value(record, value_type, value)?;
    }
    if usize::try_from(cursor).ok() != Some(pool.len()) {
        return Err(Error::MetaPoolLayout { record: u32::try_from(records.len()).unwrap_or(u32::MAX) });
    }
    Ok(())
}

/// R47 and R49 for a value stored in the pool.
fn check_value(record: u32, value_type: MetaType, value: &[u8]) -> Result<(), Error> {
    match value_type {
        MetaType::String => {
            core::str::from_utf8(value).map_err(|_| Error::MetaUtf8 { record })?;
        }
        MetaType::U64Array | MetaType::I64Array | MetaType::F64Array if value.len() % 8 != 0 => {
            return Err(Error::MetaValueShape { record });
        }
        MetaType::StringArray => {
            let mut rest = value;
            while !rest.is_empty() {
                let (item, tail) = split_item(rest).ok_or(Error::MetaValueShape { record })?;
                core::str::from_utf8(item).map_err(|_| Error::MetaUtf8 { record })?;
                rest = tail;
            }
        }
        _ => {}
    }
    Ok(())
}

/// One `string[]` item: a u32 length, then that many bytes. `None` if the bytes do not hold a whole item.
fn split_item(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = U32::read_from_prefix(bytes).ok()?;
    rest.split_at_checked(usize::try_from(len.get()).ok()?)
}

/// A typed metadata value borrowed from its container.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum MetaValue<'a> {
    /// `u64`.
    U64(u64),
    /// `i64`.
    I64(i64),
    /// `f64` (any bit pattern, NaNs included).
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
    /// A type from a newer minor version: its code and pool bytes.
    Unknown {
        /// The type code.
        code: u8,
        /// The value's bytes in the pool.
        bytes: &'a [u8],
    },
}

impl MetaValue<'_> {
    /// The value's type.
    #[must_use]
    pub fn value_type(&self) -> MetaType {
        match self {
            MetaValue::U64(_) => MetaType::U64,
            MetaValue::I64(_) => MetaType::I64,
            MetaValue::F64(_) => MetaType::F64,
            MetaValue::Bool(_) => MetaType::Bool,
            MetaValue::String(_) => MetaType::String,
            MetaValue::Bytes(_) => MetaType::Bytes,
            MetaValue::U64Array(_) => MetaType::U64Array,
            MetaValue::I64Array(_) => MetaType::I64Array,
            MetaValue::F64Array(_) => MetaType::F64Array,
            MetaValue::StringArray(_) => MetaType::StringArray,
            MetaValue::Unknown { code, .. } => MetaType::Unknown(*code),
        }
    }
}

/// The items of a validated `string[]` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StringArray<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for StringArray<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let (item, rest) = split_item(self.rest)?;
        self.rest = rest;
        // Validated by `check_value` (R49); the fallback is unreachable.
        Some(core::str::from_utf8(item).unwrap_or(""))
    }
}

impl FusedIterator for StringArray<'_> {}

fn value_of<'a>(r: &MetaRecord, pool: &'a [u8]) -> MetaValue<'a> {
    let bits = r.value.get();
    let bytes = pool_slice(pool, r.value_offset.get(), r.value_len.get()).unwrap_or(&[]);
    match MetaType::from_code(r.value_type) {
        MetaType::U64 => MetaValue::U64(bits),
        MetaType::I64 => MetaValue::I64(i64::from_le_bytes(bits.to_le_bytes())),
        MetaType::F64 => MetaValue::F64(f64::from_bits(bits)),
        MetaType::Bool => MetaValue::Bool(bits == 1),
        // Validated UTF-8 (R49); the fallback is unreachable.
        MetaType::String => MetaValue::String(core::str::from_utf8(bytes).unwrap_or("")),
        MetaType::Bytes => MetaValue::Bytes(bytes),
        MetaType::U64Array => MetaValue::U64Array(<[U64]>::ref_from_bytes(bytes).unwrap_or(&[])),
        MetaType::I64Array => MetaValue::I64Array(<[I64]>::ref_from_bytes(bytes).unwrap_or(&[])),
        MetaType::F64Array => MetaValue::F64Array(<[F64]>::ref_from_bytes(bytes).unwrap_or(&[])),
        MetaType::StringArray => MetaValue::StringArray(StringArray { rest: bytes }),
        MetaType::Unknown(code) => MetaValue::Unknown { code, bytes },
    }
}

fn key_of<'a>(r: &MetaRecord, pool: &'a [u8]) -> &'a [u8] {
    pool_slice(pool, r.key_offset.get(), u32::from(r.key_len.get())).unwrap_or(&[])
}

pub(crate) fn lookup<'a>(records: &'a [MetaRecord], pool: &'a [u8], key: &[u8]) -> Option<MetaValue<'a>> {
    let at = records.binary_search_by(|r| key_of(r, pool).cmp(key)).ok()?;
    Some(value_of(records.get(at)?, pool))
}

/// The metadata records of a container, in key order, as `(key, value)`.
#[derive(Clone, Debug)]
pub struct MetaIter<'a> {
    records: core::slice::Iter<'a, MetaRecord>,
    pool: &'a [u8],
}

impl<'a> MetaIter<'a> {
    pub(crate) fn new(records: &'a [MetaRecord], pool: &'a [u8]) -> Self {
        Self { records: records.iter(), pool }
    }
}

impl<'a> Iterator for MetaIter<'a> {
    type Item = (&'a str, MetaValue<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let r = self.records.next()?;
        // Validated UTF-8 (R43); the fallback is unreachable.
        let key = core::str::from_utf8(key_of(r, self.pool)).unwrap_or("");
        Some((key, value_of(r, self.pool)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.records.size_hint()
    }
}

impl ExactSizeIterator for MetaIter<'_> {}
impl FusedIterator for MetaIter<'_> {}
