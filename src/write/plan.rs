//! The layout engine: from declared entries and metadata to the canonical layout of spec §11 — descriptors,
//! the sorted index and metadata, payload offsets, the header and the bytes of the checksummed region and of
//! the trailer. It never touches a sink: the writer decides when its output goes where.

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::IntoBytes;

use super::bookkeeping::{extend, Bookkeeping, Buf, Buffer, Ledger};
use super::error::WriteError;
use super::meta_item::{self, item_at, PushError, Value};
use super::native::NativeArray;
use super::sort::sort_by;
use super::EntryDecl;
use crate::checksum::Crc32;
use crate::error::{Error, ShapeError};
use crate::format::{
    Descriptor, Dtype, ExtensionItem, GeometryRecord, Header, MetaRecord, Packing, SectionRef,
    DESCRIPTOR_LEN, EXTENSION_ITEM_HEADER_LEN, FLAG_HAS_TARGET, GEOMETRY_RECORD_LEN, HEADER_CRC_OFFSET,
    HEADER_LEN_V1, INDEX_SLOT_LEN, MAGIC, MAX_ALIGNMENT, MAX_KEY_LEN, MAX_NAME_LEN, MAX_RANK,
    META_RECORD_LEN, TAG_BLOCK_GEOMETRY, TRAILER_SLOT_LEN, VERSION_MAJOR,
};
use crate::layout::{align_up, byte_len, len_u64, name_in};
use crate::meta_value::MetaValue;

/// Stored in a descriptor's `length` while an entry declared without a shape is still open.
const UNKNOWN_LENGTH: u64 = u64::MAX;

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The length of metadata key `key` of record `record`: R42 unless 1 to 1024 bytes.
fn key_len<E>(key: &str, record: u32) -> Result<u16, WriteError<E>> {
    u16::try_from(key.len())
        .ok()
        .filter(|&k| k != 0 && k <= MAX_KEY_LEN)
        .ok_or(WriteError::Format(Error::MetaKeyLength { record }))
}

/// The bookkeeping of one container being written, and what follows from it.
pub(super) struct Plan<K: Bookkeeping> {
    ledger: Ledger<K>,
    pub(super) compat_flags: u64,
    /// First byte after the metadata: where the payload section starts. Known once declaration ends.
    payload_start: u64,
    /// The lowest minor version that can express what was declared (spec §11.1).
    minor: u16,
    /// Bit `c` set: an entry uses block dtype code `c` (every code this writer accepts is below 64).
    block_dtypes: u64,
}

impl<K: Bookkeeping> Plan<K> {
    pub(super) fn new(bookkeeping: K) -> Self {
        Self {
            ledger: bookkeeping.into_ledger(),
            compat_flags: 0,
            payload_start: 0,
            minor: 0,
            block_dtypes: 0,
        }
    }

    /// The header's length: 160, plus the block geometry item when the file is of minor 1 and uses a block
    /// dtype (spec §11.1).
    fn header_len(&self) -> u32 {
        let records = self.block_dtypes.count_ones();
        if self.minor == 0 || records == 0 {
            return HEADER_LEN_V1;
        }
        HEADER_LEN_V1
            .saturating_add(EXTENSION_ITEM_HEADER_LEN)
            .saturating_add(records.saturating_mul(GEOMETRY_RECORD_LEN))
    }

    /// Number of entries declared.
    /// The declared length of entry `entry` (`UNKNOWN_LENGTH` for an open-ended entry not yet closed).
    #[cfg(feature = "sign")]
    pub(super) fn declared_len(&self, entry: usize) -> Option<u64> {
        self.ledger.descriptors.items().get(entry).map(|d| d.length.get())
    }

    pub(super) fn entry_count(&self) -> usize {
        self.ledger.descriptors.items().len()
    }

    pub(super) fn payload_start(&self) -> u64 {
        self.payload_start
    }

