//! Parsing and complete validation of a container (spec §12, rules R1–R49).
//!
//! [`Container::parse`] checks every structural rule before it returns; after that every accessor is
//! infallible. Untrusted bytes are only ever reached through `get(..)` and zerocopy casts, and every sum or
//! product of offsets is checked.

use core::cmp::Ordering;
use core::ops::Range;

use zerocopy::little_endian::U32;
use zerocopy::FromBytes;

use crate::checksum::{crc32, header_crc};
use crate::entry::{Entries, Entry};
use crate::error::Error;
use crate::format::is_newer_minor;
use crate::format::{
    Descriptor, Dtype, Header, MetaRecord, Section, SectionRef, Storage, DESCRIPTOR_LEN, FLAG_HAS_TARGET,
    HEADER_LEN_V1, INDEX_SLOT_LEN, KNOWN_INCOMPAT_FLAGS, MAGIC, MAX_ALIGNMENT, MAX_HEADER_LEN, MAX_NAME_LEN,
    MAX_NESTING_DEPTH, MAX_RANK, TRAILER_SLOT_LEN, VERSION_MAJOR,
};
use crate::meta::{self, MetaIter, MetaValue};

/// A validated container borrowed from its bytes.
///
/// Obtained from [`Container::parse`]; cheap to copy. All offsets it reports are relative to the container's
/// first byte.
#[derive(Clone, Copy, Debug)]
pub struct Container<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) header: &'a Header,
    pub(crate) table: &'a [Descriptor],
    pub(crate) index: &'a [U32],
    pub(crate) names: &'a [u8],
    pub(crate) meta_records: &'a [MetaRecord],
    pub(crate) meta_pool: &'a [u8],
    /// One stored CRC per entry (the trailer without its own checksum).
    pub(crate) checksums: &'a [U32],
    pub(crate) depth: u8,
}

/// Reads just enough of `prefix` to learn how long the container starting there is (`total_len`).
///
/// For a loader that holds a larger region (a flash partition, a file with something after it) and must slice
/// out the container before [`Container::parse`]. Nothing but the magic and version is validated.
///
/// # Errors
/// [`Error::TooShort`], [`Error::BadMagic`] or [`Error::UnsupportedVersion`].
pub fn declared_len(prefix: &[u8]) -> Result<u64, Error> {
    let header = read_header(prefix)?;
    Ok(header.total_len.get())
}

fn len_u64(bytes: &[u8]) -> u64 {
    // A slice never exceeds isize::MAX bytes, so this cannot saturate on any supported target.
    u64::try_from(bytes.len()).unwrap_or(u64::MAX)
}

fn read_header(bytes: &[u8]) -> Result<&Header, Error> {
    let Ok((header, _)) = Header::ref_from_prefix(bytes) else {
        return Err(Error::TooShort { len: len_u64(bytes) });
    };
    if header.magic != MAGIC {
        return Err(Error::BadMagic);
    }
    if header.version_major.get() != VERSION_MAJOR {
        return Err(Error::UnsupportedVersion { major: header.version_major.get() });
    }
    Ok(header)
}

/// The `Range<usize>` of a validated `[offset, offset + length)` inside a slice of `len` bytes, or `err`.
fn span(offset: u64, length: u64, len: usize, err: Error) -> Result<Range<usize>, Error> {
    checked_span(offset, length, len).ok_or(err)
}

/// `[offset, offset + length)` as a `Range<usize>` inside a slice of `len` bytes, if it fits.
fn checked_span(offset: u64, length: u64, len: usize) -> Option<Range<usize>> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(length).ok()?)?;
    (end <= len).then_some(start..end)
}

fn align_up(value: u64, alignment: u64) -> Option<u64> {
    // `alignment` is a validated power of two, so the mask is exact.
    let mask = alignment.checked_sub(1)?;
    Some(value.checked_add(mask)? & !mask)
}

