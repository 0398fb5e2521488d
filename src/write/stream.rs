//! The streaming writers: [`SeekWriter`] back-patches a seekable sink, [`StreamWriter`] writes a
//! non-seekable one in one pass. Both produce the one canonical layout (spec §11), byte for byte.
//!
//! Protocol: declare every entry ([`EntryDecl`]) and metadata value, then write each entry's payload in
//! declaration order — in chunks of any size, each entry closed with `end_entry` — then `finish`.

use embedded_io::{Seek, SeekFrom, Write};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::IntoBytes;

use super::error::WriteError;
use super::sort::sort_by;
use super::storage::{extend, Buf, Table, Tables};
use crate::checksum::Crc32;
use crate::error::Error;
use crate::format::{
    Descriptor, Dtype, Header, MetaRecord, MetaType, Section, SectionRef, Storage, DEFAULT_ALIGNMENT,
    DESCRIPTOR_LEN, FLAG_HAS_TARGET, HEADER_CRC_OFFSET, HEADER_LEN_V1, INDEX_SLOT_LEN, MAGIC, MAX_ALIGNMENT,
    MAX_KEY_LEN, MAX_NAME_LEN, MAX_RANK, META_RECORD_LEN, TRAILER_SLOT_LEN, VERSION_MAJOR, VERSION_MINOR,
};
use crate::read::expected_length;
use crate::write::Value;

/// Stored in a descriptor's `length` while an entry declared without a shape is still open.
const UNKNOWN_LENGTH: u64 = u64::MAX;
/// Bytes of a metadata item's header in the writer's own encoding: key_len u16, type u8, inline u64,
/// value_len u32.
const ITEM_HEADER: usize = 15;
const ZEROS: [u8; 512] = [0; 512];

/// One entry to declare: everything but its payload.
#[derive(Clone, Copy, Debug)]
pub struct EntryDecl<'a> {
    /// Name: UTF-8, 1 to 1024 bytes, unique in the container.
    pub name: &'a str,
    /// Element type.
    pub dtype: Dtype,
    /// Shape, outermost first; `None` only for `RAW` and `CONTAINER` entries whose length is whatever gets
    /// written (the seekable writer only).
    pub shape: Option<&'a [u64]>,
    /// Payload alignment: a power of two up to 65536.
    pub alignment: u32,
    /// Load address, if any.
    pub target: Option<u64>,
}

impl<'a> EntryDecl<'a> {
    /// An entry of known shape, with the default alignment (64) and no target.
    #[must_use]
    pub fn new(name: &'a str, dtype: Dtype, shape: &'a [u64]) -> Self {
        Self { name, dtype, shape: Some(shape), alignment: DEFAULT_ALIGNMENT, target: None }
    }

    /// A `RAW` (or `CONTAINER`) entry whose length is decided by what is written to it.
    #[must_use]
    pub fn open_ended(name: &'a str, dtype: Dtype) -> Self {
        Self { name, dtype, shape: None, alignment: DEFAULT_ALIGNMENT, target: None }
    }

    /// The same entry with another alignment.
    #[must_use]
    pub fn with_alignment(self, alignment: u32) -> Self {
        Self { alignment, ..self }
    }