    /// Records entry `decl` as the next one in payload order.
    pub(super) fn declare<E>(&mut self, decl: &EntryDecl<'_>) -> Result<(), WriteError<E>> {
        let entry = to_u32(self.entry_count());
        let name_len = to_u32(decl.name.len());
        if name_len == 0 || name_len > MAX_NAME_LEN {
            return Err(WriteError::Format(Error::NameLength { entry, len: name_len }));
        }
        let mut dims = [U64::new(0); MAX_RANK];
        let (rank, length) = match decl.shape {
            Some(shape) => {
                let rank = u8::try_from(shape.len()).unwrap_or(u8::MAX);
                if shape.len() > MAX_RANK {
                    return Err(WriteError::Format(Error::RankTooLarge { entry, rank }));
                }
                for (out, &d) in dims.iter_mut().zip(shape) {
                    *out = U64::new(d);
                }
                let length = byte_len(decl.dtype, shape.iter().copied()).map_err(|e| {
                    WriteError::Format(match e {
                        ShapeError::UnknownDtype => Error::UnknownDtype { entry, code: decl.dtype.code() },
                        ShapeError::RankTooLarge => Error::RankTooLarge { entry, rank },
                        ShapeError::Overflow => Error::ShapeOverflow { entry },
                        ShapeError::PartialBlock => Error::BlockShape { entry },
                        ShapeError::NotRankOne => Error::ByteShape { entry },
                    })
                })?;
                (rank, length)
            }
            None if decl.dtype.packing() == Some(Packing::Bytes) => (1, UNKNOWN_LENGTH),
            None => return Err(WriteError::UnsizedNotBytes { entry }),
        };
        if !decl.alignment.is_power_of_two() || decl.alignment > MAX_ALIGNMENT {
            return Err(WriteError::Format(Error::BadAlignment { entry, alignment: decl.alignment }));
        }
        if length != UNKNOWN_LENGTH {
            check_target(entry, decl.target, length)?;
        }
        let name_offset = to_u32(self.ledger.names.items().len());
        let descriptor = Descriptor {
            name_offset: U32::new(name_offset),
            name_len: U32::new(name_len),
            dtype: U16::new(decl.dtype.code()),
            rank,
            flags: if decl.target.is_some() { FLAG_HAS_TARGET } else { 0 },
            alignment: U32::new(decl.alignment),
            offset: U64::new(0),
            length: U64::new(length),
            target: U64::new(decl.target.unwrap_or(0)),
            dims,
        };
        // The name pool's offsets are u32: a pool that reached u32::MAX cannot take another name.
        if name_offset == u32::MAX || !extend(&mut self.ledger.names, decl.name.as_bytes()) {
            return Err(WriteError::BufferFull(Buffer::Names));
        }
        if !self.ledger.descriptors.try_push(descriptor) {
            return Err(WriteError::BufferFull(Buffer::Entries));
        }
        // `byte_len` accepted the dtype, so it is known: its minor and, for a block dtype, its bit.
        self.minor = self.minor.max(decl.dtype.since_minor().unwrap_or(0));
        if let Some(Packing::Block { .. }) = decl.dtype.packing() {
            self.block_dtypes |= 1u64.checked_shl(u32::from(decl.dtype.code())).unwrap_or(0);
        }
        Ok(())
    }

    /// Records metadata `key` = `value`.
    pub(super) fn declare_metadata<E>(
        &mut self,
        key: &str,
        value: &MetaValue<'_>,
    ) -> Result<(), WriteError<E>> {
        let record = to_u32(self.metadata_count());
        let key_len = key_len(key, record)?;
        if let MetaValue::Unknown { code, .. } = value {
            return Err(WriteError::Format(Error::MetaUnknownType { record, code: *code }));
        }
        if !value.is_writable() {
            return Err(WriteError::Format(Error::MetaValueShape { record }));
        }
        self.push_metadata(record, key_len, key, Value::Meta(value))
    }