/// The byte length that `dtype` and `dims` (outermost first) give (R25–R27), or `None` for an unknown dtype.
/// Shared by the reader and the writers so that they cannot disagree.
pub(crate) fn expected_length(
    entry: u32,
    dtype: Dtype,
    dims: impl ExactSizeIterator<Item = u64> + DoubleEndedIterator + Clone,
) -> Result<Option<u64>, Error> {
    let Some(storage) = dtype.storage() else {
        return Ok(None);
    };
    let count = dims.clone().try_fold(1u64, u64::checked_mul).ok_or(Error::ShapeOverflow { entry })?;
    let length = match storage {
        Storage::Element(size) => count.checked_mul(size).ok_or(Error::ShapeOverflow { entry })?,
        Storage::Block { block_elems, block_bytes } => {
            // Block sizes are powers of two (a test checks), so masks and shifts replace a 64-bit division,
            // which costs a kilobyte of code on a Cortex-M.
            let innermost = dims.clone().next_back().ok_or(Error::BlockShape { entry })?;
            let mask = block_elems.checked_sub(1).ok_or(Error::BlockShape { entry })?;
            if innermost & mask != 0 {
                return Err(Error::BlockShape { entry });
            }
            count
                .checked_shr(block_elems.trailing_zeros())
                .and_then(|blocks| blocks.checked_mul(block_bytes))
                .ok_or(Error::ShapeOverflow { entry })?
        }
        Storage::Bytes => {
            if dims.len() != 1 {
                return Err(Error::ByteShape { entry });
            }
            count
        }
    };
    Ok(Some(length))
}

