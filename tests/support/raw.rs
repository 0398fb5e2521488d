//! A lenient test-only encoder: it lays out any model — valid or not — in the canonical layout of spec §11,
//! so that one field can be made wrong while everything around it stays consistent. Plus byte-patching
//! helpers that recompute checksums after a patch.

#![allow(dead_code)]

use tpack::checksum::{crc32, header_crc};
use tpack::format::{
    Descriptor, Header, MetaRecord, SectionRef, DESCRIPTOR_LEN, HEADER_CRC_OFFSET, HEADER_LEN_V1, MAGIC,
    MAX_ALIGNMENT, META_RECORD_LEN,
};
use tpack::zerocopy::little_endian::{U16, U32, U64};
use tpack::zerocopy::{FromBytes, IntoBytes};
use tpack::{Dtype, MetaType};

#[derive(Clone, Debug)]
pub struct RawEntry {
    pub name: Vec<u8>,
    pub dtype: u16,
    pub rank: u8,
    pub flags: u8,
    pub alignment: u32,
    pub target: u64,
    pub dims: [u64; 8],
    pub data: Vec<u8>,
}

impl RawEntry {
    pub fn new(name: &str, dtype: Dtype, shape: &[u64], data: Vec<u8>) -> Self {
        let mut dims = [0; 8];
        dims[..shape.len()].copy_from_slice(shape);
        Self {
            name: name.as_bytes().to_vec(),
            dtype: dtype.code(),
            rank: shape.len() as u8,
            flags: 0,
            alignment: 64,
            target: 0,
            dims,
            data,
        }
    }

    pub fn align(mut self, alignment: u32) -> Self {
        self.alignment = alignment;
        self
    }

    pub fn target(mut self, target: u64) -> Self {
        self.flags |= 1;
        self.target = target;
        self
    }
}

#[derive(Clone, Debug)]
pub struct RawMeta {
    pub key: Vec<u8>,
    pub value_type: u8,
    pub reserved: u8,
    pub value: u64,
    pub bytes: Vec<u8>,
    /// Overrides the stored `value_len` (the pool still receives `bytes`).
    pub value_len: Option<u32>,
    /// Overrides the stored `value_offset`.
    pub value_offset: Option<u32>,
}

impl RawMeta {
    pub fn inline(key: &str, value_type: MetaType, value: u64) -> Self {
        Self {
            key: key.as_bytes().to_vec(),
            value_type: value_type.code(),
            reserved: 0,
            value,
            bytes: Vec::new(),
            value_len: None,
            value_offset: None,
        }
    }

    pub fn pooled(key: &str, value_type: MetaType, bytes: Vec<u8>) -> Self {
        Self {
            key: key.as_bytes().to_vec(),
            value_type: value_type.code(),
            reserved: 0,
            value: 0,
            bytes,
            value_len: None,
            value_offset: None,
        }
    }

    fn inline_type(&self) -> bool {
        (1..=4).contains(&self.value_type)
    }
}

pub fn string_array(items: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for item in items {
        out.extend_from_slice(&(item.len() as u32).to_le_bytes());
        out.extend_from_slice(item);
    }
    out
}

pub fn words<T: Copy>(items: &[T], f: impl Fn(T) -> u64) -> Vec<u8> {
    items.iter().flat_map(|&v| f(v).to_le_bytes()).collect()
}

#[derive(Clone, Debug)]
pub struct Raw {
    pub major: u16,
    pub minor: u16,
    pub header_len: u32,
    pub incompat: u64,
    pub compat: u64,
    pub entries: Vec<RawEntry>,
    pub meta: Vec<RawMeta>,
    /// Sort metadata records by key (the canonical order) before encoding.
    pub sort_meta: bool,
    /// Bytes appended to the metadata pool after the last item.
    pub extra_pool: Vec<u8>,
    /// The header extension, bytes 160.. of the header (spec §3.4); `header_len` grows to hold it unless set
    /// explicitly larger.
    pub extension: Vec<u8>,
}

impl Default for Raw {
    fn default() -> Self {
        Self {
            major: 1,
            minor: 0,
            header_len: HEADER_LEN_V1,
            incompat: 0,
            compat: 0,
            entries: Vec::new(),
            meta: Vec::new(),
            sort_meta: true,
            extra_pool: Vec::new(),
            extension: Vec::new(),
        }
    }
}

fn layout_alignment(alignment: u32) -> u64 {
    if alignment.is_power_of_two() && alignment <= MAX_ALIGNMENT {
        u64::from(alignment)
    } else {
        1
    }
}