    /// Declares metadata `key` = `value`, an array in the host's byte order.
    pub(super) fn declare_native<E>(
        &mut self,
        key: &str,
        value: &NativeArray<'_>,
    ) -> Result<(), WriteError<E>> {
        let record = to_u32(self.metadata_count());
        let key_len = key_len(key, record)?;
        self.push_metadata(record, key_len, key, Value::Native(value))
    }

    /// Number of metadata records declared.
    pub(super) fn metadata_count(&self) -> usize {
        self.ledger.meta_order.items().len()
    }

    /// Keeps the item of `key` (`key_len` bytes, checked) = `value`, a writable value, as record `record`.
    fn push_metadata<E>(
        &mut self,
        record: u32,
        key_len: u16,
        key: &str,
        value: Value<'_, '_>,
    ) -> Result<(), WriteError<E>> {
        let start = to_u32(self.ledger.meta_items.items().len());
        if start == u32::MAX {
            return Err(WriteError::BufferFull(Buffer::MetadataBytes));
        }
        meta_item::push(&mut self.ledger.meta_items, key_len, key, value).map_err(|e| match e {
            PushError::TooLong => WriteError::Format(Error::MetaBounds { record }),
            PushError::Full => WriteError::BufferFull(Buffer::MetadataBytes),
        })?;
        if !self.ledger.meta_order.try_push(start) {
            return Err(WriteError::BufferFull(Buffer::MetadataRecords));
        }
        self.minor = self.minor.max(value.value_type().since_minor().unwrap_or(0));
        Ok(())
    }

    /// Ends declaration: sorts the index and the metadata, rejects duplicates, and places the payload
    /// section after the metadata.
    pub(super) fn seal<E>(&mut self) -> Result<(), WriteError<E>> {
        let n = self.entry_count();
        for entry in 0..to_u32(n) {
            if !self.ledger.index.try_push(entry) {
                return Err(WriteError::BufferFull(Buffer::Entries));
            }
        }
        let Ledger { descriptors, names, index, meta_items, meta_order, .. } = &mut self.ledger;
        let descriptors = descriptors.items();
        let name = |entry: u32| {
            usize::try_from(entry)
                .ok()
                .and_then(|i| descriptors.get(i))
                .map_or(&[][..], |d| name_in(names.items(), d))
        };
        // Total orders (ties broken by position), so every sort algorithm gives the same bytes.
        sort_by(index.items_mut(), |a, b| name(a).cmp(name(b)).then(a.cmp(&b)));
        let duplicate = index.items().windows(2).find_map(|pair| match *pair {
            [a, b] if name(a) == name(b) => Some(a.max(b)),
            _ => None,
        });
        if let Some(entry) = duplicate {
            return Err(WriteError::Format(Error::DuplicateName { entry }));
        }

        let items = meta_items.items();
        sort_by(meta_order.items_mut(), |a, b| {
            item_at(items, a).key.cmp(item_at(items, b).key).then(a.cmp(&b))
        });
        let duplicate = meta_order.items().windows(2).position(|pair| match *pair {
            [a, b] => item_at(items, a).key == item_at(items, b).key,
            _ => false,
        });
        if let Some(position) = duplicate {
            return Err(WriteError::Format(Error::MetaDuplicateKey {
                record: to_u32(position.saturating_add(1)),
            }));
        }

        let [table, index, names, metadata] = self.prefix_lengths().ok_or(WriteError::TooLarge)?;
        self.payload_start = u64::from(self.header_len())
            .checked_add(table)
            .and_then(|v| v.checked_add(index))
            .and_then(|v| v.checked_add(names))
            .and_then(|v| v.checked_add(metadata))
            .ok_or(WriteError::TooLarge)?;
        Ok(())
    }

