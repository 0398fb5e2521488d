//! The model as text for a terminal: the header, the entry table ([`super::table`]), the totals and the
//! metadata, every line at most [`WIDTH`] columns, every name, key and string escaped.

use std::path::Path;

use super::model::{Model, Totals};
use super::{table, Options, JSON_ITEMS, WIDTH};
use crate::describe::meta_value_text;
use crate::fsutil::{size_short, size_words};
use crate::meta_view::MetaView;
use crate::signer::Signer;
use crate::text::{self, escape, quoted};

/// The text report: header, entries, totals, metadata; no line wider than [`WIDTH`].
pub(super) fn report(model: &Model<'_>, path: &Path, opts: &Options) -> String {
    let mut lines: Vec<String> = Vec::new();
    header(model, path, &mut lines);
    if !opts.no_tensors {
        lines.push(String::new());
        let selected = model.selected(opts);
        let heading = match &opts.filter {
            Some(f) => {
                format!("entries ({} of {} match {}):", selected.len(), model.entries.len(), quoted(f))
            }
            None => format!("entries ({}):", model.entries.len()),
        };
        prose(&mut lines, &heading);
        for note in table::rows(model, &selected, opts, &mut lines) {
            prose(&mut lines, &note);
        }
    }
    lines.push(String::new());
    totals(model.entries.len(), &model.totals(), &mut lines);
    metadata(model, &mut lines);
    let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in &lines {
        out.push_str(&text::truncate(line, WIDTH));
        out.push('\n');
    }
    out
}

/// What the file is: for a container its version and layout, for a foreign file how it was read.
fn header(model: &Model<'_>, path: &Path, lines: &mut Vec<String>) {
    let file = escape(&path.display().to_string()).into_owned();
    let Some(c) = &model.container else {
        let format = model.format.name();
        let what = match model.files {
            1 => format!("{format}, {}", size_words(model.file_length)),
            n => format!("a {format} shard set of {n} files, {} in all", size_words(model.file_length)),
        };
        prose(lines, &format!("{file}: {what}"));
        prose(
            lines,
            &format!(
                "read and checked completely as `tpack convert` reads {format} files; dtypes and shapes are \
                 shown in tpack's terms (shapes outermost first)"
            ),
        );
        return;
    };
    let (major, minor) = c.version();
    prose(lines, &format!("{file}: tpack {major}.{minor}, {}", size_words(model.file_length)));
    let h = c.header();
    let [_, index, names, meta, payloads, trailer] = &h.sections;
    prose(
        lines,
        &format!(
            "layout: header {} B (checksum {:#010x}), table {} × {} B, index {} B, names {} B, metadata {} \
             records in {} B, payloads {}, trailer {} B",
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
        // Bit 0 is the SIGNED flag in files of 1.2 and later; before, no flag is named.
        let named =
            if minor >= 2 && c.compat_flags() & tpack::format::COMPAT_SIGNED != 0 { " (SIGNED)" } else { "" };
        prose(lines, &format!("compatible-feature flags: {:#x}{named}", c.compat_flags()));
    }
    if let Some(line) = signed_line(c) {
        prose(lines, &line);
    }
    prose(lines, "structure valid; payload checksums not checked (run `tpack verify`)");
}

/// `signed: …` for a signed container: the signed attributes, which entry holds the signature, and that it
/// was not checked.
pub(super) fn signed_line(c: &tpack::Container<'_>) -> Option<String> {
    let signer = Signer::of(c)?;
    let last = c.len().saturating_sub(1);
    Some(format!(
        "signed: {}; entry {last} holds the entry digests and the signature (not checked here: `tpack verify --key \
         PUBLIC.pem` checks it)",
        signer.words_with_public_key()
    ))
}

/// The totals line and one line per dtype.
fn totals(entries: usize, totals: &Totals, lines: &mut Vec<String>) {
    let short =
        if totals.elements >= 1000 { format!(" ({})", count_short(totals.elements)) } else { String::new() };
    prose(
        lines,
        &format!(
            "totals: {entries} entries, {} elements{short}, {} of payload",
            totals.elements,
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
}

/// One line per metadata record, its value rendered only as far as the line shows it.
fn metadata(model: &Model<'_>, lines: &mut Vec<String>) {
    if model.metadata.is_empty() {
        return;
    }
    lines.push(String::new());
    lines.push(format!("metadata ({}):", model.metadata.len()));
    let mut cut = 0;
    for record in &model.metadata {
        let line = format!(
            "  {} ({}) = {}",
            escape(record.key),
            escape(&record.value.value_type().to_string()),
            meta_value_text(record.value)
        );
        if text::width(&line) > WIDTH {
            cut += 1;
        }
        lines.push(line);
    }
    if cut > 0 {
        prose(
            lines,
            &format!(
                "note: {cut} metadata lines are cut to {WIDTH} columns (…); `--json` shows the values (arrays up \
                 to {JSON_ITEMS} items, all with `--full`)"
            ),
        );
    }
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

/// Appends `s` to `lines`, wrapped to [`WIDTH`].
pub(super) fn prose(lines: &mut Vec<String>, s: &str) {
    lines.extend(text::wrap(s, WIDTH, "    "));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_in_short_words() {
        assert_eq!(count_short(950), "950");
        assert_eq!(count_short(124_439_808), "124.4 M");
    }
}