impl<'a> Container<'a> {
    /// Parses and validates a container that occupies exactly `bytes`, at any address alignment.
    ///
    /// Every structural rule (R1–R49) is checked, nested containers included, in time linear in the size of
    /// the table, names, metadata and padding; payload checksums (R50) are checked by [`Container::verify`].
    /// Nothing is allocated.
    ///
    /// # Errors
    /// The first broken rule found, as an [`Error`] naming the rule and where it is broken.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse_at(bytes, 0)
    }

    pub(crate) fn parse_at(bytes: &'a [u8], depth: u8) -> Result<Self, Error> {
        let header = read_header(bytes)?;
        let minor = header.version_minor.get();
        let header_len = header.header_len.get();
        if header_len % 8 != 0
            || !(HEADER_LEN_V1..=MAX_HEADER_LEN).contains(&header_len)
            || (minor == 0 && header_len != HEADER_LEN_V1)
        {
            return Err(Error::HeaderLength { header_len });
        }
        let incompat = header.incompat_flags.get();
        if incompat & !KNOWN_INCOMPAT_FLAGS != 0 {
            return Err(Error::UnknownIncompatFlags { flags: incompat });
        }
        if header.descriptor_len.get() != DESCRIPTOR_LEN {
            return Err(Error::DescriptorLength { descriptor_len: header.descriptor_len.get() });
        }
        if let Some(at) = header.reserved.iter().position(|&b| b != 0) {
            let field = core::mem::offset_of!(Header, reserved);
            let offset = field.checked_add(at).and_then(|o| u64::try_from(o).ok()).unwrap_or(u64::MAX);
            return Err(Error::ReservedNonZero { offset });
        }
        let total = header.total_len.get();
        let actual = len_u64(bytes);
        if actual < total || actual < u64::from(header_len) {
            return Err(Error::Truncated { declared: total });
        }
        if actual > total {
            return Err(Error::TrailingBytes { declared: total });
        }

        check_sections(header)?;
        let [table, index, names, metadata, payloads, trailer] = &header.sections;
        let [table, index, names, metadata, payloads, trailer] = [
            Bounds::from(table),
            Bounds::from(index),
            Bounds::from(names),
            Bounds::from(metadata),
            Bounds::from(payloads),
            Bounds::from(trailer),
        ];
        let n = header.entry_count.get();
        let m = header.meta_count.get();
        let len = bytes.len();

        // Checksums come before the contents so a damaged file is reported as damaged, not as whatever
        // nonsense the damage happens to spell.
        let meta_end = span(0, metadata.end, len, Error::SectionBounds { section: Section::Metadata })?;
        let region = bytes.get(meta_end).ok_or(Error::SectionBounds { section: Section::Metadata })?;
        let computed = header_crc(region);
        if computed != header.header_crc.get() {
            return Err(Error::HeaderChecksum { stored: header.header_crc.get(), computed });
        }

        let trailer_bytes = section_bytes(bytes, trailer, Section::Trailer)?;
        let count = usize::try_from(n).map_err(|_| Error::SectionLength { section: Section::Table })?;
        let (checksums, stored_crc) = <[U32]>::ref_from_prefix_with_elems(trailer_bytes, count)
            .map_err(|_| Error::SectionLength { section: Section::Trailer })?;
        let stored_crc = U32::read_from_bytes(stored_crc)
            .map_err(|_| Error::SectionLength { section: Section::Trailer })?
            .get();
        let checksum_bytes = trailer_bytes.get(..trailer_bytes.len().saturating_sub(4)).unwrap_or(&[]);
        let computed = crc32(checksum_bytes);
        if computed != stored_crc {
            return Err(Error::TrailerChecksum { stored: stored_crc, computed });
        }

        let table_bytes = section_bytes(bytes, table, Section::Table)?;
        let table = <[Descriptor]>::ref_from_bytes_with_elems(table_bytes, count)
            .map_err(|_| Error::SectionLength { section: Section::Table })?;
        let index_bytes = section_bytes(bytes, index, Section::Index)?;
        let index = <[U32]>::ref_from_bytes_with_elems(index_bytes, count)
            .map_err(|_| Error::SectionLength { section: Section::Index })?;
        let names = section_bytes(bytes, names, Section::Names)?;
        let meta_bytes = section_bytes(bytes, metadata, Section::Metadata)?;
        // The records' bound is a metadata rule (R40), so it is reported after the groups before it.
        let records = usize::try_from(m).map_err(|_| Error::MetaBounds { record: m });
        let meta_split = records.and_then(|records| {
            <[MetaRecord]>::ref_from_prefix_with_elems(meta_bytes, records)
                .map_err(|_| Error::MetaBounds { record: m })
        });

        let mut container = Container {
            bytes,
            header,
            table,
            index,
            names,
            meta_records: &[],
            meta_pool: &[],
            checksums,
            depth,
        };
        container.check_names()?;
        container.check_index()?;
        container.check_descriptors(minor)?;
        container.check_payloads(payloads)?;
        container.check_nested()?;
        let (meta_records, meta_pool) = meta_split?;
        meta::check(meta_records, meta_pool, minor)?;
        container.meta_records = meta_records;
        container.meta_pool = meta_pool;
        Ok(container)
    }

    /// R15–R18: names are packed in table order, non-empty, short enough and UTF-8.
    fn check_names(&self) -> Result<(), Error> {
        // One UTF-8 pass over the whole pool (a fast path for ASCII) instead of one call per name. The pool is
        // the names back to back, so when it is valid a name is valid exactly when it starts and ends on
        // character boundaries; only an invalid pool needs the per-name check, to name the entry.
        let pool = core::str::from_utf8(self.names).ok();
        let mut cursor: u64 = 0;
        for (entry, d) in (0u32..).zip(self.table) {
            let len = d.name_len.get();
            let offset = u64::from(d.name_offset.get());
            let range = span(offset, u64::from(len), self.names.len(), Error::NameBounds { entry })?;
            if offset != cursor {
                return Err(Error::NamePoolLayout { entry });
            }
            if len == 0 || len > MAX_NAME_LEN {
                return Err(Error::NameLength { entry, len });
            }
            let valid = match pool {
                Some(text) => text.is_char_boundary(range.start) && text.is_char_boundary(range.end),
                None => {
                    let name = self.names.get(range).ok_or(Error::NameBounds { entry })?;
                    core::str::from_utf8(name).is_ok()
                }
            };
            if !valid {
                return Err(Error::NameUtf8 { entry });
            }
            cursor = cursor.checked_add(u64::from(len)).ok_or(Error::NameBounds { entry })?;
        }
        if cursor != len_u64(self.names) {
            return Err(Error::NamePoolLayout { entry: self.header.entry_count.get() });
        }
        Ok(())
    }

    /// R19–R21: the index lists every entry once, in strictly ascending name order.
    ///
    /// Strict ascent makes all listed values distinct, so `n` in-range values are a permutation without a
    /// bitmap; each name takes part in at most two comparisons, so the cost is linear in the pool size.
    fn check_index(&self) -> Result<(), Error> {
        let n = self.header.entry_count.get();
        let mut previous: Option<(u32, &[u8])> = None;
        for (position, slot) in (0u32..).zip(self.index) {
            let entry = slot.get();
            if entry >= n {
                return Err(Error::IndexRange { position });
            }
            let name = self.name_bytes(entry);
            if let Some((prev_entry, prev_name)) = previous {
                if prev_entry == entry {
                    return Err(Error::IndexRange { position });
                }
                match compare_from(prev_name, name, 0).0 {
                    Ordering::Less => {}
                    Ordering::Equal => return Err(Error::DuplicateName { entry }),
                    Ordering::Greater => return Err(Error::IndexOrder { position }),
                }
            }
            previous = Some((entry, name));
        }
        Ok(())
    }

    /// R22–R32: each descriptor on its own.
    fn check_descriptors(&self, minor: u16) -> Result<(), Error> {
        for (entry, d) in (0u32..).zip(self.table) {
            let dtype = Dtype::from_code(d.dtype.get());
            if let Dtype::Unknown(code) = dtype {
                if !is_newer_minor(minor) {
                    return Err(Error::UnknownDtype { entry, code });
                }
            }
            let rank = usize::from(d.rank);
            let (dims, unused) =
                d.dims.split_at_checked(rank).ok_or(Error::RankTooLarge { entry, rank: d.rank })?;
            // An OR over the unused dimensions (no branch per dimension); the position only on failure.
            if unused.iter().fold(0, |any, x| any | x.get()) != 0 {
                let dim = unused.iter().position(|x| x.get() != 0).unwrap_or(0);
                let dim = u8::try_from(dim.saturating_add(rank)).unwrap_or(u8::MAX);
                return Err(Error::UnusedDimNonZero { entry, dim });
            }
            if let Some(expected) = expected_length(entry, dtype, dims.iter().map(|d| d.get()))? {
                if expected != d.length.get() {
                    return Err(Error::LengthMismatch { entry, expected });
                }
            }
            let alignment = d.alignment.get();
            if !alignment.is_power_of_two() || alignment > MAX_ALIGNMENT {
                return Err(Error::BadAlignment { entry, alignment });
            }
            // A power of two (just checked): a mask, not a 64-bit division.
            if d.offset.get() & u64::from(alignment).saturating_sub(1) != 0 {
                return Err(Error::Misaligned { entry, offset: d.offset.get() });
            }
            let target = d.target.get();
            if d.flags & !FLAG_HAS_TARGET != 0 || (d.flags & FLAG_HAS_TARGET == 0 && target != 0) {
                return Err(Error::EntryFlags { entry });
            }
            // target + length may equal 2^64 exactly (a segment ending at the top of the address space).
            let end = u128::from(target).checked_add(u128::from(d.length.get()));
            if end.is_none_or(|end| end > 1u128 << 64) {
                return Err(Error::TargetOverflow { entry });
            }
        }
        Ok(())
    }

    /// R33–R36: payloads in table order, each at the smallest aligned offset. (Their padding, R37, is checked
    /// by `verify`, which reads the payload section anyway.)
    fn check_payloads(&self, section: Bounds) -> Result<(), Error> {
        let mut cursor = section.offset;
        let mut previous_start = section.offset;
        for (entry, d) in (0u32..).zip(self.table) {
            let start = d.offset.get();
            let end = start.checked_add(d.length.get()).ok_or(Error::PayloadBounds { entry })?;
            if start < section.offset || end > section.end {
                return Err(Error::PayloadBounds { entry });
            }
            if start < previous_start {
                return Err(Error::PayloadOrder { entry });
            }
            if start < cursor {
                return Err(Error::PayloadOverlap { entry });
            }
            let aligned =
                align_up(cursor, u64::from(d.alignment.get())).ok_or(Error::PayloadBounds { entry })?;
            if start != aligned {
                return Err(Error::PaddingNotMinimal { entry });
            }
            previous_start = start;
            cursor = end;
        }
        if cursor != section.end {
            return Err(Error::PaddingNotMinimal { entry: self.header.entry_count.get() });
        }
        Ok(())
    }

    fn check_zero(&self, start: u64, end: u64) -> Result<(), Error> {
        let err = Error::PaddingNonZero { offset: start };
        let range = span(start, end.checked_sub(start).ok_or(err)?, self.bytes.len(), err)?;
        let padding = self.bytes.get(range).ok_or(err)?;
        match padding.iter().position(|&b| b != 0) {
            None => Ok(()),
            Some(at) => Err(Error::PaddingNonZero {
                offset: start.saturating_add(u64::try_from(at).unwrap_or(u64::MAX)),
            }),
        }
    }

    /// R38–R39: nested containers are valid and not too deep.
    fn check_nested(&self) -> Result<(), Error> {
        for (entry, d) in (0u32..).zip(self.table) {
            if Dtype::from_code(d.dtype.get()) != Dtype::Container {
                continue;
            }
            if self.depth >= MAX_NESTING_DEPTH {
                return Err(Error::NestingTooDeep { entry });
            }
            let depth = self.depth.saturating_add(1);
            let payload = payload_of(self.bytes, d);
            Container::parse_at(payload, depth).map_err(|e| match e {
                // Too-deep nesting keeps its own rule all the way out, so the outermost reader names it.
                Error::NestingTooDeep { .. } => Error::NestingTooDeep { entry },
                Error::NestedInvalid { inner, .. } => Error::NestedInvalid { entry, depth, inner },
                other => Error::NestedInvalid { entry, depth, inner: other.rule() },
            })?;
        }
        Ok(())
    }

    /// The name of entry `entry`, which `check_names` has validated.
    pub(crate) fn name_bytes(&self, entry: u32) -> &'a [u8] {
        let Some(d) = usize::try_from(entry).ok().and_then(|i| self.table.get(i)) else {
            return &[];
        };
        let start = usize::try_from(d.name_offset.get()).unwrap_or(usize::MAX);
        let len = usize::try_from(d.name_len.get()).unwrap_or(0);
        start.checked_add(len).and_then(|end| self.names.get(start..end)).unwrap_or(&[])
    }

    /// The container's bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The fixed header.
    #[must_use]
    pub fn header(&self) -> &'a Header {
        self.header
    }

    /// `(major, minor)` version of the file.
    #[must_use]
    pub fn version(&self) -> (u16, u16) {
        (self.header.version_major.get(), self.header.version_minor.get())
    }

    /// Compatible-feature flags as stored (bits this crate does not know are kept, not interpreted).
    #[must_use]
    pub fn compat_flags(&self) -> u64 {
        self.header.compat_flags.get()
    }

    /// Nesting depth: 0 for a container parsed with [`Container::parse`].
    #[must_use]
    pub fn depth(&self) -> u8 {
        self.depth
    }

    /// Number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the container has no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Entry number `index` in table (payload) order.
    #[must_use]
    pub fn entry(&self, index: usize) -> Option<Entry<'a>> {
        let descriptor = self.table.get(index)?;
        Some(Entry::new(self, u32::try_from(index).ok()?, descriptor))
    }

    /// Every entry, in table (payload) order.
    #[must_use]
    pub fn entries(&self) -> Entries<'a> {
        Entries::new(*self)
    }

    /// The entry called `name`: a binary search over the name index, O(log n), no allocation.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<Entry<'a>> {
        let wanted = name.as_bytes();
        // Names in a checkpoint share long prefixes (`model.layers.17.self_attn.`). Every name between the
        // bounds shares with `wanted` at least the shorter of the bounds' common prefixes with it, so each
        // comparison starts there instead of at byte 0.
        let (mut lo, mut hi) = (0usize, self.index.len());
        let (mut common_lo, mut common_hi) = (0usize, 0usize);
        while lo < hi {
            let mid = lo.saturating_add(hi.saturating_sub(lo) / 2);
            let entry = self.index.get(mid)?.get();
            let (order, common) = compare_from(self.name_bytes(entry), wanted, common_lo.min(common_hi));
            match order {
                Ordering::Less => {
                    lo = mid.saturating_add(1);
                    common_lo = common;
                }
                Ordering::Greater => {
                    hi = mid;
                    common_hi = common;
                }
                Ordering::Equal => return self.entry(usize::try_from(entry).ok()?),
            }
        }
        None
    }

    /// Every metadata record, in key order.
    #[must_use]
    pub fn metadata(&self) -> MetaIter<'a> {
        MetaIter::new(self.meta_records, self.meta_pool)
    }

    /// The metadata value stored under `key`: a binary search, O(log m).
    #[must_use]
    pub fn meta(&self, key: &str) -> Option<MetaValue<'a>> {
        meta::lookup(self.meta_records, self.meta_pool, key.as_bytes())
    }

    /// Verifies the payload section: for each entry in table order, the padding before it is zero (R37), its
    /// payload matches its checksum (R50), and a nested container verifies likewise (spec §9). Reads every
    /// payload byte; [`Container::parse`] reads none.
    ///
    /// # Errors
    /// [`Error::PaddingNonZero`] or [`Error::EntryChecksum`] for the first problem found; for a nested
    /// container, `entry` is the index within that nested container.
    pub fn verify(&self) -> Result<(), Error> {
        let [.., payloads, _] = &self.header.sections;
        let mut cursor = payloads.offset.get();
        for e in self.entries() {
            self.check_zero(cursor, e.offset())?;
            e.verify()?;
            if let Some(nested) = e.nested() {
                nested.verify()?;
            }
            cursor = e.range().end;
        }
        Ok(())
    }
}

