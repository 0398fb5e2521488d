//! [`Model`]: what `inspect` shows of a file, read from any input — a tpack container, a GGUF file, a file
//! another importer reads (safetensors) — in tpack's terms. Entries are listed whole; metadata values stay
//! views of the file ([`Value`]), walked only as far as a renderer shows them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use tpack::format::MetaType;
use tpack::{Container, Dtype, Entry, MetaValue};
use tpack_gguf::{Gguf, GgufValue};

use super::glob::name_matches;
use super::Options;
use crate::error::Result;
use crate::formats::tpack::OutEntry;
use crate::formats::{gguf, Format, Model as Imported};
use crate::meta_view::{Level, MetaView};

/// A file read for inspection.
pub(super) struct Model<'a> {
    /// The file's format.
    pub(super) format: Format,
    /// The length in bytes of the file, or of every file of a shard set.
    pub(super) file_length: u64,
    /// How many files were read: 1, or the index (if any) and the shards of a shard set.
    pub(super) files: usize,
    /// The parsed container, for a tpack file (its header, version and flags are shown).
    pub(super) container: Option<Container<'a>>,
    /// The entries, in the file's order.
    pub(super) entries: Vec<Item<'a>>,
    /// The metadata records, in the order shown (a container's by key; a foreign file's as `convert` would
    /// store them, its own records first).
    pub(super) metadata: Vec<Record<'a>>,
}

/// One entry, in whichever format it came from.
pub(super) struct Item<'a> {
    /// Its name.
    pub(super) name: Cow<'a, str>,
    /// Its dtype in tpack's terms.
    pub(super) dtype: Dtype,
    /// Its shape, outermost first.
    pub(super) shape: Vec<u64>,
    /// The product of the dimensions.
    pub(super) elements: u128,
    /// Payload bytes.
    pub(super) bytes: u64,
    /// Its load address, if it has one.
    pub(super) target: Option<u64>,
    /// The entry of a tpack file: offset, alignment, checksum and nested container are shown for it (a
    /// foreign file's alignment is tpack's on conversion, so none is shown).
    pub(super) entry: Option<Entry<'a>>,
}

impl<'a> Item<'a> {
    /// An entry a foreign file's reader gives, as `convert` would write it, under `name` (its name, borrowed
    /// from the input).
    fn of_out_entry(name: Cow<'a, str>, e: &OutEntry<'_>) -> Self {
        Item {
            elements: e.shape.iter().map(|&d| u128::from(d)).product(),
            name,
            dtype: e.dtype,
            shape: e.shape.clone(),
            bytes: e.length,
            target: e.target,
            entry: None,
        }
    }

    /// The shape as `[d0, d1, …]`.
    pub(super) fn shape_text(&self) -> String {
        let dims: Vec<String> = self.shape.iter().map(u64::to_string).collect();
        format!("[{}]", dims.join(", "))
    }
}

/// One metadata record.
pub(super) struct Record<'a> {
    /// Its key.
    pub(super) key: &'a str,
    /// Its value, a view of the file.
    pub(super) value: Value<'a>,
}

/// A metadata value as read, in tpack's terms, from any input.
#[derive(Clone, Copy)]
pub(super) enum Value<'a> {
    /// A tpack value, borrowed from the container or from a value an importer read (or a scalar made here).
    Tpack(MetaValue<'a>),
    /// A GGUF value, borrowed from the file, as `convert` would store it.
    Gguf(GgufValue<'a>),
    /// The keys of a GGUF file in file order: the `string[]` `convert` records as `gguf.key_order`.
    GgufKeys(&'a [(&'a str, GgufValue<'a>)]),
}

impl<'a> MetaView<'a> for Value<'a> {
    fn value_type(&self) -> MetaType {
        match self {
            Value::Tpack(v) => MetaView::value_type(v),
            Value::Gguf(v) => v.value_type(),
            Value::GgufKeys(_) => MetaType::STRING_ARRAY,
        }
    }

    fn level(self) -> Level<'a, Self> {
        fn wrap<'a, V: 'a>(level: Level<'a, V>, f: fn(V) -> Value<'a>) -> Level<'a, Value<'a>> {
            match level {
                Level::Leaf(leaf) => Level::Leaf(leaf),
                Level::Array { len, items } => Level::Array { len, items: Box::new(items.map(f)) },
            }
        }
        match self {
            Value::Tpack(v) => wrap(v.level(), Value::Tpack),
            Value::Gguf(v) => wrap(v.level(), Value::Gguf),
            Value::GgufKeys(keys) => Level::Array {
                len: keys.len(),
                items: Box::new(keys.iter().map(|(k, _)| Value::Tpack(MetaValue::String(k)))),
            },
        }
    }
}