    /// Lengths of the table, index, names and metadata sections.
    fn prefix_lengths(&self) -> Option<[u64; 4]> {
        let n = len_u64(self.entry_count());
        let items = self.ledger.meta_items.items();
        let order = self.ledger.meta_order.items();
        let mut metadata = len_u64(order.len()).checked_mul(u64::from(META_RECORD_LEN))?;
        for &start in order {
            let item = item_at(items, start);
            metadata =
                metadata.checked_add(len_u64(item.key.len()))?.checked_add(len_u64(item.value.len()))?;
        }
        Some([
            n.checked_mul(u64::from(DESCRIPTOR_LEN))?,
            n.checked_mul(INDEX_SLOT_LEN)?,
            len_u64(self.ledger.names.items().len()),
            metadata,
        ])
    }

    /// Every payload's offset from the declared lengths (for the one-pass writer); returns where the payload
    /// section ends.
    pub(super) fn place_all<E>(&mut self) -> Result<u64, WriteError<E>> {
        let mut cursor = self.payload_start;
        for (entry, d) in (0u32..).zip(self.ledger.descriptors.items_mut()) {
            if d.length.get() == UNKNOWN_LENGTH {
                return Err(WriteError::UnknownLength { entry });
            }
            let start = align_up(cursor, u64::from(d.alignment.get())).ok_or(WriteError::TooLarge)?;
            d.offset = U64::new(start);
            cursor = start.checked_add(d.length.get()).ok_or(WriteError::TooLarge)?;
        }
        Ok(cursor)
    }

    /// Places entry `entry`'s payload at the first aligned offset at or after `cursor`; returns that offset.
    pub(super) fn open<E>(&mut self, entry: usize, cursor: u64) -> Result<u64, WriteError<E>> {
        let d = self.ledger.descriptors.items_mut().get_mut(entry).ok_or(WriteError::TooManyEntries)?;
        let start = align_up(cursor, u64::from(d.alignment.get())).ok_or(WriteError::TooLarge)?;
        d.offset = U64::new(start);
        Ok(start)
    }

    /// Checks that `written` more bytes fit entry `entry`, of which `so_far` are already written.
    pub(super) fn check_room<E>(&self, entry: usize, so_far: u64, more: usize) -> Result<(), WriteError<E>> {
        let d = self.ledger.descriptors.items().get(entry).ok_or(WriteError::TooManyEntries)?;
        let expected = d.length.get();
        let total = so_far.checked_add(len_u64(more)).ok_or(WriteError::TooLarge)?;
        if expected != UNKNOWN_LENGTH && total > expected {
            return Err(WriteError::PayloadTooLong { entry: to_u32(entry), expected });
        }
        if total == UNKNOWN_LENGTH {
            return Err(WriteError::TooLarge);
        }
        Ok(())
    }

    /// Closes entry `entry` after `written` bytes with payload checksum `crc`: an open-ended entry takes that
    /// length, any other must have been given exactly its length.
    pub(super) fn close<E>(&mut self, entry: usize, written: u64, crc: u32) -> Result<(), WriteError<E>> {
        let position = to_u32(entry);
        let d = self.ledger.descriptors.items_mut().get_mut(entry).ok_or(WriteError::TooManyEntries)?;
        let expected = d.length.get();
        if expected == UNKNOWN_LENGTH {
            d.length = U64::new(written);
            if let Some(first) = d.dims.first_mut() {
                *first = U64::new(written);
            }
            let target = (d.flags & FLAG_HAS_TARGET != 0).then(|| d.target.get());
            check_target(position, target, written)?;
        } else if written != expected {
            return Err(WriteError::PayloadTooShort { entry: position, expected, written });
        }
        if !self.ledger.checksums.try_push(crc) {
            return Err(WriteError::BufferFull(Buffer::Entries));
        }
        Ok(())
    }

