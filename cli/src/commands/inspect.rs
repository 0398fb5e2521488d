//! `tpack inspect`: what a tpack, safetensors or GGUF file holds, as a tree of name components or as JSON.
//!
//! Text output is for a terminal: every name, key and string is escaped ([`crate::text`]), no line is wider
//! than [`WIDTH`] columns, and a 100,000-entry file costs O(n log n). JSON is for scripts: complete, except
//! that long metadata arrays are cut (and marked) unless `--full` is given.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};
use tpack::{Container, Entry, MetaValue};

use crate::describe::{
    block_json, container_json, dtype_name, dtype_with_geometry, entry_json, meta_type_json, meta_type_text,
    meta_value_json, meta_value_text,
};
use crate::error::{CliError, Result};
use crate::formats::{importer, tpack::open, Format, Model};
use crate::fsutil::{size_short, size_words};
use crate::text::{self, escape, quoted};
use crate::tree::{Draw, Tree};

/// Schema tag of `inspect --json` output; bumped only for incompatible changes (see docs/cli.md).
pub const JSON_SCHEMA: &str = "tpack-inspect/2";

/// No line of text output is wider than this many columns.
pub const WIDTH: usize = 100;

/// Items of a metadata array (or bytes of a `bytes` value) `--json` shows without `--full`.
pub const JSON_ITEMS: usize = 32;

/// Widest shape column; a longer shape is cut.
const SHAPE_WIDTH: usize = 24;

/// The tree column is never made narrower than this to fit the line.
const TREE_MIN: usize = 24;

/// What `tpack inspect` shows, from its flags.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only the entry with this exact name (`--entry`).
    pub entry: Option<String>,
    /// JSON instead of text (`--json`).
    pub json: bool,
    /// JSON with every metadata array whole (`--full`).
    pub full: bool,
    /// Draw every repeated layer instead of one group (`--expand`).
    pub expand: bool,
    /// Only entries whose name matches: a glob when it has `*` or `?`, else a substring (`--filter`).
    pub filter: Option<String>,
    /// No entry list, only the header, totals and metadata (`--no-tensors`).
    pub no_tensors: bool,
    /// Tree rows below this depth are summarised (`--depth`).
    pub depth: Option<usize>,
    /// One row per entry with its whole name, no tree (`--flat`).
    pub flat: bool,
}

/// Runs `tpack inspect` with only `--entry` and `--json`; see [`run_with`].
///
/// # Errors
/// As [`run_with`].
pub fn run(path: &Path, entry: Option<&str>, as_json: bool) -> Result<String> {
    run_with(path, &Options { entry: entry.map(str::to_owned), json: as_json, ..Options::default() })
}