    /// The same entry with a load address.
    #[must_use]
    pub fn with_target(self, target: u64) -> Self {
        Self { target: Some(target), ..self }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Declaring,
    Streaming,
    Done,
    Poisoned,
}

/// What both writers share: the bookkeeping and the payload cursor. It never touches the sink itself, so the
/// two writers differ only in when they write the prefix.
#[derive(Debug)]
struct Core<D, B, W> {
    tables: Tables<D, B, W>,
    state: State,
    compat_flags: u64,
    /// First byte after the metadata: where the payload section starts.
    payload_start: u64,
    cursor: u64,
    current: usize,
    open: bool,
    written: u64,
    crc: Crc32,
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn too_big<E>() -> WriteError<E> {
    WriteError::Format(Error::SectionBounds { section: Section::Payloads })
}

fn align_up(value: u64, alignment: u32) -> Option<u64> {
    let mask = u64::from(alignment).checked_sub(1)?;
    Some(value.checked_add(mask)? & !mask)
}

/// A metadata item as the writer keeps it: `[key_len u16][type u8][inline u64][value_len u32][key][value]`.
struct Item<'a> {
    key: &'a [u8],
    value_type: u8,
    inline: u64,
    value: &'a [u8],
}

fn item_at(bytes: &[u8], start: u32) -> Item<'_> {
    let rest = usize::try_from(start).ok().and_then(|s| bytes.get(s..)).unwrap_or(&[]);
    let field = |at: usize, len: usize| rest.get(at..at.saturating_add(len)).unwrap_or(&[]);
    let key_len = usize::from(u16::from_le_bytes(field(0, 2).try_into().unwrap_or([0; 2])));
    let value_type = field(2, 1).first().copied().unwrap_or(0);
    let inline = u64::from_le_bytes(field(3, 8).try_into().unwrap_or([0; 8]));
    let value_len = u32::from_le_bytes(field(11, 4).try_into().unwrap_or([0; 4]));
    let value_len = usize::try_from(value_len).unwrap_or(0);
    let key = field(ITEM_HEADER, key_len);
    let value = field(ITEM_HEADER.saturating_add(key_len), value_len);
    Item { key, value_type, inline, value }
}

fn name_of<'a>(descriptors: &[Descriptor], names: &'a [u8], entry: u32) -> &'a [u8] {
    let Some(d) = usize::try_from(entry).ok().and_then(|i| descriptors.get(i)) else {
        return &[];
    };
    let start = usize::try_from(d.name_offset.get()).unwrap_or(usize::MAX);
    let end = start.saturating_add(usize::try_from(d.name_len.get()).unwrap_or(0));
    names.get(start..end).unwrap_or(&[])
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