/// The payload bytes of a validated descriptor within the container's `bytes`.
pub(crate) fn payload_of<'a>(bytes: &'a [u8], d: &Descriptor) -> &'a [u8] {
    checked_span(d.offset.get(), d.length.get(), bytes.len()).and_then(|r| bytes.get(r)).unwrap_or(&[])
}

/// Compares `a` with `b` as byte strings, knowing their first `skip` bytes are equal; returns the order and
/// the length of their common prefix.
fn compare_from(a: &[u8], b: &[u8], skip: usize) -> (Ordering, usize) {
    let (a_rest, b_rest) = (a.get(skip..).unwrap_or(&[]), b.get(skip..).unwrap_or(&[]));
    // Eight bytes at a time while both have them: one load and compare instead of eight.
    let mut common = skip;
    for (x, y) in a_rest.chunks_exact(8).zip(b_rest.chunks_exact(8)) {
        let word = |c: &[u8]| c.try_into().map_or(0, u64::from_le_bytes);
        let diff = word(x) ^ word(y);
        if diff != 0 {
            // Little-endian words: the lowest set bit is in the first differing byte.
            let at = common.saturating_add(usize::try_from(diff.trailing_zeros() / 8).unwrap_or(0));
            return (a.get(at).cmp(&b.get(at)), at);
        }
        common = common.saturating_add(8);
    }
    let a_tail = a.get(common..).unwrap_or(&[]);
    let b_tail = b.get(common..).unwrap_or(&[]);
    let same = a_tail.iter().zip(b_tail).take_while(|(x, y)| x == y).count();
    let common = common.saturating_add(same);
    let order = match (a.get(common), b.get(common)) {
        (Some(x), Some(y)) => x.cmp(y),
        _ => a.len().cmp(&b.len()),
    };
    (order, common)
}

