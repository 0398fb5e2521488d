//! An in-memory writer (feature `alloc`): collects entries and metadata, then encodes the one canonical
//! layout of spec §11.
//!
//! It refuses, with the reader's own [`Error`] and rule, anything the reader would reject, and it parses its
//! own output before returning it, so it never hands out an invalid container.

use alloc::string::String;
use alloc::vec::Vec;

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::IntoBytes;

use crate::checksum::{crc32, header_crc};
use crate::error::Error;
use crate::format::{
    Descriptor, Dtype, Header, MetaRecord, MetaType, SectionRef, DEFAULT_ALIGNMENT, DESCRIPTOR_LEN,
    FLAG_HAS_TARGET, HEADER_LEN_V1, MAGIC, MAX_ALIGNMENT, MAX_KEY_LEN, MAX_NAME_LEN, MAX_RANK,
    META_RECORD_LEN, VERSION_MAJOR, VERSION_MINOR,
};
use crate::read::{expected_length, Container};

/// One entry to write: what it is and its payload bytes.
#[derive(Clone, Copy, Debug)]
pub struct NewEntry<'a> {
    /// Name: UTF-8, 1 to 1024 bytes, unique in the container.
    pub name: &'a str,
    /// Element type; not [`Dtype::Unknown`].
    pub dtype: Dtype,
    /// Shape, outermost first, at most 8 dimensions.
    pub shape: &'a [u64],
    /// Payload alignment: a power of two up to 65536.
    pub alignment: u32,
    /// Load address, if any.
    pub target: Option<u64>,
    /// Payload; its length must be what `dtype` and `shape` give.
    pub data: &'a [u8],
}

impl<'a> NewEntry<'a> {
    /// An entry with the default alignment (64) and no target.
    #[must_use]
    pub fn new(name: &'a str, dtype: Dtype, shape: &'a [u64], data: &'a [u8]) -> Self {
        Self {
            name,
            dtype,
            shape,
            alignment: DEFAULT_ALIGNMENT,
            target: None,
            data,
        }
    }

    /// The same entry with another alignment.
    #[must_use]
    pub fn with_alignment(self, alignment: u32) -> Self {
        Self { alignment, ..self }
    }

    /// The same entry with a load address.
    #[must_use]
    pub fn with_target(self, target: u64) -> Self {
        Self {
            target: Some(target),
            ..self
        }
    }
}