impl<D, B, W> Core<D, B, W>
where
    D: Buf<Descriptor>,
    B: Buf<u8>,
    W: Buf<u32>,
{
    fn new(tables: Tables<D, B, W>) -> Self {
        Self {
            tables,
            state: State::Declaring,
            compat_flags: 0,
            payload_start: 0,
            cursor: 0,
            current: 0,
            open: false,
            written: 0,
            crc: Crc32::new(),
        }
    }

    fn live<E>(&self) -> Result<(), WriteError<E>> {
        match self.state {
            State::Poisoned => Err(WriteError::Poisoned),
            State::Done => Err(WriteError::TooManyEntries),
            _ => Ok(()),
        }
    }

    /// Runs `f`, poisoning the writer if it fails.
    fn guard<T, E>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, WriteError<E>>,
    ) -> Result<T, WriteError<E>> {
        if self.state == State::Poisoned {
            return Err(WriteError::Poisoned);
        }
        let result = f(self);
        if result.is_err() {
            self.state = State::Poisoned;
        }
        result
    }

    fn declare<E>(&mut self, decl: &EntryDecl<'_>) -> Result<(), WriteError<E>> {
        if self.state != State::Declaring {
            return Err(WriteError::AlreadyStarted);
        }
        let entry = to_u32(self.tables.descriptors.items().len());
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
                let length =
                    expected_length(entry, decl.dtype, shape.iter().copied()).map_err(WriteError::Format)?;
                let length = length
                    .ok_or(WriteError::Format(Error::UnknownDtype { entry, code: decl.dtype.code() }))?;
                (rank, length)
            }
            None if decl.dtype.storage() == Some(Storage::Bytes) => (1, UNKNOWN_LENGTH),
            None => return Err(WriteError::UnsizedNotBytes { entry }),
        };
        if !decl.alignment.is_power_of_two() || decl.alignment > MAX_ALIGNMENT {
            return Err(WriteError::Format(Error::BadAlignment { entry, alignment: decl.alignment }));
        }
        if length != UNKNOWN_LENGTH {
            check_target(entry, decl.target, length)?;
        }
        let name_offset = to_u32(self.tables.names.items().len());
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
        if name_offset == u32::MAX || !extend(&mut self.tables.names, decl.name.as_bytes()) {
            return Err(WriteError::Capacity(Table::Names));
        }
        if !self.tables.descriptors.try_push(descriptor) {
            return Err(WriteError::Capacity(Table::Entries));
        }
        Ok(())
    }

    fn meta<E>(&mut self, key: &str, value: &Value<'_>) -> Result<(), WriteError<E>> {
        if self.state != State::Declaring {
            return Err(WriteError::AlreadyStarted);
        }
        let record = to_u32(self.tables.meta_order.items().len());
        let key_len = u16::try_from(key.len()).ok().filter(|&k| k != 0 && k <= MAX_KEY_LEN);
        let Some(key_len) = key_len else {
            return Err(WriteError::Format(Error::MetaKeyLength { record }));
        };
        let start = to_u32(self.tables.meta_items.items().len());
        let (value_type, inline, value_len) = value.describe();
        let value_len =
            u32::try_from(value_len).map_err(|_| WriteError::Format(Error::MetaBounds { record }))?;
        let items = &mut self.tables.meta_items;
        let ok = start != u32::MAX
            && extend(items, &key_len.to_le_bytes())
            && items.try_push(value_type.code())
            && extend(items, &inline.to_le_bytes())
            && extend(items, &value_len.to_le_bytes())
            && extend(items, key.as_bytes())
            && value.encode_into(items);
        if !ok {
            return Err(WriteError::Capacity(Table::MetaBytes));
        }
        if !self.tables.meta_order.try_push(start) {
            return Err(WriteError::Capacity(Table::MetaRecords));
        }
        Ok(())
    }

    /// Ends declaration: sorts the index and the metadata, rejects duplicates, and places the payload
    /// section.
    fn begin<E>(&mut self) -> Result<(), WriteError<E>> {
        if self.state != State::Declaring {
            return Ok(());
        }
        let n = self.tables.descriptors.items().len();
        for entry in 0..to_u32(n) {
            if !self.tables.index.try_push(entry) {
                return Err(WriteError::Capacity(Table::Entries));
            }
        }
        let Tables { descriptors, names, index, meta_items, meta_order, .. } = &mut self.tables;
        let name = |entry: u32| name_of(descriptors.items(), names.items(), entry);
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

        let [table, index, names, meta] = self.section_lengths().ok_or_else(too_big)?;
        self.payload_start = u64::from(HEADER_LEN_V1)
            .checked_add(table)
            .and_then(|v| v.checked_add(index))
            .and_then(|v| v.checked_add(names))
            .and_then(|v| v.checked_add(meta))
            .ok_or_else(too_big)?;
        self.cursor = self.payload_start;
        self.state = State::Streaming;
        Ok(())
    }

    /// Lengths of the table, index, names and metadata sections.
    fn section_lengths(&self) -> Option<[u64; 4]> {
        let n = to_u64(self.tables.descriptors.items().len());
        let items = self.tables.meta_items.items();
        let mut meta =
            to_u64(self.tables.meta_order.items().len()).checked_mul(u64::from(META_RECORD_LEN))?;
        for &start in self.tables.meta_order.items() {
            let item = item_at(items, start);
            meta = meta.checked_add(to_u64(item.key.len()))?.checked_add(to_u64(item.value.len()))?;
        }
        Some([
            n.checked_mul(u64::from(DESCRIPTOR_LEN))?,
            n.checked_mul(INDEX_SLOT_LEN)?,
            to_u64(self.tables.names.items().len()),
            meta,
        ])
    }

    /// For the one-pass writer: every payload's offset, from the declared lengths.
    fn place_all<E>(&mut self) -> Result<(), WriteError<E>> {
        let mut cursor = self.payload_start;
        for (entry, d) in (0u32..).zip(self.tables.descriptors.items_mut()) {
            if d.length.get() == UNKNOWN_LENGTH {
                return Err(WriteError::UnknownLength { entry });
            }
            let start = align_up(cursor, d.alignment.get()).ok_or_else(too_big)?;
            d.offset = U64::new(start);
            cursor = start.checked_add(d.length.get()).ok_or_else(too_big)?;
        }
        Ok(())
    }

    /// The current entry, opened if it was not: returns how many padding bytes must precede its payload.
    fn open_entry<E>(&mut self) -> Result<u64, WriteError<E>> {
        if self.open {
            return Ok(0);
        }
        let cursor = self.cursor;
        let d =
            self.tables.descriptors.items_mut().get_mut(self.current).ok_or(WriteError::TooManyEntries)?;
        let start = align_up(cursor, d.alignment.get()).ok_or_else(too_big)?;
        d.offset = U64::new(start);
        self.open = true;
        self.written = 0;
        self.crc = Crc32::new();
        self.cursor = start;
        Ok(start.saturating_sub(cursor))
    }

    fn check_room<E>(&self, len: usize) -> Result<(), WriteError<E>> {
        let d = self.tables.descriptors.items().get(self.current).ok_or(WriteError::TooManyEntries)?;
        let expected = d.length.get();
        let total = self.written.checked_add(to_u64(len)).ok_or_else(too_big)?;
        if expected != UNKNOWN_LENGTH && total > expected {
            return Err(WriteError::PayloadTooLong { entry: to_u32(self.current), expected });
        }
        if total == UNKNOWN_LENGTH {
            return Err(too_big());
        }
        Ok(())
    }

    fn account(&mut self, chunk: &[u8]) {
        self.crc.update(chunk);
        self.written = self.written.saturating_add(to_u64(chunk.len()));
        self.cursor = self.cursor.saturating_add(to_u64(chunk.len()));
    }

    fn close_entry<E>(&mut self) -> Result<(), WriteError<E>> {
        let entry = to_u32(self.current);
        let written = self.written;
        let d =
            self.tables.descriptors.items_mut().get_mut(self.current).ok_or(WriteError::TooManyEntries)?;
        let expected = d.length.get();
        if expected == UNKNOWN_LENGTH {
            d.length = U64::new(written);
            if let Some(first) = d.dims.first_mut() {
                *first = U64::new(written);
            }
            let target = (d.flags & FLAG_HAS_TARGET != 0).then(|| d.target.get());
            check_target(entry, target, written)?;
        } else if written != expected {
            return Err(WriteError::PayloadTooShort { entry, expected, written });
        }
        let crc = core::mem::take(&mut self.crc).finish();
        if !self.tables.checksums.try_push(crc) {
            return Err(WriteError::Capacity(Table::Entries));
        }
        self.current = self.current.saturating_add(1);
        self.open = false;
        Ok(())
    }

    fn check_complete<E>(&self) -> Result<(), WriteError<E>> {
        let declared = self.tables.descriptors.items().len();
        if self.current < declared || self.open {
            return Err(WriteError::EntriesMissing {
                written: to_u32(self.current),
                declared: to_u32(declared),
            });
        }
        Ok(())
    }

    /// The header for a container whose payload section ends at `payload_end`.
    fn header(&self, payload_end: u64) -> Option<Header> {
        let n = self.tables.descriptors.items().len();
        let lengths = self.section_lengths()?;
        let trailer_len = to_u64(n).checked_add(1)?.checked_mul(TRAILER_SLOT_LEN)?;
        let mut sections = [SectionRef::default(); 6];
        let mut cursor = u64::from(HEADER_LEN_V1);
        let all = [
            lengths[0],
            lengths[1],
            lengths[2],
            lengths[3],
            payload_end.checked_sub(self.payload_start)?,
            trailer_len,
        ];
        for (slot, len) in sections.iter_mut().zip(all) {
            *slot = SectionRef { offset: U64::new(cursor), length: U64::new(len) };
            cursor = cursor.checked_add(len)?;
        }
        Some(Header {
            magic: MAGIC,
            version_major: U16::new(VERSION_MAJOR),
            version_minor: U16::new(VERSION_MINOR),
            header_len: U32::new(HEADER_LEN_V1),
            incompat_flags: U64::new(0),
            compat_flags: U64::new(self.compat_flags),
            total_len: U64::new(cursor),
            entry_count: U32::new(to_u32(n)),
            descriptor_len: U32::new(DESCRIPTOR_LEN),
            meta_count: U32::new(to_u32(self.tables.meta_order.items().len())),
            header_crc: U32::new(0),
            sections,
            reserved: [0; 8],
        })
    }

    /// Emits the checksummed region — header, table, index, names, metadata — piece by piece.
    fn emit_prefix<X>(&self, header: &Header, out: &mut impl FnMut(&[u8]) -> Result<(), X>) -> Result<(), X> {
        out(header.as_bytes())?;
        out(self.tables.descriptors.items().as_bytes())?;
        let mut chunk = [0u8; 256];
        for slots in self.tables.index.items().chunks(chunk.len() / 4) {
            for (bytes, slot) in chunk.chunks_exact_mut(4).zip(slots) {
                bytes.copy_from_slice(&slot.to_le_bytes());
            }
            out(chunk.get(..slots.len().saturating_mul(4)).unwrap_or(&[]))?;
        }
        out(self.tables.names.items())?;
        let items = self.tables.meta_items.items();
        let mut pool_cursor: u32 = 0;
        for &start in self.tables.meta_order.items() {
            let item = item_at(items, start);
            let key_offset = pool_cursor;
            pool_cursor = pool_cursor.saturating_add(to_u32(item.key.len()));
            let inline = MetaType::from_code(item.value_type).is_inline();
            let value_offset = if inline { 0 } else { pool_cursor };
            pool_cursor = pool_cursor.saturating_add(to_u32(item.value.len()));
            let record = MetaRecord {
                key_offset: U32::new(key_offset),
                key_len: U16::new(u16::try_from(item.key.len()).unwrap_or(u16::MAX)),
                value_type: item.value_type,
                reserved: 0,
                value_len: U32::new(to_u32(item.value.len())),
                value_offset: U32::new(value_offset),
                value: U64::new(item.inline),
            };
            out(record.as_bytes())?;
        }
        for &start in self.tables.meta_order.items() {
            let item = item_at(items, start);
            out(item.key)?;
            out(item.value)?;
        }
        Ok(())
    }

    /// The header with its checksum filled in.
    fn sealed_header<E>(&self, payload_end: u64) -> Result<Header, WriteError<E>> {
        let mut header = self.header(payload_end).ok_or_else(too_big)?;
        let mut crc = PrefixCrc { position: 0, crc: Crc32::new() };
        let _ = self.emit_prefix(&header, &mut |bytes: &[u8]| -> Result<(), ()> {
            crc.update(bytes);
            Ok(())
        });
        header.header_crc = U32::new(crc.crc.finish());
        Ok(header)
    }

    fn emit_trailer<X>(&self, out: &mut impl FnMut(&[u8]) -> Result<(), X>) -> Result<(), X> {
        let mut all = Crc32::new();
        for crc in self.tables.checksums.items() {
            let bytes = crc.to_le_bytes();
            all.update(&bytes);
            out(&bytes)?;
        }
        out(&all.finish().to_le_bytes())
    }
}