impl Raw {
    /// This model with the version and header extension a writer gives it (spec §11.1): the lowest minor
    /// that expresses its dtypes and metadata types and, in a minor-1 file, a geometry record for each block
    /// dtype used.
    pub fn canonical(mut self) -> Self {
        let dtypes = self.entries.iter().map(|e| tpack::Dtype::from_code(e.dtype).since_minor());
        let types = self.meta.iter().map(|m| tpack::MetaType::from_code(m.value_type).since_minor());
        self.minor = dtypes.chain(types).map(|m| m.unwrap_or(0)).max().unwrap_or(0);
        self.extension = Vec::new();
        if self.minor >= 1 {
            let records = block_records(&self.entries);
            if !records.is_empty() {
                self.extension = geometry(&records);
            }
        }
        self
    }

    pub fn encode(&self) -> Vec<u8> {
        let header_len = self.header_len.max(HEADER_LEN_V1 + self.extension.len() as u32);
        let n = self.entries.len() as u64;
        let mut index: Vec<u32> = (0..n as u32).collect();
        index.sort_by(|&a, &b| self.entries[a as usize].name.cmp(&self.entries[b as usize].name));
        let mut meta = self.meta.clone();
        if self.sort_meta {
            meta.sort_by(|a, b| a.key.cmp(&b.key));
        }

        let mut names = Vec::new();
        let mut name_offsets = Vec::new();
        for e in &self.entries {
            name_offsets.push(names.len() as u32);
            names.extend_from_slice(&e.name);
        }
        let mut records = Vec::new();
        let mut pool = Vec::new();
        for m in &meta {
            let key_offset = pool.len() as u32;
            pool.extend_from_slice(&m.key);
            let value_offset = if m.inline_type() { 0 } else { pool.len() as u32 };
            pool.extend_from_slice(&m.bytes);
            records.push(MetaRecord {
                key_offset: U32::new(key_offset),
                key_len: U16::new(m.key.len() as u16),
                value_type: m.value_type,
                reserved: m.reserved,
                value_len: U32::new(m.value_len.unwrap_or(m.bytes.len() as u32)),
                value_offset: U32::new(m.value_offset.unwrap_or(value_offset)),
                value: U64::new(m.value),
            });
        }
        pool.extend_from_slice(&self.extra_pool);

        let lengths = [
            n * u64::from(DESCRIPTOR_LEN),
            n * 4,
            names.len() as u64,
            meta.len() as u64 * u64::from(META_RECORD_LEN) + pool.len() as u64,
        ];
        let mut sections = [SectionRef::default(); 6];
        let mut cursor = u64::from(header_len);
        for (slot, len) in sections.iter_mut().zip(lengths) {
            *slot = SectionRef { offset: U64::new(cursor), length: U64::new(len) };
            cursor += len;
        }
        let payload_start = cursor;
        let mut offsets = Vec::new();
        for e in &self.entries {
            let a = layout_alignment(e.alignment);
            cursor = cursor.div_ceil(a) * a;
            offsets.push(cursor);
            cursor += e.data.len() as u64;
        }
        sections[4] =
            SectionRef { offset: U64::new(payload_start), length: U64::new(cursor - payload_start) };
        sections[5] = SectionRef { offset: U64::new(cursor), length: U64::new(4 * n + 4) };
        let total = cursor + 4 * n + 4;

        let header = Header {
            magic: MAGIC,
            version_major: U16::new(self.major),
            version_minor: U16::new(self.minor),
            header_len: U32::new(header_len),
            incompat_flags: U64::new(self.incompat),
            compat_flags: U64::new(self.compat),
            total_len: U64::new(total),
            entry_count: U32::new(n as u32),
            descriptor_len: U32::new(DESCRIPTOR_LEN),
            meta_count: U32::new(meta.len() as u32),
            header_crc: U32::new(0),
            sections,
            reserved: [0; 8],
        };
        let mut out = header.as_bytes().to_vec();
        out.extend_from_slice(&self.extension);
        out.resize(header_len as usize, 0);
        for (i, e) in self.entries.iter().enumerate() {
            let d = Descriptor {
                name_offset: U32::new(name_offsets[i]),
                name_len: U32::new(e.name.len() as u32),
                dtype: U16::new(e.dtype),
                rank: e.rank,
                flags: e.flags,
                alignment: U32::new(e.alignment),
                offset: U64::new(offsets[i]),
                length: U64::new(e.data.len() as u64),
                target: U64::new(e.target),
                dims: e.dims.map(U64::new),
            };
            out.extend_from_slice(d.as_bytes());
        }
        for i in &index {
            out.extend_from_slice(&i.to_le_bytes());
        }
        out.extend_from_slice(&names);
        out.extend_from_slice(records.as_bytes());
        out.extend_from_slice(&pool);
        for (e, &offset) in self.entries.iter().zip(&offsets) {
            out.resize(offset as usize, 0);
            out.extend_from_slice(&e.data);
        }
        out.resize(total as usize, 0);
        fix(&mut out);
        out
    }
}

