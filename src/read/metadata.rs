//! The group *metadata* (R40–R49, spec §7): validation of the records and pool, and the [`Metadata`] view
//! of a validated section, which hands out typed [`MetaValue`]s.

use core::cmp::Ordering;
use core::fmt;
use core::iter::FusedIterator;

use zerocopy::FromBytes;

use crate::error::Error;
use crate::format::{is_newer_minor, MetaRecord, MetaType, MAX_KEY_LEN};
use crate::layout::slice;
use crate::meta_value::{check_value, MetaValue};

/// The bytes `[offset, offset + len)` of `pool`, or `None` when they are not all inside it.
fn pool_slice(pool: &[u8], offset: u32, len: u32) -> Option<&[u8]> {
    slice(pool, u64::from(offset), u64::from(len))
}

/// R40–R49 for the `count` records at the start of `section` and the pool after them, in the order spec §12
/// pins: `m × 24` (R40); then record by record its key (R40, R41, R42, R43, R44 or R45), its type (R46), its
/// reserved byte (R47), and its value — inline (R47, R48) or in the pool (R40, R41, a zero `value` of R47, the
/// rest of R47 for the whole value, then R48 and R49); last, bytes after the last item (R41). `minor` is the
/// file's minor version.
pub(super) fn check(section: &[u8], count: u32, minor: u16) -> Result<Metadata<'_>, Error> {
    let records = usize::try_from(count).map_err(|_| Error::MetaBounds { record: count })?;
    let (records, pool) = <[MetaRecord]>::ref_from_prefix_with_elems(section, records)
        .map_err(|_| Error::MetaBounds { record: count })?;
    let mut cursor: u32 = 0;
    let mut previous_key: Option<&[u8]> = None;
    for (record, r) in (0u32..).zip(records) {
        // The key: R40, R41, R42 (spec §12 pins the order inside a record).
        let key_len = r.key_len.get();
        let key =
            pool_slice(pool, r.key_offset.get(), u32::from(key_len)).ok_or(Error::MetaBounds { record })?;
        if r.key_offset.get() != cursor {
            return Err(Error::MetaPoolLayout { record });
        }
        cursor = cursor.checked_add(u32::from(key_len)).ok_or(Error::MetaBounds { record })?;
        if key_len == 0 || key_len > MAX_KEY_LEN {
            return Err(Error::MetaKeyLength { record });
        }
        if !crate::utf8::is_valid(key) {
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
        let known = value_type.since_minor().is_some_and(|since| since <= minor);
        if !known && !is_newer_minor(minor) {
            return Err(Error::MetaUnknownType { record, code: r.value_type });
        }
        if r.reserved != 0 {
            return Err(Error::MetaValueShape { record });
        }
        if value_type.is_inline() {
            if r.value_len.get() != 0 || r.value_offset.get() != 0 {
                return Err(Error::MetaValueShape { record });
            }
            if value_type == MetaType::BOOL && r.value.get() > 1 {
                return Err(Error::MetaBool { record });
            }
            continue;
        }
        // The value: R40, then R41.
        let value =
            pool_slice(pool, r.value_offset.get(), r.value_len.get()).ok_or(Error::MetaBounds { record })?;
        if r.value_offset.get() != cursor {
            return Err(Error::MetaPoolLayout { record });
        }
        cursor = cursor.checked_add(r.value_len.get()).ok_or(Error::MetaBounds { record })?;
        // A zero `value` is the part of R47 that depends on the type being a pool type, so it needs the value
        // inside the pool (R40) first, as the spec's dependencies say.
        if r.value.get() != 0 {
            return Err(Error::MetaValueShape { record });
        }
        check_value(record, value_type, value)?;
    }
    if usize::try_from(cursor).ok() != Some(pool.len()) {
        return Err(Error::MetaPoolLayout { record: count });
    }
    Ok(Metadata { records, pool })
}

/// The metadata of a validated container: records sorted by key, and the pool they point into.
///
/// Obtained from [`crate::Container::metadata`]; cheap to copy.
#[derive(Clone, Copy)]
pub struct Metadata<'a> {
    records: &'a [MetaRecord],
    pool: &'a [u8],
}

impl<'a> Metadata<'a> {
    /// No records (what a container holds until its metadata group is validated).
    pub(super) const EMPTY: Metadata<'static> = Metadata { records: &[], pool: &[] };

    /// The view of a metadata section of `count` records that [`check`] accepted: no checks, O(1).
    pub(super) fn from_checked(section: &'a [u8], count: u32) -> Option<Self> {
        let (records, pool) =
            <[MetaRecord]>::ref_from_prefix_with_elems(section, usize::try_from(count).ok()?).ok()?;
        Some(Metadata { records, pool })
    }