fn check_target<E>(entry: u32, target: Option<u64>, length: u64) -> Result<(), WriteError<E>> {
    let end = target.map(|t| u128::from(t).saturating_add(u128::from(length)));
    if end.is_some_and(|end| end > 1u128 << 64) {
        return Err(WriteError::Format(Error::TargetOverflow { entry }));
    }
    Ok(())
}

fn write_zeros<S: Write>(sink: &mut S, mut count: u64) -> Result<(), S::Error> {
    while count > 0 {
        let n = usize::try_from(count).unwrap_or(usize::MAX).min(ZEROS.len());
        sink.write_all(ZEROS.get(..n).unwrap_or(&[]))?;
        count = count.saturating_sub(to_u64(n));
    }
    Ok(())
}

macro_rules! shared_writer_api {
    () => {
        /// Sets the compatible-feature flags (none are defined in 1.0).
        pub fn set_compat_flags(&mut self, flags: u64) {
            self.core.compat_flags = flags;
        }

        /// Declares the next entry. Payloads are laid out in declaration order.
        ///
        /// # Errors
        /// [`WriteError::Format`] with the rule the entry would break (name length, rank, shape, alignment,
        /// target); [`WriteError::Capacity`]; [`WriteError::UnsizedNotBytes`];
        /// [`WriteError::AlreadyStarted`] once payloads have begun.
        pub fn declare(&mut self, entry: EntryDecl<'_>) -> Result<(), WriteError<S::Error>> {
            self.core.guard(|core| core.declare(&entry))
        }

        /// Declares a metadata value.
        ///
        /// # Errors
        /// [`WriteError::Format`] for a bad key, [`WriteError::Capacity`], [`WriteError::AlreadyStarted`].
        /// Duplicate keys are reported when payloads begin (or at `finish`).
        pub fn meta(&mut self, key: &str, value: Value<'_>) -> Result<(), WriteError<S::Error>> {
            self.core.guard(|core| core.meta(key, &value))
        }

        /// Appends `chunk` to the current entry's payload (the first entry not yet ended). The first call ends
        /// declaration.
        ///
        /// # Errors
        /// [`WriteError::PayloadTooLong`] past the entry's length, [`WriteError::TooManyEntries`] after the
        /// last entry, [`WriteError::Io`], and the errors of starting (duplicate names or keys).
        pub fn write(&mut self, chunk: &[u8]) -> Result<(), WriteError<S::Error>> {
            self.start()?;
            let sink = &mut self.sink;
            self.core.guard(|core| {
                core.live()?;
                let padding = core.open_entry()?;
                core.check_room(chunk.len())?;
                write_zeros(sink, padding).map_err(WriteError::Io)?;
                sink.write_all(chunk).map_err(WriteError::Io)?;
                core.account(chunk);
                Ok(())
            })
        }

        /// Ends the current entry.
        ///
        /// # Errors
        /// [`WriteError::PayloadTooShort`] if fewer bytes were written than its shape gives,
        /// [`WriteError::Format`] for a target that overflows, [`WriteError::TooManyEntries`], I/O errors.
        pub fn end_entry(&mut self) -> Result<(), WriteError<S::Error>> {
            self.start()?;
            let sink = &mut self.sink;
            self.core.guard(|core| {
                core.live()?;
                let padding = core.open_entry()?;
                write_zeros(sink, padding).map_err(WriteError::Io)?;
                core.close_entry()
            })
        }

        /// Writes a whole entry: declared shape, one chunk, ended.
        ///
        /// # Errors
        /// As [`Self::write`] and [`Self::end_entry`].
        pub fn write_entry(&mut self, payload: &[u8]) -> Result<(), WriteError<S::Error>> {
            self.write(payload)?;
            self.end_entry()
        }

        /// Bytes of the container written so far (the prefix included).
        #[must_use]
        pub fn position(&self) -> u64 {
            self.core.cursor
        }
    };
}