/// Runs `tpack inspect` on a tpack, safetensors or GGUF file (told from its first bytes, as `convert` does).
///
/// # Errors
/// The file cannot be read ([`crate::error::Kind::Io`]), is not a valid container
/// ([`crate::error::Kind::Invalid`]) or a valid foreign file ([`crate::error::Kind::Input`]); `--entry` names
/// no entry ([`crate::error::Kind::Input`]).
pub fn run_with(path: &Path, opts: &Options) -> Result<String> {
    let map = crate::fsutil::map(path)?;
    let foreign = Format::sniff(&map).and_then(importer);
    let inspected = match foreign {
        Some(import) => {
            let model = import.read(path, &map)?;
            Inspected::of_model(import.format(), &model, map.len() as u64)
        }
        None => {
            let container = open(path, &map)?;
            Inspected::of_container(&container)
        }
    };
    let mut out = match &opts.entry {
        Some(name) => {
            let index = inspected.items.iter().position(|i| i.name == *name).ok_or_else(|| {
                let hint =
                    crate::suggest::did_you_mean("; ", name, inspected.items.iter().map(|i| i.name.as_str()));
                CliError::input(format!("{} has no entry named {}{hint}", path.display(), quoted(name)))
            })?;
            if opts.json {
                let value = match &inspected.container {
                    Some(c) => c.entry(index).map(|e| entry_json(&e)).unwrap_or_default(),
                    None => inspected.items[index].json(),
                };
                serde_json::to_string_pretty(&value).unwrap_or_default()
            } else {
                match inspected.container.as_ref().and_then(|c| c.entry(index)) {
                    Some(e) => entry_details(&e),
                    None => inspected.items[index].details(),
                }
            }
        }
        None if opts.json => serde_json::to_string_pretty(&inspected.json(path, opts)).unwrap_or_default(),
        None => inspected.text(path, opts),
    };
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// One entry, in whichever format it came from.
struct Item {
    name: String,
    dtype: String,
    /// The dtype with its block geometry, for the entry detail.
    dtype_detail: String,
    /// The block geometry of a block dtype, for JSON.
    block: Option<Value>,
    shape: Vec<u64>,
    elements: u128,
    bytes: u64,
    /// The payload alignment of a tpack entry (a foreign file's is not shown: it is tpack's on conversion).
    alignment: Option<u32>,
    target: Option<u64>,
    /// Entries of its nested container, if it is one.
    nested: Option<usize>,
}

impl Item {
    fn shape_text(&self) -> String {
        let dims: Vec<String> = self.shape.iter().map(u64::to_string).collect();
        format!("[{}]", dims.join(", "))
    }

    /// The `--entry NAME --json` object of an entry of a foreign file.
    fn json(&self) -> Value {
        let mut value = json!({
            "name": self.name,
            "dtype": self.dtype,
            "shape": self.shape,
            "elements": self.elements.to_string().parse::<u64>().map_or(Value::Null, |n| json!(n)),
            "length": self.bytes,
        });
        if let (Some(block), Value::Object(m)) = (&self.block, &mut value) {
            m.insert("block".into(), block.clone());
        }
        value
    }

    fn details(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "entry {}", quoted(&self.name));
        let _ = writeln!(out, "  dtype      {}", escape(&self.dtype_detail));
        let _ = writeln!(out, "  shape      {} ({} elements)", self.shape_text(), self.elements);
        let _ = writeln!(out, "  size       {}", size_words(self.bytes));
        fit_all(&out)
    }
}

/// A metadata record as text and as JSON.
struct Meta {
    key: String,
    type_text: String,
    value_text: String,
    type_json: Value,
    value_json: Value,
}

impl Meta {
    fn of(key: &str, value: &MetaValue<'_>) -> Self {
        Self {
            key: key.to_owned(),
            type_text: meta_type_text(value),
            value_text: meta_value_text(value),
            type_json: meta_type_json(value),
            value_json: meta_value_json(value),
        }
    }
}

/// A file read for inspection.
struct Inspected<'a> {
    format: Format,
    file_length: u64,
    /// The parsed container, for a tpack file.
    container: Option<Container<'a>>,
    items: Vec<Item>,
    meta: Vec<Meta>,
}

impl<'a> Inspected<'a> {
    fn of_container(c: &Container<'a>) -> Self {
        let items = c.entries().map(|e| item_of_entry(&e)).collect();
        let meta = c.metadata().iter().map(|(k, v)| Meta::of(k, &v)).collect();
        Self {
            format: Format::Tpack,
            file_length: c.as_bytes().len() as u64,
            container: Some(*c),
            items,
            meta,
        }
    }

    fn of_model(format: Format, model: &Model<'_>, file_length: u64) -> Self {
        let items = model
            .entries
            .iter()
            .map(|e| Item {
                name: e.name.to_string(),
                dtype: dtype_name(e.dtype),
                dtype_detail: dtype_with_geometry(e.dtype),
                block: block_json(e.dtype),
                elements: e.shape.iter().map(|&d| u128::from(d)).product(),
                shape: e.shape.clone(),
                bytes: e.length,
                alignment: None,
                target: e.target,
                nested: None,
            })
            .collect();
        let meta = model.metadata.iter().map(|(k, v)| Meta::of(k, &v.as_value())).collect();
        Self { format, file_length, container: None, items, meta }
    }

    /// Indices of the entries `--filter` selects.
    fn selected(&self, opts: &Options) -> Vec<usize> {
        (0..self.items.len())
            .filter(|&i| opts.filter.as_deref().is_none_or(|p| name_matches(p, &self.items[i].name)))
            .collect()
    }

    fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for i in &self.items {
            t.bytes = t.bytes.saturating_add(i.bytes);
            t.elements = t.elements.saturating_add(i.elements);
            let slot = t.by_dtype.entry(i.dtype.clone()).or_default();
            slot.0 += 1;
            slot.1 = slot.1.saturating_add(i.elements);
            slot.2 = slot.2.saturating_add(i.bytes);
        }
        t
    }

    /// The `--json` document (schema [`JSON_SCHEMA`], documented in docs/cli.md).
    fn json(&self, path: &Path, opts: &Options) -> Value {
        let selected = self.selected(opts);
        let mut doc = match &self.container {
            Some(c) => container_json(c),
            None => {
                let entries: Vec<Value> = self.items.iter().map(Item::json).collect();
                let metadata: Vec<Value> = self
                    .meta
                    .iter()
                    .map(|m| json!({"key": m.key, "type": m.type_json, "value": m.value_json}))
                    .collect();
                json!({"entries": entries, "metadata": metadata})
            }
        };
        let totals = self.totals();
        let by_dtype: serde_json::Map<String, Value> = totals
            .by_dtype
            .iter()
            .map(|(name, (count, elements, bytes))| {
                (name.clone(), json!({"entries": count, "elements": big(*elements), "bytes": bytes}))
            })
            .collect();
        let mut elided = 0;
        if let Value::Object(m) = &mut doc {
            if opts.filter.is_some() || opts.no_tensors {
                if let Some(Value::Array(entries)) = m.get_mut("entries") {
                    let keep: Vec<Value> = if opts.no_tensors {
                        Vec::new()
                    } else {
                        selected.iter().filter_map(|&i| entries.get(i).cloned()).collect()
                    };
                    *entries = keep;
                }
            }
            if !opts.full {
                elided = elide(m);
            }
            m.insert("schema".into(), json!(JSON_SCHEMA));
            m.insert("format".into(), json!(self.format.name()));
            m.insert("file".into(), json!(path.display().to_string()));
            m.insert("file_length".into(), json!(self.file_length));
            if let Some(f) = &opts.filter {
                m.insert("filter".into(), json!(f));
            }
            m.insert(
                "totals".into(),
                json!({
                    "entries": self.items.len(),
                    "entries_listed": if opts.no_tensors { 0 } else { selected.len() },
                    "elements": big(totals.elements),
                    "payload_bytes": totals.bytes,
                    "by_dtype": by_dtype,
                    "elided_values": elided,
                }),
            );
        }
        doc
    }

    /// The text report: header, entries, totals, metadata; no line wider than [`WIDTH`].
    fn text(&self, path: &Path, opts: &Options) -> String {
        let mut lines: Vec<String> = Vec::new();
        let file = escape(&path.display().to_string()).into_owned();
        match &self.container {
            Some(c) => {
                let (major, minor) = c.version();
                prose(
                    &mut lines,
                    &format!("{file}: tpack {major}.{minor}, {}", size_words(self.file_length)),
                );
                let h = c.header();
                let [_, index, names, meta, payloads, trailer] = &h.sections;
                prose(
                    &mut lines,
                    &format!(
                        "layout: header {} B (checksum {:#010x}), table {} × {} B, index {} B, names {} B, \
                         metadata {} records in {} B, payloads {}, trailer {} B",
                        h.header_len.get(),
                        h.header_crc.get(),
                        h.entry_count.get(),
                        h.descriptor_len.get(),
                        index.length.get(),
                        names.length.get(),
                        h.meta_count.get(),
                        meta.length.get(),
                        size_short(payloads.length.get()),
                        trailer.length.get()
                    ),
                );
                if c.compat_flags() != 0 {
                    prose(&mut lines, &format!("compatible-feature flags: {:#x}", c.compat_flags()));
                }
                prose(&mut lines, "structure valid; payload checksums not checked (run `tpack verify`)");
            }
            None => {
                let format = self.format.name();
                prose(&mut lines, &format!("{file}: {format}, {}", size_words(self.file_length)));
                prose(
                    &mut lines,
                    &format!(
                        "read and checked completely as `tpack convert` reads {format} files; dtypes and shapes \
                         are shown in tpack's terms (shapes outermost first)"
                    ),
                );
            }
        }
        let totals = self.totals();
        if !opts.no_tensors {
            lines.push(String::new());
            let selected = self.selected(opts);
            let heading = match &opts.filter {
                Some(f) => {
                    format!("entries ({} of {} match {}):", selected.len(), self.items.len(), quoted(f))
                }
                None => format!("entries ({}):", self.items.len()),
            };
            prose(&mut lines, &heading);
            let notes = self.entry_rows(&selected, opts, &mut lines);
            for note in notes {
                prose(&mut lines, &note);
            }
        }
        lines.push(String::new());
        prose(
            &mut lines,
            &format!(
                "totals: {} entries, {} elements{}, {} of payload",
                self.items.len(),
                totals.elements,
                if totals.elements >= 1000 {
                    format!(" ({})", count_short(totals.elements))
                } else {
                    String::new()
                },
                size_words(totals.bytes)
            ),
        );
        let dtype_width = totals.by_dtype.keys().map(|d| text::width(&escape(d))).max().unwrap_or(0).min(12);
        let count_width = totals.by_dtype.values().map(|v| v.0.to_string().len()).max().unwrap_or(0);
        let elements_width = totals.by_dtype.values().map(|v| v.1.to_string().len()).max().unwrap_or(0);
        for (dtype, (count, elements, bytes)) in &totals.by_dtype {
            let noun = if *count == 1 { "entry" } else { "entries" };
            lines.push(format!(
                "  {}  {count:>count_width$} {noun:<7}  {elements:>elements_width$} elements  {:>10}",
                text::pad(&text::truncate(&escape(dtype), 12), dtype_width, true),
                size_short(*bytes)
            ));
        }
        if !self.meta.is_empty() {
            lines.push(String::new());
            lines.push(format!("metadata ({}):", self.meta.len()));
            let mut cut = 0;
            for m in &self.meta {
                let line = format!("  {} ({}) = {}", escape(&m.key), escape(&m.type_text), m.value_text);
                if text::width(&line) > WIDTH {
                    cut += 1;
                }
                lines.push(line);
            }
            if cut > 0 {
                prose(
                    &mut lines,
                    &format!(
                        "note: {cut} metadata lines are cut to {WIDTH} columns (…); `--json` shows the values \
                         (arrays up to {JSON_ITEMS} items, all with `--full`)"
                    ),
                );
            }
        }
        let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in &lines {
            out.push_str(&text::truncate(line, WIDTH));
            out.push('\n');
        }
        out
    }

    /// Appends the entry rows (a tree, or a flat list with `--flat`) to `lines`; returns notes for after them.
    fn entry_rows(&self, selected: &[usize], opts: &Options, lines: &mut Vec<String>) -> Vec<String> {
        let mut notes = Vec::new();
        // (tree cell: drawing and escaped label, entry, note for rows that are not entries)
        let mut cells: Vec<(String, String, Option<usize>, Option<Note>)> = Vec::new();
        let mut groups = 0usize;
        let mut example = String::new();
        if opts.flat {
            let mut order = selected.to_vec();
            order.sort_by(|&a, &b| crate::natural::cmp(&self.items[a].name, &self.items[b].name));
            for i in order {
                cells.push(("  ".to_owned(), escape(&self.items[i].name).into_owned(), Some(i), None));
            }
        } else {
            let mut kinds: HashMap<(&str, &[u64]), u32> = HashMap::new();
            let kind_of: Vec<u32> = self
                .items
                .iter()
                .map(|i| {
                    let next = kinds.len() as u32;
                    *kinds.entry((i.dtype.as_str(), i.shape.as_slice())).or_insert(next)
                })
                .collect();
            let tree = Tree::new(selected.iter().map(|&i| (i, self.items[i].name.as_str())), |e| kind_of[e]);
            for row in tree.rows(Draw { collapse: !opts.expand, depth: opts.depth }, "  ") {
                let note = match (row.repeats, row.hidden) {
                    (_, Some(hidden)) => {
                        let (mut elements, mut bytes) = (0u128, 0u64);
                        for &e in &row.hidden_entries {
                            elements = elements.saturating_add(self.items[e].elements);
                            bytes = bytes.saturating_add(self.items[e].bytes);
                        }
                        let noun = if hidden == 1 { "entry" } else { "entries" };
                        Some(Note::Hidden(
                            format!("({hidden} {noun})"),
                            elements.to_string(),
                            size_short(bytes),
                        ))
                    }
                    (Some(n), None) if row.entry.is_none() => Some(Note::Repeats(format!("×{n} alike"))),
                    _ => None,
                };
                if row.repeats.is_some() {
                    groups += 1;
                    if example.is_empty() {
                        example = escape(&row.label).into_owned();
                    }
                }
                cells.push((row.prefix, escape(&row.label).into_owned(), row.entry, note));
            }
        }
        let details: Vec<Option<Details>> =
            cells.iter().map(|c| c.2.map(|i| Details::of(&self.items[i]))).collect();
        let w = |f: fn(&Details) -> usize| details.iter().flatten().map(f).max().unwrap_or(0);
        let widths = [
            w(|d| text::width(&d.dtype)),
            w(|d| text::width(&d.shape)),
            w(|d| d.elements.len()),
            w(|d| d.size.len()),
            w(|d| d.align.len()),
        ];
        let extra = w(|d| text::width(&d.extra));
        let header = ["dtype", "shape", "elements", "size", if widths[4] > 0 { "align" } else { "" }];
        let widths: [usize; 5] = std::array::from_fn(|i| widths[i].max(header[i].len()));
        let fixed: usize = widths.iter().map(|w| w + 2).sum::<usize>() + extra;
        let widest_cell = cells.iter().map(|c| text::width(&c.0) + text::width(&c.1)).max().unwrap_or(0);
        let tree_width = widest_cell.min(WIDTH.saturating_sub(fixed).max(TREE_MIN));
        let mut cut = 0usize;
        if details.iter().any(Option::is_some) {
            let row = format!(
                "{}  {}  {}  {}  {}  {}",
                text::pad("  name", tree_width, true),
                text::pad(header[0], widths[0], true),
                text::pad(header[1], widths[1], true),
                text::pad(header[2], widths[2], false),
                text::pad(header[3], widths[3], false),
                text::pad(header[4], widths[4], false),
            );
            lines.push(row.trim_end().to_owned());
        }
        for ((prefix, label, _, note), detail) in cells.iter().zip(&details) {
            let room = tree_width.saturating_sub(text::width(prefix));
            let shown = text::truncate_middle(label, room);
            if shown.len() != label.len() {
                cut += 1;
            }
            let cell = format!("{prefix}{shown}");
            let line = match (detail, note) {
                (Some(d), _) => format!(
                    "{}  {}  {}  {}  {}  {}{}",
                    text::pad(&cell, tree_width, true),
                    text::pad(&d.dtype, widths[0], true),
                    text::pad(&d.shape, widths[1], true),
                    text::pad(&d.elements, widths[2], false),
                    text::pad(&d.size, widths[3], false),
                    text::pad(&d.align, widths[4], false),
                    d.extra
                ),
                (None, Some(Note::Repeats(n))) => format!("{}  {n}", text::pad(&cell, tree_width, true)),
                (None, Some(Note::Hidden(what, elements, size))) => format!(
                    "{}  {}  {}  {}",
                    text::pad(&cell, tree_width, true),
                    text::pad(what, widths[0] + 2 + widths[1], true),
                    text::pad(elements, widths[2], false),
                    text::pad(size, widths[3], false),
                ),
                (None, None) => cell,
            };
            lines.push(line.trim_end().to_owned());
        }
        if groups > 0 {
            let runs = if groups == 1 { "run" } else { "runs" };
            notes.push(format!(
                "note: {groups} {runs} of repeated layers (alike: the same names, dtypes and shapes below them) \
                 collapsed into one row each, such as `{example}`, showing the first; `--expand` shows every entry"
            ));
        }
        if cut > 0 {
            let names = if cut == 1 { "name is" } else { "names are" };
            notes.push(format!(
                "note: {cut} {names} cut to fit {WIDTH} columns (…); `--entry NAME` and `--json` show them whole"
            ));
        }
        notes
    }
}

