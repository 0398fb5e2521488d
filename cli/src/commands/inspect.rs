//! `tpack inspect`: what a container holds, as a tree of name components or as JSON.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};
use tpack::{Container, Entry};

use crate::describe::{container_json, dtype_name, entry_json, meta_type_text, meta_value_text};
use crate::error::{CliError, Result};
use crate::formats::tpack::open;
use crate::fsutil::{size_short, size_words};

/// Schema tag of `inspect --json` output; bumped only for incompatible changes.
pub const JSON_SCHEMA: &str = "tpack-inspect/1";

/// Runs `tpack inspect`.
///
/// # Errors
/// The file cannot be read or is not a valid container ([`crate::error::Kind::Invalid`]); `entry` names
/// no entry ([`crate::error::Kind::Input`]).
pub fn run(path: &Path, entry: Option<&str>, as_json: bool) -> Result<String> {
    let map = crate::fsutil::map(path)?;
    let container = open(path, &map)?;
    let mut out = String::new();
    match (entry, as_json) {
        (Some(name), json) => {
            let e = container
                .get(name)
                .ok_or_else(|| CliError::input(format!("{} has no entry named {name:?}", path.display())))?;
            if json {
                out = serde_json::to_string_pretty(&entry_json(&e)).unwrap_or_default();
            } else {
                entry_details(&mut out, &e);
            }
        }
        (None, true) => {
            out = serde_json::to_string_pretty(&json_report(path, &container)).unwrap_or_default();
        }
        (None, false) => summary(&mut out, path, &container),
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// The `inspect --json` document: spec §13's decoding plus the file and totals (see docs/cli.md).
#[must_use]
pub fn json_report(path: &Path, c: &Container<'_>) -> Value {
    let mut doc = container_json(c);
    let totals = Totals::of(c);
    let by_dtype: serde_json::Map<String, Value> = totals
        .by_dtype
        .iter()
        .map(|(name, (count, bytes))| (name.clone(), json!({"entries": count, "bytes": bytes})))
        .collect();
    if let Value::Object(m) = &mut doc {
        m.insert("schema".into(), json!(JSON_SCHEMA));
        m.insert("file".into(), json!(path.display().to_string()));
        m.insert("file_length".into(), json!(c.as_bytes().len()));
        m.insert(
            "totals".into(),
            json!({"entries": c.len(), "payload_bytes": totals.payload_bytes, "by_dtype": by_dtype}),
        );
    }
    doc
}

struct Totals {
    payload_bytes: u64,
    by_dtype: BTreeMap<String, (u64, u64)>,
}

impl Totals {
    fn of(c: &Container<'_>) -> Self {
        let mut payload_bytes = 0u64;
        let mut by_dtype = BTreeMap::new();
        for e in c.entries() {
            payload_bytes = payload_bytes.saturating_add(e.byte_len());
            let slot = by_dtype.entry(dtype_name(e.dtype())).or_insert((0u64, 0u64));
            slot.0 += 1;
            slot.1 = slot.1.saturating_add(e.byte_len());
        }
        Self { payload_bytes, by_dtype }
    }
}

fn shape_text(e: &Entry<'_>) -> String {
    let dims: Vec<String> = e.shape().dims().iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

fn entry_line(e: &Entry<'_>) -> String {
    let mut line = format!(
        "{:<6} {:<14} {:>10}  align {}",
        dtype_name(e.dtype()),
        shape_text(e),
        size_short(e.byte_len()),
        e.alignment()
    );
    if let Some(t) = e.target() {
        let _ = write!(line, "  load at {t:#x}");
    }
    if let Some(nested) = e.nested() {
        let _ = write!(line, "  (container of {} entries)", nested.len());
    }
    line
}

fn entry_details(out: &mut String, e: &Entry<'_>) {
    let _ = writeln!(out, "entry {} {:?}", e.position(), e.name());
    let _ = writeln!(out, "  dtype      {}", dtype_name(e.dtype()));
    let _ = writeln!(out, "  shape      {} ({} elements)", shape_text(e), e.shape().elements());
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
            let _ = writeln!(out, "    {:<30} {}", n.name(), entry_line(&n));
        }
    }
}

/// The tree of name components: each node keeps its children in first-seen (table) order.
#[derive(Default)]
struct Node {
    children: Vec<(String, Node)>,
    lookup: HashMap<String, usize>,
    entry: Option<usize>,
}

impl Node {
    fn insert(&mut self, components: &[&str], entry: usize) {
        let Some((first, rest)) = components.split_first() else {
            self.entry = Some(entry);
            return;
        };
        let slot = match self.lookup.get(*first) {
            Some(&i) => i,
            None => {
                self.children.push(((*first).to_owned(), Node::default()));
                self.lookup.insert((*first).to_owned(), self.children.len() - 1);
                self.children.len() - 1
            }
        };
        self.children[slot].1.insert(rest, entry);
    }
}

/// Splits a name on `.` and `/`, the separators of PyTorch, GGUF and path-like names.
fn components(name: &str) -> Vec<&str> {
    name.split(['.', '/']).collect()
}

fn render(node: &Node, prefix: &str, c: &Container<'_>, lines: &mut Vec<(String, Option<String>)>) {
    let count = node.children.len();
    for (i, (label, child)) in node.children.iter().enumerate() {
        let last = i + 1 == count;
        let branch = if last { "└── " } else { "├── " };
        // A chain of single children with no entry of their own is folded into one label (`attn.q`).
        let mut label = label.clone();
        let mut child = child;
        while child.entry.is_none() && child.children.len() == 1 {
            let (next_label, next) = &child.children[0];
            label = format!("{label}.{next_label}");
            child = next;
        }
        let detail = child.entry.and_then(|i| c.entry(i)).map(|e| entry_line(&e));
        lines.push((format!("{prefix}{branch}{label}"), detail));
        let deeper = format!("{prefix}{}", if last { "    " } else { "│   " });
        render(child, &deeper, c, lines);
    }
}

fn summary(out: &mut String, path: &Path, c: &Container<'_>) {
    let (major, minor) = c.version();
    let totals = Totals::of(c);
    let _ =
        writeln!(out, "{}: tpack {major}.{minor}, {}", path.display(), size_words(c.as_bytes().len() as u64));
    let h = c.header();
    let [_, index, names, meta, payloads, trailer] = &h.sections;
    let _ = writeln!(
        out,
        "layout: header {} B (checksum {:#010x}), table {} × {} B, index {} B, names {} B, metadata {} records in {} B, \
         payloads {}, trailer {} B",
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
    );
    if c.compat_flags() != 0 {
        let _ = writeln!(out, "compatible-feature flags: {:#x}", c.compat_flags());
    }
    let _ = writeln!(out, "structure valid; payload checksums not checked (run `tpack verify`)");
    let _ = writeln!(out);
    let _ = writeln!(out, "entries ({}):", c.len());
    let mut root = Node::default();
    for e in c.entries() {
        root.insert(&components(e.name()), e.position());
    }
    let mut lines = Vec::new();
    render(&root, "  ", c, &mut lines);
    let width = lines.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0).min(64);
    for (label, detail) in lines {
        match detail {
            Some(d) => {
                let pad = width.saturating_sub(label.chars().count());
                let _ = writeln!(out, "{label}{}  {d}", " ".repeat(pad));
            }
            None => {
                let _ = writeln!(out, "{label}");
            }
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "totals: {} entries, {} of payload", c.len(), size_words(totals.payload_bytes));
    for (dtype, (count, bytes)) in &totals.by_dtype {
        let noun = if *count == 1 { "entry" } else { "entries" };
        let _ = writeln!(out, "  {dtype:<9} {count:>6} {noun:<7}  {}", size_short(*bytes));
    }
    let meta: Vec<_> = c.metadata().iter().collect();
    if !meta.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "metadata ({}):", meta.len());
        for (key, value) in meta {
            let _ = writeln!(out, "  {key} ({}) = {}", meta_type_text(&value), meta_value_text(&value));
        }
    }
}