/// A writer for sinks that can seek: payloads stream out as they come, with lengths that need not be known in
/// advance ([`EntryDecl::open_ended`]); the prefix is written as zeros first and back-patched by
/// [`SeekWriter::finish`]. Memory: the bookkeeping in `T` only, never a payload.
///
/// ```
/// use tpack::{Container, Dtype, EntryDecl, SeekWriter, VecTables};
/// let mut out = embedded_io_adapters::std::FromStd::new(std::io::Cursor::new(Vec::new()));
/// let mut w = SeekWriter::new(&mut out, VecTables::new());
/// w.declare(EntryDecl::new("w", Dtype::U8, &[4]))?;
/// w.declare(EntryDecl::open_ended("code", Dtype::Raw))?;
/// w.write(&[1, 2])?;
/// w.write(&[3, 4])?;
/// w.end_entry()?;
/// w.write(b"any length")?;
/// w.end_entry()?;
/// w.finish()?;
/// let bytes = out.into_inner().into_inner();
/// assert_eq!(Container::parse(&bytes)?.get("code").unwrap().payload(), b"any length");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SeekWriter<S, D, B, W> {
    sink: S,
    core: Core<D, B, W>,
}

impl<S, D, B, W> SeekWriter<S, D, B, W>
where
    S: Write + Seek,
    D: Buf<Descriptor>,
    B: Buf<u8>,
    W: Buf<u32>,
{
    /// A writer that starts at the sink's current position 0 and keeps its bookkeeping in `tables`.
    pub fn new(sink: S, tables: Tables<D, B, W>) -> Self {
        Self { sink, core: Core::new(tables) }
    }

    fn start(&mut self) -> Result<(), WriteError<S::Error>> {
        if self.core.state != State::Declaring {
            return Ok(());
        }
        let sink = &mut self.sink;
        self.core.guard(|core| {
            core.begin()?;
            // Zeros stand in for the prefix until `finish`: an interrupted file has no magic.
            write_zeros(sink, core.payload_start).map_err(WriteError::Io)
        })
    }

    shared_writer_api!();

    /// Writes the trailer, then seeks back and writes the header, table, index, names and metadata — the
    /// magic last of all, so the file becomes a container only once everything else is down. Returns the
    /// sink, positioned after the magic.
    ///
    /// # Errors
    /// [`WriteError::EntriesMissing`] before every entry is written; I/O errors.
    pub fn finish(mut self) -> Result<S, WriteError<S::Error>> {
        self.start()?;
        let sink = &mut self.sink;
        self.core.guard(|core| {
            core.check_complete()?;
            let payload_end = core.cursor;
            core.emit_trailer(&mut |b: &[u8]| sink.write_all(b)).map_err(WriteError::Io)?;
            let header = core.sealed_header(payload_end)?;
            // Everything but the magic first, the magic last: until its eight bytes are all down, the file
            // is not a container, so a failure at any byte leaves nothing that parses as valid.
            sink.seek(SeekFrom::Start(to_u64(MAGIC.len()))).map_err(WriteError::Io)?;
            let mut skip = MAGIC.len();
            core.emit_prefix(&header, &mut |b: &[u8]| {
                let (_, rest) = b.split_at(skip.min(b.len()));
                skip = skip.saturating_sub(b.len());
                sink.write_all(rest)
            })
            .map_err(WriteError::Io)?;
            sink.seek(SeekFrom::Start(0)).map_err(WriteError::Io)?;
            sink.write_all(&MAGIC).map_err(WriteError::Io)?;
            sink.flush().map_err(WriteError::Io)?;
            core.state = State::Done;
            Ok(())
        })?;
        Ok(self.sink)
    }
}

