//! The model as `inspect --json` (schema [`JSON_SCHEMA`], documented in docs/cli.md): for a tpack file the
//! canonical decoding of spec §13 (values as [`crate::metadata_json::render`] writes them), for a foreign
//! file its entries and metadata in tpack's terms, plus the fields every format shares.

use std::path::Path;

use serde_json::{json, Map, Value};
use tpack::Container;

use super::model::{Item, Model, Record};
use super::{Options, JSON_ITEMS, JSON_SCHEMA};
use crate::describe::{block_json, dtype_name};
use crate::metadata_json::render::{self, F32Form, Limit, Style};

/// How `--entry NAME --json` renders the metadata of a nested container: whole, as spec §13's entry object.
pub(super) const ENTRY_STYLE: Style = Style { limit: Limit::Whole, f32: F32Form::Number };

/// How the document renders metadata: cut to [`JSON_ITEMS`] unless `--full`.
fn style(opts: &Options) -> Style {
    let limit = if opts.full { Limit::Whole } else { Limit::Items(JSON_ITEMS) };
    Style { limit, f32: F32Form::Number }
}

/// `value` as indented JSON text.
pub(super) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The whole document for `model`, read from `path`.
pub(super) fn document(model: &Model<'_>, path: &Path, opts: &Options) -> Value {
    let style = style(opts);
    let selected = if opts.no_tensors { Vec::new() } else { model.selected(opts) };
    let (entries, mut cuts) = entries(selected.iter().filter_map(|&i| model.entries.get(i)), style);
    let (metadata, metadata_cuts) = metadata(&model.metadata, style);
    cuts = cuts.saturating_add(metadata_cuts);
    let mut doc = Map::new();
    if let Some(c) = &model.container {
        let (major, minor) = c.version();
        doc.insert("version".into(), json!([major, minor]));
        doc.insert("compat_flags".into(), json!(c.compat_flags()));
        if let Some(signature) = crate::signer::decoding(c) {
            doc.insert("signature".into(), signature);
        }
    }
    doc.insert("entries".into(), Value::Array(entries));
    doc.insert("metadata".into(), Value::Array(metadata));
    doc.insert("schema".into(), json!(JSON_SCHEMA));
    doc.insert("format".into(), json!(model.format.name()));
    doc.insert("file".into(), json!(path.display().to_string()));
    doc.insert("file_length".into(), json!(model.file_length));
    doc.insert("files".into(), json!(model.files));
    if let Some(f) = &opts.filter {
        doc.insert("filter".into(), json!(f));
    }
    let totals = model.totals();
    let by_dtype: Map<String, Value> = totals
        .by_dtype
        .iter()
        .map(|(name, (count, elements, bytes))| {
            (name.clone(), json!({"entries": count, "elements": big(*elements), "bytes": bytes}))
        })
        .collect();
    doc.insert(
        "totals".into(),
        json!({
            "entries": model.entries.len(),
            "entries_listed": selected.len(),
            "elements": big(totals.elements),
            "payload_bytes": totals.bytes,
            "by_dtype": by_dtype,
            "elided_values": cuts,
        }),
    );
    Value::Object(doc)
}

/// The metadata records as `{"key", "type", "value"}`, with how many values were cut.
fn metadata(records: &[Record<'_>], style: Style) -> (Vec<Value>, usize) {
    let mut cuts = 0usize;
    let values = records
        .iter()
        .map(|r| {
            let (value, record_cuts) = render::holder(Some(r.key), r.value, style);
            cuts = cuts.saturating_add(record_cuts);
            value
        })
        .collect();
    (values, cuts)
}

/// One entry: a tpack entry as spec §13 decodes it (with its nested container), a foreign file's as
/// `{"name", "dtype", "shape", "elements", "length"}`; with how many metadata values of a nested container
/// were cut.
/// The JSON of `items`, and how many values were cut for display in all.
fn entries<'i, 'a: 'i>(items: impl Iterator<Item = &'i Item<'a>>, style: Style) -> (Vec<Value>, usize) {
    let mut cuts = 0usize;
    let values = items
        .map(|item| {
            let (value, item_cuts) = entry(item, style);
            cuts = cuts.saturating_add(item_cuts);
            value
        })
        .collect();
    (values, cuts)
}

pub(super) fn entry(item: &Item<'_>, style: Style) -> (Value, usize) {
    let mut m = Map::new();
    m.insert("name".into(), json!(item.name));
    m.insert("shape".into(), json!(item.shape));
    m.insert("length".into(), json!(item.bytes));
    if let Some(block) = block_json(item.dtype) {
        m.insert("block".into(), block);
    }
    let mut cuts = 0;
    match &item.entry {
        Some(e) => {
            m.insert("dtype".into(), e.dtype().name().map_or_else(|| json!(e.dtype().code()), |n| json!(n)));
            m.insert("offset".into(), json!(e.offset()));
            m.insert("alignment".into(), json!(e.alignment()));
            m.insert("target".into(), json!(e.target()));
            m.insert("checksum".into(), json!(e.checksum()));
            if let Some(nested) = e.nested() {
                let (value, nested_cuts) = container(&nested, style);
                m.insert("container".into(), value);
                cuts = nested_cuts;
            }
        }
        None => {
            m.insert("dtype".into(), json!(dtype_name(item.dtype)));
            m.insert("elements".into(), u64::try_from(item.elements).map_or(Value::Null, |n| json!(n)));
        }
    }
    (Value::Object(m), cuts)
}

/// A nested container as spec §13 decodes it, with how many metadata values were cut.
fn container(c: &Container<'_>, style: Style) -> (Value, usize) {
    let model = Model::of_container(c);
    let (major, minor) = c.version();
    let (entries, cuts) = entries(model.entries.iter(), style);
    let (metadata, metadata_cuts) = metadata(&model.metadata, style);
    let mut value = json!({
        "version": [major, minor],
        "compat_flags": c.compat_flags(),
        "entries": entries,
        "metadata": metadata,
    });
    if let (Some(signature), Some(map)) = (crate::signer::decoding(c), value.as_object_mut()) {
        map.insert("signature".into(), signature);
    }
    (value, cuts.saturating_add(metadata_cuts))
}

/// An element count as a JSON number when it fits in u64 (always, for a valid file), else as a string.
fn big(n: u128) -> Value {
    u64::try_from(n).map_or_else(|_| json!(n.to_string()), |v| json!(v))
}