    /// Number of records.
    #[must_use]
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are no records.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The value stored under `key`: a binary search over the sorted records, O(log m), no allocation.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<MetaValue<'a>> {
        Some(value_of(self.record(key)?, self.pool))
    }

    /// The record under `key`: a binary search over the sorted records.
    fn record(&self, key: &str) -> Option<&'a MetaRecord> {
        let pool = self.pool;
        let at = self.records.binary_search_by(|r| key_of(r, pool).cmp(key.as_bytes())).ok()?;
        self.records.get(at)
    }

    /// The type of the value under `key` and its bytes in the pool (empty for the four scalar types, whose
    /// value is inline), without decoding it: for the checks that need only a type and a length (the signed
    /// attributes, R56), so that a reader does not link [`MetaValue::decode`] for them.
    pub(crate) fn typed_bytes(&self, key: &str) -> Option<(MetaType, &'a [u8])> {
        let r = self.scan(key)?;
        Some((MetaType::from_code(r.value_type), value_bytes(r, self.pool)))
    }

    /// The inline value of the `U64` record under `key`; `None` when there is none, or it has another type.
    pub(crate) fn u64_value(&self, key: &str) -> Option<u64> {
        self.scan(key).filter(|r| MetaType::from_code(r.value_type) == MetaType::U64).map(|r| r.value.get())
    }

    /// The record under `key`, found by comparing every key in turn: O(m), for the few lookups of a check, in
    /// less code than [`Metadata::record`]'s ordered search.
    fn scan(&self, key: &str) -> Option<&'a MetaRecord> {
        let pool = self.pool;
        self.records.iter().find(|r| key_of(r, pool) == key.as_bytes())
    }

    /// Every key in key order, as bytes (validated UTF-8, R43), without the values.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let pool = self.pool;
        self.records.iter().map(move |r| key_of(r, pool))
    }

    /// The record at `index` in key order (0 is the smallest key), as `(key, value)`: O(1), for callers that
    /// walk the records by position (the C API). `None` when `index >= self.len()`.
    #[must_use]
    pub fn at(&self, index: usize) -> Option<(&'a str, MetaValue<'a>)> {
        let r = self.records.get(index)?;
        // Validated UTF-8 (R43); the fallback is unreachable.
        Some((core::str::from_utf8(key_of(r, self.pool)).unwrap_or(""), value_of(r, self.pool)))
    }

    /// Every record as `(key, value)`, in key order.
    #[must_use]
    pub fn iter(&self) -> MetaIter<'a> {
        MetaIter { records: self.records.iter(), pool: self.pool }
    }
}

impl<'a> IntoIterator for Metadata<'a> {
    type Item = (&'a str, MetaValue<'a>);
    type IntoIter = MetaIter<'a>;

    fn into_iter(self) -> MetaIter<'a> {
        self.iter()
    }
}

impl fmt::Debug for Metadata<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

fn value_of<'a>(r: &MetaRecord, pool: &'a [u8]) -> MetaValue<'a> {
    let bits = r.value.get();
    match MetaType::from_code(r.value_type) {
        MetaType::U64 => MetaValue::U64(bits),
        MetaType::I64 => MetaValue::I64(i64::from_le_bytes(bits.to_le_bytes())),
        MetaType::F64 => MetaValue::F64(f64::from_bits(bits)),
        MetaType::BOOL => MetaValue::Bool(bits == 1),
        other => MetaValue::decode(other, value_bytes(r, pool)),
    }
}

/// The bytes of `r`'s value in `pool`. The record was validated (R40), so the fallback is unreachable.
fn value_bytes<'a>(r: &MetaRecord, pool: &'a [u8]) -> &'a [u8] {
    pool_slice(pool, r.value_offset.get(), r.value_len.get()).unwrap_or(&[])
}

fn key_of<'a>(r: &MetaRecord, pool: &'a [u8]) -> &'a [u8] {
    pool_slice(pool, r.key_offset.get(), u32::from(r.key_len.get())).unwrap_or(&[])
}

/// The records of a [`Metadata`] in key order, as `(key, value)`.
#[derive(Clone, Debug)]
pub struct MetaIter<'a> {
    records: core::slice::Iter<'a, MetaRecord>,
    pool: &'a [u8],
}

impl<'a> Iterator for MetaIter<'a> {
    type Item = (&'a str, MetaValue<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let r = self.records.next()?;
        // Validated UTF-8 (R43); the fallback is unreachable.
        let key = core::str::from_utf8(key_of(r, self.pool)).unwrap_or("");
        Some((key, value_of(r, self.pool)))
    }

    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        // O(1): skip the records without decoding them.
        let r = self.records.nth(n)?;
        let key = core::str::from_utf8(key_of(r, self.pool)).unwrap_or("");
        Some((key, value_of(r, self.pool)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.records.size_hint()
    }
}

impl ExactSizeIterator for MetaIter<'_> {}
impl FusedIterator for MetaIter<'_> {}