/// A one-pass writer for sinks that cannot seek (a pipe, a UART, a socket): every entry's shape is declared
/// first, so the whole prefix — checksum included — goes out before the first payload byte (spec §11.2).
/// The bytes are identical to [`SeekWriter`]'s.
#[derive(Debug)]
pub struct StreamWriter<S, D, B, W> {
    sink: S,
    core: Core<D, B, W>,
}

impl<S, D, B, W> StreamWriter<S, D, B, W>
where
    S: Write,
    D: Buf<Descriptor>,
    B: Buf<u8>,
    W: Buf<u32>,
{
    /// A writer over `sink`, keeping its bookkeeping in `tables`.
    pub fn new(sink: S, tables: Tables<D, B, W>) -> Self {
        Self { sink, core: Core::new(tables) }
    }

    fn start(&mut self) -> Result<(), WriteError<S::Error>> {
        if self.core.state != State::Declaring {
            return Ok(());
        }
        let sink = &mut self.sink;
        self.core.guard(|core| {
            core.begin()?;
            core.place_all()?;
            let payload_end = core
                .tables
                .descriptors
                .items()
                .last()
                .map_or(Some(core.payload_start), |d| d.offset.get().checked_add(d.length.get()))
                .ok_or_else(too_big)?;
            let header = core.sealed_header(payload_end)?;
            core.emit_prefix(&header, &mut |b: &[u8]| sink.write_all(b)).map_err(WriteError::Io)
        })
    }

    shared_writer_api!();

    /// Writes the trailer and returns the sink.
    ///
    /// # Errors
    /// [`WriteError::EntriesMissing`] before every entry is written; I/O errors.
    pub fn finish(mut self) -> Result<S, WriteError<S::Error>> {
        self.start()?;
        let sink = &mut self.sink;
        self.core.guard(|core| {
            core.check_complete()?;
            core.emit_trailer(&mut |b: &[u8]| sink.write_all(b)).map_err(WriteError::Io)?;
            sink.flush().map_err(WriteError::Io)?;
            core.state = State::Done;
            Ok(())
        })?;
        Ok(self.sink)
    }
}