/// What a row that is not an entry says instead of an entry's columns.
enum Note {
    /// A group of repeated layers: how many.
    Repeats(String),
    /// A row whose subtree `--depth` hides: how many entries, their elements and size.
    Hidden(String, String, String),
}

/// The detail columns of one entry row.
struct Details {
    dtype: String,
    shape: String,
    elements: String,
    size: String,
    align: String,
    extra: String,
}

impl Details {
    fn of(i: &Item) -> Self {
        let mut extra = String::new();
        if let Some(t) = i.target {
            let _ = write!(extra, "  load at {t:#x}");
        }
        if let Some(n) = i.nested {
            let _ = write!(extra, "  (container of {n} entries)");
        }
        Self {
            dtype: text::truncate(&escape(&i.dtype), 12).into_owned(),
            shape: text::truncate(&i.shape_text(), SHAPE_WIDTH).into_owned(),
            elements: i.elements.to_string(),
            size: size_short(i.bytes),
            align: i.alignment.map(|a| a.to_string()).unwrap_or_default(),
            extra,
        }
    }
}

#[derive(Default)]
struct Totals {
    bytes: u64,
    elements: u128,
    /// dtype → (entries, elements, bytes)
    by_dtype: BTreeMap<String, (u64, u128, u64)>,
}