/// A section's validated `[offset, end)`.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    offset: u64,
    end: u64,
}

fn section_bytes(bytes: &[u8], b: Bounds, section: Section) -> Result<&[u8], Error> {
    let err = Error::SectionBounds { section };
    let range = span(b.offset, b.end.checked_sub(b.offset).ok_or(err)?, bytes.len(), err)?;
    bytes.get(range).ok_or(err)
}

impl From<&SectionRef> for Bounds {
    /// The bounds of a section that [`check_sections`] accepted (so the sum cannot saturate).
    fn from(r: &SectionRef) -> Self {
        Bounds { offset: r.offset.get(), end: r.offset.get().saturating_add(r.length.get()) }
    }
}

/// R10–R12, in number order. Works on the header's own fields: no copies, which on a Cortex-M would pull in
/// `memcpy`.
fn check_sections(header: &Header) -> Result<(), Error> {
    let total = header.total_len.get();
    for (section, r) in Section::ALL.iter().zip(&header.sections) {
        if r.offset.get().checked_add(r.length.get()).is_none_or(|end| end > total) {
            return Err(Error::SectionBounds { section: *section });
        }
    }
    let mut cursor = u64::from(header.header_len.get());
    for (section, r) in Section::ALL.iter().zip(&header.sections) {
        if r.offset.get() != cursor {
            return Err(Error::SectionLayout { section: *section });
        }
        cursor = Bounds::from(r).end;
    }
    if cursor != total {
        return Err(Error::SectionLayout { section: Section::Trailer });
    }
    let [table, index, _, _, _, trailer] = &header.sections;
    let n = u64::from(header.entry_count.get());
    let expect = [
        (Section::Table, table, n.checked_mul(u64::from(DESCRIPTOR_LEN))),
        (Section::Index, index, n.checked_mul(INDEX_SLOT_LEN)),
        (Section::Trailer, trailer, n.checked_add(1).and_then(|k| k.checked_mul(TRAILER_SLOT_LEN))),
    ];
    for (section, r, expected) in expect {
        if expected != Some(r.length.get()) {
            return Err(Error::SectionLength { section });
        }
    }
    Ok(())
}

// `MAX_RANK` bounds the dims array; `split_at_checked` above relies on it being the array length.
const _: () = assert!(MAX_RANK == 8);