/// The sums the totals line and table show.
#[derive(Default)]
pub(super) struct Totals {
    /// Payload bytes of every entry.
    pub(super) bytes: u64,
    /// Elements of every entry.
    pub(super) elements: u128,
    /// dtype name → (entries, elements, bytes)
    pub(super) by_dtype: BTreeMap<String, (u64, u128, u64)>,
}

impl<'a> Model<'a> {
    /// A tpack container: every entry and record, as parsed.
    pub(super) fn of_container(c: &Container<'a>) -> Self {
        Self {
            format: Format::Tpack,
            file_length: c.as_bytes().len() as u64,
            files: 1,
            container: Some(*c),
            entries: c.entries().map(|e| Self::item_of_entry(&e)).collect(),
            metadata: c.metadata().iter().map(|(key, v)| Record { key, value: Value::Tpack(v) }).collect(),
        }
    }

    /// One entry of a container.
    pub(super) fn item_of_entry(e: &Entry<'a>) -> Item<'a> {
        Item {
            name: Cow::Borrowed(e.name()),
            dtype: e.dtype(),
            shape: e.shape().dims().to_vec(),
            elements: u128::from(e.shape().elements()),
            bytes: e.byte_len(),
            target: e.target(),
            entry: Some(*e),
        }
    }

    /// A GGUF file, checked as `convert` checks it: its tensors as the entries `convert` writes, its metadata
    /// in file order followed by the records `convert` adds (`gguf.key_order`, `gguf.version` and, for a
    /// big-endian file, `gguf.big_endian`).
    ///
    /// # Errors
    /// [`crate::Kind::Input`]: what `convert` refuses.
    pub(super) fn of_gguf(file: &'a Gguf<'a>, path: &Path, file_length: u64) -> Result<Self> {
        let entries =
            gguf::entries(path, file)?.into_iter().map(|e| Item::of_out_entry(e.name.clone(), &e)).collect();
        let mut metadata: Vec<Record<'a>> =
            file.metadata.iter().map(|(key, v)| Record { key, value: Value::Gguf(*v) }).collect();
        metadata.push(Record { key: gguf::KEY_ORDER, value: Value::GgufKeys(&file.metadata) });
        metadata.push(Record { key: gguf::VERSION, value: Value::Tpack(MetaValue::U32(file.version)) });
        if file.big_endian {
            metadata.push(Record { key: gguf::BIG_ENDIAN, value: Value::Tpack(MetaValue::Bool(true)) });
        }
        Ok(Self { format: Format::Gguf, file_length, files: 1, container: None, entries, metadata })
    }

    /// A model another importer read whole: a safetensors file (whose metadata is strings in its JSON header),
    /// or a shard set merged as `convert` merges it.
    pub(super) fn of_import(format: Format, imported: &'a Imported<'a>, file_length: u64) -> Self {
        let entries =
            imported.entries.iter().map(|e| Item::of_out_entry(Cow::Borrowed(e.name.as_ref()), e)).collect();
        let metadata = imported
            .metadata
            .iter()
            // An owned value's core view reads its encoding lazily, as a container's does.
            .map(|(key, v)| Record { key, value: Value::Tpack(v.as_value()) })
            .collect();
        Self { format, file_length, files: 1, container: None, entries, metadata }
    }

    /// Indices of the entries `--filter` selects.
    pub(super) fn selected(&self, opts: &Options) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&i| {
                opts.filter
                    .as_deref()
                    .is_none_or(|p| self.entries.get(i).is_some_and(|e| name_matches(p, &e.name)))
            })
            .collect()
    }

    /// The sums over every entry.
    pub(super) fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for i in &self.entries {
            t.bytes = t.bytes.saturating_add(i.bytes);
            t.elements = t.elements.saturating_add(i.elements);
            let slot = t.by_dtype.entry(i.dtype.to_string()).or_default();
            slot.0 += 1;
            slot.1 = slot.1.saturating_add(i.elements);
            slot.2 = slot.2.saturating_add(i.bytes);
        }
        t
    }
}