/// An element count as a JSON number when it fits in u64 (always, for a valid file), else as a string.
fn big(n: u128) -> Value {
    u64::try_from(n).map_or_else(|_| json!(n.to_string()), |v| json!(v))
}

/// A count in short words: `950`, `12.3 K`, `7.2 M`, `1.3 B`.
fn count_short(n: u128) -> String {
    const UNITS: [(u128, &str); 4] =
        [(1_000_000_000_000, "T"), (1_000_000_000, "B"), (1_000_000, "M"), (1_000, "K")];
    for (unit, name) in UNITS {
        if n >= unit {
            return format!("{:.1} {name}", n as f64 / unit as f64);
        }
    }
    n.to_string()
}

fn item_of_entry(e: &Entry<'_>) -> Item {
    Item {
        name: e.name().to_owned(),
        dtype: dtype_name(e.dtype()),
        dtype_detail: dtype_with_geometry(e.dtype()),
        block: block_json(e.dtype()),
        shape: e.shape().dims().to_vec(),
        elements: u128::from(e.shape().elements()),
        bytes: e.byte_len(),
        alignment: Some(e.alignment()),
        target: e.target(),
        nested: e.nested().map(|n| n.len()),
    }
}

/// Cuts the metadata values of `doc` (and of nested containers) to [`JSON_ITEMS`] items or bytes, marking
/// each cut record with `"elided": true` and its full `"count"`; returns how many were cut.
fn elide(doc: &mut serde_json::Map<String, Value>) -> usize {
    let mut cut = 0;
    if let Some(Value::Array(records)) = doc.get_mut("metadata") {
        for r in records.iter_mut() {
            let Value::Object(record) = r else { continue };
            let is_bytes = record.get("type") == Some(&json!("bytes"));
            let count = match record.get_mut("value") {
                Some(Value::Array(items)) if items.len() > JSON_ITEMS => {
                    let n = items.len();
                    items.truncate(JSON_ITEMS);
                    Some(n)
                }
                Some(Value::String(hex)) if is_bytes && hex.len() > 2 * JSON_ITEMS => {
                    let n = hex.len() / 2;
                    hex.truncate(2 * JSON_ITEMS);
                    Some(n)
                }
                _ => None,
            };
            if let Some(n) = count {
                record.insert("elided".into(), json!(true));
                record.insert("count".into(), json!(n));
                cut += 1;
            }
            if record.get("type") == Some(&json!("array[]")) {
                cut += elide_items(record);
            }
        }
    }
    if let Some(Value::Array(entries)) = doc.get_mut("entries") {
        for e in entries.iter_mut() {
            if let Some(Value::Object(nested)) = e.get_mut("container") {
                cut += elide(nested);
            }
        }
    }
    cut
}