    /// The header, its checksum filled in, for a container whose payload section ends at `payload_end`.
    pub(super) fn header<E>(&self, payload_end: u64) -> Result<Header, WriteError<E>> {
        let mut header = self.unsealed_header(payload_end).ok_or(WriteError::TooLarge)?;
        let mut crc = PrefixCrc { position: 0, crc: Crc32::new() };
        let _ = self.emit_prefix(&header, &mut |bytes: &[u8]| -> Result<(), ()> {
            crc.update(bytes);
            Ok(())
        });
        header.header_crc = U32::new(crc.crc.finish());
        Ok(header)
    }

    fn unsealed_header(&self, payload_end: u64) -> Option<Header> {
        let n = self.entry_count();
        let [table, index, names, metadata] = self.prefix_lengths()?;
        let payloads = payload_end.checked_sub(self.payload_start)?;
        let trailer = len_u64(n).checked_add(1)?.checked_mul(TRAILER_SLOT_LEN)?;
        let mut sections = [SectionRef::default(); 6];
        let mut cursor = u64::from(self.header_len());
        for (slot, len) in sections.iter_mut().zip([table, index, names, metadata, payloads, trailer]) {
            *slot = SectionRef { offset: U64::new(cursor), length: U64::new(len) };
            cursor = cursor.checked_add(len)?;
        }
        Some(Header {
            magic: MAGIC,
            version_major: U16::new(VERSION_MAJOR),
            version_minor: U16::new(self.minor),
            header_len: U32::new(self.header_len()),
            incompat_flags: U64::new(0),
            compat_flags: U64::new(self.compat_flags),
            total_len: U64::new(cursor),
            entry_count: U32::new(to_u32(n)),
            descriptor_len: U32::new(DESCRIPTOR_LEN),
            meta_count: U32::new(to_u32(self.ledger.meta_order.items().len())),
            header_crc: U32::new(0),
            sections,
            reserved: [0; 8],
        })
    }

    /// Emits the checksummed region — header, table, index, names, metadata — piece by piece.
    pub(super) fn emit_prefix<X>(
        &self,
        header: &Header,
        out: &mut impl FnMut(&[u8]) -> Result<(), X>,
    ) -> Result<(), X> {
        out(header.as_bytes())?;
        self.emit_extension(out)?;
        out(self.ledger.descriptors.items().as_bytes())?;
        let mut chunk = [0u8; 256];
        for slots in self.ledger.index.items().chunks(chunk.len() / 4) {
            for (bytes, slot) in chunk.chunks_exact_mut(4).zip(slots) {
                bytes.copy_from_slice(&slot.to_le_bytes());
            }
            out(chunk.get(..slots.len().saturating_mul(4)).unwrap_or(&[]))?;
        }
        out(self.ledger.names.items())?;
        let items = self.ledger.meta_items.items();
        let order = self.ledger.meta_order.items();
        let mut pool_cursor: u32 = 0;
        for &start in order {
            let item = item_at(items, start);
            let key_offset = pool_cursor;
            pool_cursor = pool_cursor.saturating_add(to_u32(item.key.len()));
            let value_offset = if item.value_type.is_inline() { 0 } else { pool_cursor };
            pool_cursor = pool_cursor.saturating_add(to_u32(item.value.len()));
            let record = MetaRecord {
                key_offset: U32::new(key_offset),
                key_len: U16::new(u16::try_from(item.key.len()).unwrap_or(u16::MAX)),
                value_type: item.value_type.code(),
                reserved: 0,
                value_len: U32::new(to_u32(item.value.len())),
                value_offset: U32::new(value_offset),
                value: U64::new(item.inline),
            };
            out(record.as_bytes())?;
        }
        for &start in order {
            let item = item_at(items, start);
            out(item.key)?;
            out(item.value)?;
        }
        Ok(())
    }