/// The geometry records `(dtype, block_elements, block_bytes)` of the block dtypes `entries` use, in dtype
/// order, as a 1.1 writer records them (spec §11.1).
pub fn block_records(entries: &[RawEntry]) -> Vec<(u16, u32, u32)> {
    let mut records: Vec<(u16, u32, u32)> = entries
        .iter()
        .filter_map(|e| match tpack::Dtype::from_code(e.dtype).packing() {
            Some(tpack::Packing::Block { block_elems, block_bytes }) => {
                Some((e.dtype, block_elems as u32, block_bytes as u32))
            }
            _ => None,
        })
        .collect();
    records.sort();
    records.dedup();
    records
}

/// One header-extension item: tag, body length, body, zero padding to a multiple of 8 (spec §3.4).
pub fn extension_item(tag: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&tag.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out.resize(out.len().next_multiple_of(8), 0);
    out
}

/// A block geometry body: one 16-byte record per `(dtype, block_elements, block_bytes)`, in the order given.
pub fn geometry_records(records: &[(u16, u32, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(dtype, elements, bytes) in records {
        out.extend_from_slice(&dtype.to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&elements.to_le_bytes());
        out.extend_from_slice(&bytes.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
    }
    out
}

/// The block geometry item (tag 1) for `records`.
pub fn geometry(records: &[(u16, u32, u32)]) -> Vec<u8> {
    extension_item(1, &geometry_records(records))
}

pub fn header_mut(bytes: &mut [u8]) -> &mut Header {
    Header::mut_from_prefix(bytes).unwrap().0
}

pub fn header(bytes: &[u8]) -> &Header {
    Header::ref_from_prefix(bytes).unwrap().0
}

pub fn descriptor_mut(bytes: &mut [u8], entry: usize) -> &mut Descriptor {
    let at = header(bytes).sections[0].offset.get() as usize + entry * DESCRIPTOR_LEN as usize;
    Descriptor::mut_from_prefix(&mut bytes[at..]).unwrap().0
}

pub fn descriptor(bytes: &[u8], entry: usize) -> Descriptor {
    let at = header(bytes).sections[0].offset.get() as usize + entry * DESCRIPTOR_LEN as usize;
    Descriptor::read_from_prefix(&bytes[at..]).unwrap().0
}

pub fn section(bytes: &[u8], i: usize) -> (usize, usize) {
    let s = header(bytes).sections[i];
    (s.offset.get() as usize, s.length.get() as usize)
}

/// Recomputes the payload checksums, the trailer checksum and the header checksum from the bytes as they now
/// are, so that a patch breaks only the rule it aims at. Out-of-range fields are left alone.
pub fn fix(bytes: &mut [u8]) {
    let n = header(bytes).entry_count.get() as usize;
    let (trailer, trailer_len) = section(bytes, 5);
    if trailer_len == 4 * n + 4 && trailer + trailer_len <= bytes.len() {
        for i in 0..n {
            let d = descriptor(bytes, i);
            let (start, len) = (d.offset.get(), d.length.get());
            if let Some(payload) = start
                .checked_add(len)
                .filter(|&end| end <= bytes.len() as u64)
                .map(|end| &bytes[start as usize..end as usize])
            {
                let crc = crc32(payload);
                bytes[trailer + 4 * i..trailer + 4 * i + 4].copy_from_slice(&crc.to_le_bytes());
            }
        }
        let crc = crc32(&bytes[trailer..trailer + 4 * n]);
        bytes[trailer + 4 * n..trailer + 4 * n + 4].copy_from_slice(&crc.to_le_bytes());
    }
    fix_header(bytes);
}

/// Recomputes only the header checksum.
pub fn fix_header(bytes: &mut [u8]) {
    let meta = header(bytes).sections[3];
    if let Some(end) = meta.offset.get().checked_add(meta.length.get()).filter(|&e| e <= bytes.len() as u64) {
        let crc = header_crc(&bytes[..end as usize]);
        bytes[HEADER_CRC_OFFSET..HEADER_CRC_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());
    }
}