/// A metadata value to write.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value<'a> {
    /// `u64`.
    U64(u64),
    /// `i64`.
    I64(i64),
    /// `f64`.
    F64(f64),
    /// `bool`.
    Bool(bool),
    /// `string`.
    String(&'a str),
    /// `bytes`.
    Bytes(&'a [u8]),
    /// `u64[]`.
    U64Array(&'a [u64]),
    /// `i64[]`.
    I64Array(&'a [i64]),
    /// `f64[]`.
    F64Array(&'a [f64]),
    /// `string[]`.
    StringArray(&'a [&'a str]),
}

impl Value<'_> {
    /// The type code and either the inline bits or the pool bytes.
    fn encode(&self) -> (MetaType, u64, Vec<u8>) {
        fn words(items: impl Iterator<Item = u64>) -> Vec<u8> {
            items.flat_map(u64::to_le_bytes).collect()
        }
        match *self {
            Value::U64(v) => (MetaType::U64, v, Vec::new()),
            Value::I64(v) => (
                MetaType::I64,
                u64::from_le_bytes(v.to_le_bytes()),
                Vec::new(),
            ),
            Value::F64(v) => (MetaType::F64, v.to_bits(), Vec::new()),
            Value::Bool(v) => (MetaType::Bool, u64::from(v), Vec::new()),
            Value::String(s) => (MetaType::String, 0, s.as_bytes().to_vec()),
            Value::Bytes(b) => (MetaType::Bytes, 0, b.to_vec()),
            Value::U64Array(a) => (MetaType::U64Array, 0, words(a.iter().copied())),
            Value::I64Array(a) => (
                MetaType::I64Array,
                0,
                words(a.iter().map(|v| u64::from_le_bytes(v.to_le_bytes()))),
            ),
            Value::F64Array(a) => (MetaType::F64Array, 0, words(a.iter().map(|v| v.to_bits()))),
            Value::StringArray(items) => {
                let mut pool = Vec::new();
                for item in items {
                    let len = u32::try_from(item.len()).unwrap_or(u32::MAX);
                    pool.extend_from_slice(&len.to_le_bytes());
                    pool.extend_from_slice(item.as_bytes());
                }
                (MetaType::StringArray, 0, pool)
            }
        }
    }
}

struct PendingEntry {
    descriptor: Descriptor,
    name: String,
    data: Vec<u8>,
}

struct PendingMeta {
    key: String,
    value_type: MetaType,
    inline: u64,
    pool: Vec<u8>,
}

/// Builds a container in memory.
///
/// ```
/// use tpack::{Builder, Container, Dtype, NewEntry, Value};
/// let weights: Vec<u8> = [1.0f32, 2.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let mut builder = Builder::new();
/// builder.push(NewEntry::new("layer0.weight", Dtype::F32, &[3], &weights))?;
/// builder.meta("layers", Value::U64(1))?;
/// let bytes = builder.finish()?;
/// let container = Container::parse(&bytes)?;
/// assert_eq!(container.get("layer0.weight").unwrap().byte_len(), 12);
/// # Ok::<(), tpack::Error>(())
/// ```
#[derive(Default)]
pub struct Builder {
    entries: Vec<PendingEntry>,
    meta: Vec<PendingMeta>,
    compat_flags: u64,
}

fn err_index(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

impl Builder {
    /// An empty builder.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the compatible-feature flags to write (none are defined in 1.0).
    pub fn compat_flags(&mut self, flags: u64) -> &mut Self {
        self.compat_flags = flags;
        self
    }

    /// Appends an entry; payloads are laid out in the order entries are pushed.
    ///
    /// # Errors
    /// The rule the entry would break: [`Error::NameLength`], [`Error::RankTooLarge`],
    /// [`Error::UnknownDtype`], [`Error::ShapeOverflow`], [`Error::BlockShape`], [`Error::ByteShape`],
    /// [`Error::LengthMismatch`], [`Error::BadAlignment`], [`Error::TargetOverflow`]. Duplicate names are
    /// reported by [`Builder::finish`].
    pub fn push(&mut self, e: NewEntry<'_>) -> Result<&mut Self, Error> {
        let entry = err_index(self.entries.len());
        let name_len = u32::try_from(e.name.len()).unwrap_or(u32::MAX);
        if name_len == 0 || name_len > MAX_NAME_LEN {
            return Err(Error::NameLength {
                entry,
                len: name_len,
            });
        }
        if e.shape.len() > MAX_RANK {
            return Err(Error::RankTooLarge {
                entry,
                rank: u8::try_from(e.shape.len()).unwrap_or(u8::MAX),
            });
        }
        let Some(expected) = expected_length(entry, e.dtype, e.shape)? else {
            return Err(Error::UnknownDtype {
                entry,
                code: e.dtype.code(),
            });
        };
        let stored = to_u64(e.data.len());
        if expected != stored {
            return Err(Error::LengthMismatch {
                entry,
                expected,
                stored,
            });
        }
        if !e.alignment.is_power_of_two() || e.alignment > MAX_ALIGNMENT {
            return Err(Error::BadAlignment {
                entry,
                alignment: e.alignment,
            });
        }
        if let Some(target) = e.target {
            if target.checked_add(stored).is_none() && target.wrapping_add(stored) != 0 {
                return Err(Error::TargetOverflow { entry });
            }
        }
        let mut dims = [U64::new(0); MAX_RANK];
        for (out, &d) in dims.iter_mut().zip(e.shape) {
            *out = U64::new(d);
        }
        let descriptor = Descriptor {
            name_offset: U32::new(0),
            name_len: U32::new(name_len),
            dtype: U16::new(e.dtype.code()),
            rank: u8::try_from(e.shape.len()).unwrap_or(u8::MAX),
            flags: if e.target.is_some() {
                FLAG_HAS_TARGET
            } else {
                0
            },
            alignment: U32::new(e.alignment),
            offset: U64::new(0),
            length: U64::new(stored),
            target: U64::new(e.target.unwrap_or(0)),
            dims,
        };
        self.entries.push(PendingEntry {
            descriptor,
            name: String::from(e.name),
            data: e.data.to_vec(),
        });
        Ok(self)
    }

    /// Sets metadata `key` to `value`.
    ///
    /// # Errors
    /// [`Error::MetaKeyLength`] for an empty or over-long key, [`Error::MetaDuplicateKey`] for a key already
    /// set, [`Error::MetaBounds`] for a value too large for the pool's 32-bit offsets.
    pub fn meta(&mut self, key: &str, value: Value<'_>) -> Result<&mut Self, Error> {
        let record = err_index(self.meta.len());
        if key.is_empty() || key.len() > usize::from(MAX_KEY_LEN) {
            return Err(Error::MetaKeyLength { record });
        }
        if self.meta.iter().any(|m| m.key == key) {
            return Err(Error::MetaDuplicateKey { record });
        }
        let (value_type, inline, pool) = value.encode();
        if u32::try_from(pool.len()).is_err() {
            return Err(Error::MetaBounds { record });
        }
        self.meta.push(PendingMeta {
            key: String::from(key),
            value_type,
            inline,
            pool,
        });
        Ok(self)
    }

    /// Encodes the container.
    ///
    /// # Errors
    /// [`Error::DuplicateName`] if two entries share a name; otherwise any rule the output would break, which
    /// this method finds by parsing its own output (for example a nested container that is invalid).
    pub fn finish(mut self) -> Result<Vec<u8>, Error> {
        let n = self.entries.len();
        let mut index: Vec<u32> = (0..err_index(n)).collect();
        index.sort_by(|&a, &b| name_of(&self.entries, a).cmp(name_of(&self.entries, b)));
        for pair in index.windows(2) {
            if let [a, b] = *pair {
                if name_of(&self.entries, a) == name_of(&self.entries, b) {
                    return Err(Error::DuplicateName { entry: a.max(b) });
                }
            }
        }
        self.meta
            .sort_by(|a, b| a.key.as_bytes().cmp(b.key.as_bytes()));

        let mut names = Vec::new();
        for e in &mut self.entries {
            e.descriptor.name_offset =
                U32::new(u32::try_from(names.len()).map_err(|_| Error::NameBounds { entry: 0 })?);
            names.extend_from_slice(e.name.as_bytes());
        }
        let mut records = Vec::with_capacity(self.meta.len());
        let mut pool = Vec::new();
        for (record, m) in (0u32..).zip(&self.meta) {
            let too_big = Error::MetaBounds { record };
            let key_offset = u32::try_from(pool.len()).map_err(|_| too_big)?;
            pool.extend_from_slice(m.key.as_bytes());
            let inline = m.value_type.is_inline();
            let value_offset = if inline {
                0
            } else {
                u32::try_from(pool.len()).map_err(|_| too_big)?
            };
            pool.extend_from_slice(&m.pool);
            records.push(MetaRecord {
                key_offset: U32::new(key_offset),
                key_len: U16::new(u16::try_from(m.key.len()).map_err(|_| too_big)?),
                value_type: m.value_type.code(),
                reserved: 0,
                value_len: U32::new(u32::try_from(m.pool.len()).map_err(|_| too_big)?),
                value_offset: U32::new(value_offset),
                value: U64::new(m.inline),
            });
        }

        let overflow = Error::SectionBounds {
            section: crate::format::Section::Payloads,
        };
        let table_len = to_u64(n)
            .checked_mul(u64::from(DESCRIPTOR_LEN))
            .ok_or(overflow)?;
        let index_len = to_u64(n).checked_mul(4).ok_or(overflow)?;
        let meta_len = to_u64(records.len())
            .checked_mul(u64::from(META_RECORD_LEN))
            .and_then(|r| r.checked_add(to_u64(pool.len())))
            .ok_or(overflow)?;
        let lengths = [table_len, index_len, to_u64(names.len()), meta_len];
        let mut sections = [SectionRef::default(); 6];
        let mut cursor = u64::from(HEADER_LEN_V1);
        for (slot, len) in sections.iter_mut().zip(lengths) {
            *slot = SectionRef {
                offset: U64::new(cursor),
                length: U64::new(len),
            };
            cursor = cursor.checked_add(len).ok_or(overflow)?;
        }
        let payload_start = cursor;
        for e in &mut self.entries {
            let alignment = u64::from(e.descriptor.alignment.get());
            let mask = alignment.saturating_sub(1);
            cursor = cursor.checked_add(mask).ok_or(overflow)? & !mask;
            e.descriptor.offset = U64::new(cursor);
            cursor = cursor
                .checked_add(e.descriptor.length.get())
                .ok_or(overflow)?;
        }
        let trailer_len = to_u64(n)
            .checked_add(1)
            .and_then(|k| k.checked_mul(4))
            .ok_or(overflow)?;
        let [.., payloads, trailer] = &mut sections;
        *payloads = SectionRef {
            offset: U64::new(payload_start),
            length: U64::new(cursor.saturating_sub(payload_start)),
        };
        *trailer = SectionRef {
            offset: U64::new(cursor),
            length: U64::new(trailer_len),
        };
        let total = cursor.checked_add(trailer_len).ok_or(overflow)?;

        let header = Header {
            magic: MAGIC,
            version_major: U16::new(VERSION_MAJOR),
            version_minor: U16::new(VERSION_MINOR),
            header_len: U32::new(HEADER_LEN_V1),
            incompat_flags: U64::new(0),
            compat_flags: U64::new(self.compat_flags),
            total_len: U64::new(total),
            entry_count: U32::new(err_index(n)),
            descriptor_len: U32::new(DESCRIPTOR_LEN),
            meta_count: U32::new(err_index(records.len())),
            header_crc: U32::new(0),
            sections,
            reserved: [0; 8],
        };
        let mut out = Vec::with_capacity(usize::try_from(total).map_err(|_| overflow)?);
        out.extend_from_slice(header.as_bytes());
        for e in &self.entries {
            out.extend_from_slice(e.descriptor.as_bytes());
        }
        for i in &index {
            out.extend_from_slice(&i.to_le_bytes());
        }
        out.extend_from_slice(&names);
        out.extend_from_slice(records.as_bytes());
        out.extend_from_slice(&pool);
        let crc = header_crc(&out);
        if let Some(field) =
            out.get_mut(crate::format::HEADER_CRC_OFFSET..crate::format::HEADER_CRC_OFFSET + 4)
        {
            field.copy_from_slice(&crc.to_le_bytes());
        }
        let mut checksums = Vec::with_capacity(n.saturating_mul(4));
        for e in &self.entries {
            out.resize(
                usize::try_from(e.descriptor.offset.get()).map_err(|_| overflow)?,
                0,
            );
            out.extend_from_slice(&e.data);
            checksums.extend_from_slice(&crc32(&e.data).to_le_bytes());
        }
        out.extend_from_slice(&checksums);
        out.extend_from_slice(&crc32(&checksums).to_le_bytes());
        Container::parse(&out)?;
        Ok(out)
    }
}

fn name_of(entries: &[PendingEntry], i: u32) -> &[u8] {
    usize::try_from(i)
        .ok()
        .and_then(|i| entries.get(i))
        .map_or(&[], |e| e.name.as_bytes())
}