    /// Emits the header extension: nothing, or the block geometry item with one record per block dtype used,
    /// in code order (spec §3.4, §11.1).
    fn emit_extension<X>(&self, out: &mut impl FnMut(&[u8]) -> Result<(), X>) -> Result<(), X> {
        let records = self.block_dtypes.count_ones();
        if self.header_len() == HEADER_LEN_V1 {
            return Ok(());
        }
        let item = ExtensionItem {
            tag: U32::new(TAG_BLOCK_GEOMETRY),
            length: U32::new(records.saturating_mul(GEOMETRY_RECORD_LEN)),
        };
        out(item.as_bytes())?;
        for code in 0..64u16 {
            if self.block_dtypes & 1u64.checked_shl(u32::from(code)).unwrap_or(0) == 0 {
                continue;
            }
            let Some(Packing::Block { block_elems, block_bytes }) = Dtype::from_code(code).packing() else {
                continue;
            };
            let record = GeometryRecord {
                dtype: U16::new(code),
                reserved: U16::new(0),
                block_elements: U32::new(u32::try_from(block_elems).unwrap_or(u32::MAX)),
                block_bytes: U32::new(u32::try_from(block_bytes).unwrap_or(u32::MAX)),
                reserved2: U32::new(0),
            };
            out(record.as_bytes())?;
        }
        Ok(())
    }

    /// Emits the trailer: the payload checksums, then their own checksum.
    pub(super) fn emit_trailer<X>(&self, out: &mut impl FnMut(&[u8]) -> Result<(), X>) -> Result<(), X> {
        let mut all = Crc32::new();
        for crc in self.ledger.checksums.items() {
            let bytes = crc.to_le_bytes();
            all.update(&bytes);
            out(&bytes)?;
        }
        out(&all.finish().to_le_bytes())
    }

    /// Length of the trailer in bytes.
    pub(super) fn trailer_len(&self) -> u64 {
        len_u64(self.entry_count()).saturating_add(1).saturating_mul(TRAILER_SLOT_LEN)
    }
}

/// R32 for an entry of `length` bytes at `target`.
fn check_target<E>(entry: u32, target: Option<u64>, length: u64) -> Result<(), WriteError<E>> {
    let end = target.map(|t| u128::from(t).saturating_add(u128::from(length)));
    if end.is_some_and(|end| end > 1u128 << 64) {
        return Err(WriteError::Format(Error::TargetOverflow { entry }));
    }
    Ok(())
}

/// Feeds a CRC with everything but the four bytes of `header_crc` (spec §3.3).
struct PrefixCrc {
    position: usize,
    crc: Crc32,
}