/// Cuts the items of the `array[]` value of `holder` (a record or an item) as [`elide`] cuts records, each
/// cut item marked the same way; returns how many items were cut.
fn elide_items(holder: &mut serde_json::Map<String, Value>) -> usize {
    let Some(Value::Array(items)) = holder.get_mut("value") else { return 0 };
    let mut cut = 0;
    for item in items.iter_mut() {
        let Value::Object(item) = item else { continue };
        if let Some(Value::Array(values)) = item.get_mut("value") {
            if values.len() > JSON_ITEMS {
                let n = values.len();
                values.truncate(JSON_ITEMS);
                item.insert("elided".into(), json!(true));
                item.insert("count".into(), json!(n));
                cut += 1;
            }
        }
        if item.get("type") == Some(&json!("array[]")) {
            cut += elide_items(item);
        }
    }
    cut
}

/// Whether `name` matches `pattern`: a glob over the whole name when the pattern has `*` (any run of
/// characters, separators included) or `?` (one character), else a substring.
#[must_use]
pub fn name_matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return name.contains(pattern);
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic linear-backtracking glob: on a mismatch, retry from the last `*` one character later.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Appends `s` to `lines`, wrapped to [`WIDTH`].
fn prose(lines: &mut Vec<String>, s: &str) {
    lines.extend(text::wrap(s, WIDTH, "    "));
}