impl PrefixCrc {
    fn update(&mut self, bytes: &[u8]) {
        let skip_start = HEADER_CRC_OFFSET.saturating_sub(self.position);
        let skip_end = HEADER_CRC_OFFSET.saturating_add(4).saturating_sub(self.position);
        let (before, rest) = bytes.split_at(skip_start.min(bytes.len()));
        self.crc.update(before);
        let skipped = skip_end.saturating_sub(skip_start).min(rest.len());
        self.crc.update(rest.get(skipped..).unwrap_or(&[]));
        self.position = self.position.saturating_add(bytes.len());
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;
    use crate::checksum::header_crc;
    use crate::format::{Dtype, Section};
    use crate::write::FixedBookkeeping;

    type Small = Plan<FixedBookkeeping<8, 256>>;

    fn prefix(plan: &Small, header: &Header) -> Vec<u8> {
        let mut out = Vec::new();
        plan.emit_prefix(header, &mut |b: &[u8]| -> Result<(), ()> {
            out.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn places_payloads_at_the_smallest_aligned_offsets() {
        let mut plan = Small::new(FixedBookkeeping);
        plan.declare::<()>(&EntryDecl::new("b", Dtype::U8, &[3]).with_alignment(1)).unwrap();
        plan.declare::<()>(&EntryDecl::new("a", Dtype::F32, &[2]).with_alignment(16)).unwrap();
        plan.declare_metadata::<()>("k", &MetaValue::U64(7)).unwrap();
        plan.seal::<()>().unwrap();
        // Header, two descriptors, two index slots, names "ba", one record and its key "k".
        assert_eq!(plan.payload_start(), 160 + 2 * 104 + 2 * 4 + 2 + 24 + 1);
        let end = plan.place_all::<()>().unwrap();
        let start = plan.payload_start();
        let d = plan.ledger.descriptors.items();
        assert_eq!(d[0].offset.get(), start);
        assert_eq!(d[1].offset.get(), (start + 3).next_multiple_of(16));
        assert_eq!(end, d[1].offset.get() + 8);
        // The index is sorted by name: "a" (entry 1) before "b" (entry 0).
        assert_eq!(plan.ledger.index.items(), [1, 0]);
    }

    #[test]
    fn the_header_describes_the_prefix_and_checksums_it() {
        let mut plan = Small::new(FixedBookkeeping);
        plan.declare::<()>(&EntryDecl::new("w", Dtype::U8, &[4])).unwrap();
        plan.declare_metadata::<()>("s", &MetaValue::String("text")).unwrap();
        plan.seal::<()>().unwrap();
        let end = plan.place_all::<()>().unwrap();
        let header = plan.header::<()>(end).unwrap();
        let bytes = prefix(&plan, &header);
        assert_eq!(crate::layout::len_u64(bytes.len()), plan.payload_start());
        assert_eq!(header.header_crc.get(), header_crc(&bytes));
        let sections = header.sections;
        let at = |s: Section| sections[s as usize];
        assert_eq!(at(Section::Payloads).offset.get(), plan.payload_start());
        assert_eq!(at(Section::Trailer).length.get(), plan.trailer_len());
        assert_eq!(header.total_len.get(), end + plan.trailer_len());
    }

    #[test]
    fn refuses_duplicates_when_sealing() {
        let mut plan = Small::new(FixedBookkeeping);
        plan.declare::<()>(&EntryDecl::new("x", Dtype::U8, &[1])).unwrap();
        plan.declare::<()>(&EntryDecl::new("x", Dtype::U8, &[1])).unwrap();
        assert_eq!(plan.seal::<()>(), Err(WriteError::Format(Error::DuplicateName { entry: 1 })));
        let mut plan = Small::new(FixedBookkeeping);
        plan.declare_metadata::<()>("k", &MetaValue::Bool(true)).unwrap();
        plan.declare_metadata::<()>("k", &MetaValue::Bool(false)).unwrap();
        assert_eq!(plan.seal::<()>(), Err(WriteError::Format(Error::MetaDuplicateKey { record: 1 })));
    }

    #[test]
    fn a_full_buffer_is_reported_by_name() {
        let mut plan = Plan::<FixedBookkeeping<1, 4>>::new(FixedBookkeeping);
        assert_eq!(
            plan.declare::<()>(&EntryDecl::new("long", Dtype::U8, &[1]))
                .and(plan.declare::<()>(&EntryDecl::new("x", Dtype::U8, &[1]))),
            Err(WriteError::BufferFull(Buffer::Names))
        );
        assert_eq!(
            plan.declare_metadata::<()>("key", &MetaValue::U64(1)),
            Err(WriteError::BufferFull(Buffer::MetadataBytes))
        );
    }

    #[test]
    fn an_open_ended_entry_takes_the_length_written() {
        let mut plan = Small::new(FixedBookkeeping);
        plan.declare::<()>(&EntryDecl::open_ended("code", Dtype::RAW)).unwrap();
        plan.seal::<()>().unwrap();
        assert_eq!(plan.place_all::<()>(), Err(WriteError::UnknownLength { entry: 0 }));
        plan.close::<()>(0, 5, 0).unwrap();
        let d = plan.ledger.descriptors.items()[0];
        assert_eq!((d.length.get(), d.dims[0].get()), (5, 5));
    }
}