fn fit_all(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(&text::truncate(line, WIDTH));
        out.push('\n');
    }
    out
}

fn entry_details(e: &Entry<'_>) -> String {
    let mut out = String::new();
    let i = item_of_entry(e);
    let _ = writeln!(out, "entry {} {}", e.position(), quoted(e.name()));
    let _ = writeln!(out, "  dtype      {}", escape(&i.dtype_detail));
    let _ = writeln!(out, "  shape      {} ({} elements)", i.shape_text(), e.shape().elements());
    let _ = writeln!(out, "  size       {}", size_words(e.byte_len()));
    let _ = writeln!(out, "  offset     {:#x} ({})", e.offset(), e.offset());
    let _ = writeln!(out, "  alignment  {}", e.alignment());
    match e.target() {
        Some(t) => {
            let _ = writeln!(out, "  load at    {t:#x} .. {:#x}", u128::from(t) + u128::from(e.byte_len()));
        }
        None => {
            let _ = writeln!(out, "  load at    none");
        }
    }
    let _ = writeln!(out, "  checksum   {:#010x} (stored; run `tpack verify` to check it)", e.checksum());
    if let Some(nested) = e.nested() {
        let _ = writeln!(out, "  nested container: {} entries", nested.len());
        for n in nested.entries() {
            let n = item_of_entry(&n);
            let _ = writeln!(
                out,
                "    {}  {}  {}  {}  align {}",
                text::pad(&text::truncate_middle(&escape(&n.name), 40), 40, true),
                escape(&n.dtype),
                text::truncate(&n.shape_text(), SHAPE_WIDTH),
                size_short(n.bytes),
                n.alignment.unwrap_or(0)
            );
        }
    }
    fit_all(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_substrings_or_whole_name_globs() {
        assert!(name_matches("attn", "h.0.attn.q"));
        assert!(!name_matches("attn", "h.0.mlp"));
        assert!(name_matches("h.*.attn.*", "h.10.attn.q"));
        assert!(!name_matches("*.bias", "h.0.bias.x"));
        assert!(name_matches("h.?.w", "h.1.w") && !name_matches("h.?.w", "h.12.w"));
        assert!(name_matches("*", "") && name_matches("**a**", "xay"));
    }

    #[test]
    fn counts_in_short_words() {
        assert_eq!(count_short(950), "950");
        assert_eq!(count_short(124_439_808), "124.4 M");
    }
}
