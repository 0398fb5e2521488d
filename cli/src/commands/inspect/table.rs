//! The entry table of the text report: a tree of name components (repeated layers collapsed, `--depth`
//! summarised) or, with `--flat`, one row per entry; columns sized to fit [`WIDTH`].

use std::collections::HashMap;
use std::fmt::Write as _;

use tpack::Dtype;

use super::model::{Item, Model};
use super::{Options, WIDTH};
use crate::describe::dtype_name;
use crate::fsutil::size_short;
use crate::text::{self, escape};
use crate::tree::{Draw, Tree};

/// Widest shape column; a longer shape is cut.
pub(super) const SHAPE_WIDTH: usize = 24;

/// The tree column is never made narrower than this to fit the line.
const TREE_MIN: usize = 24;

/// Appends the entry rows (a tree, or a flat list with `--flat`) to `lines`; returns notes for after them.
pub(super) fn rows(
    model: &Model<'_>,
    selected: &[usize],
    opts: &Options,
    lines: &mut Vec<String>,
) -> Vec<String> {
    let mut notes = Vec::new();
    // (tree cell: drawing and escaped label, entry, note for rows that are not entries)
    let mut cells: Vec<(String, String, Option<usize>, Option<Note>)> = Vec::new();
    let mut groups = 0usize;
    let mut example = String::new();
    if opts.flat {
        let mut order = selected.to_vec();
        order.sort_by(|&a, &b| crate::natural::cmp(&model.entries[a].name, &model.entries[b].name));
        for i in order {
            cells.push(("  ".to_owned(), escape(&model.entries[i].name).into_owned(), Some(i), None));
        }
    } else {
        let mut kinds: HashMap<(Dtype, &[u64]), u32> = HashMap::new();
        let kind_of: Vec<u32> = model
            .entries
            .iter()
            .map(|i| {
                let next = kinds.len() as u32;
                *kinds.entry((i.dtype, i.shape.as_slice())).or_insert(next)
            })
            .collect();
        let tree = Tree::new(selected.iter().map(|&i| (i, model.entries[i].name.as_ref())), |e| kind_of[e]);
        for row in tree.rows(Draw { collapse: !opts.expand, depth: opts.depth }, "  ") {
            let note = match (row.repeats, row.hidden) {
                (_, Some(hidden)) => {
                    let (mut elements, mut bytes) = (0u128, 0u64);
                    for &e in &row.hidden_entries {
                        elements = elements.saturating_add(model.entries[e].elements);
                        bytes = bytes.saturating_add(model.entries[e].bytes);
                    }
                    let noun = if hidden == 1 { "entry" } else { "entries" };
                    Some(Note::Hidden(format!("({hidden} {noun})"), elements.to_string(), size_short(bytes)))
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
        cells.iter().map(|c| c.2.map(|i| Details::of(&model.entries[i]))).collect();
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
    fn of(i: &Item<'_>) -> Self {
        let mut extra = String::new();
        if let Some(t) = i.target {
            let _ = write!(extra, "  load at {t:#x}");
        }
        if let Some(n) = i.entry.and_then(|e| e.nested()).map(|n| n.len()) {
            let _ = write!(extra, "  (container of {n} entries)");
        }
        Self {
            dtype: text::truncate(&escape(&dtype_name(i.dtype)), 12).into_owned(),
            shape: text::truncate(&i.shape_text(), SHAPE_WIDTH).into_owned(),
            elements: i.elements.to_string(),
            size: size_short(i.bytes),
            align: i.entry.map(|e| e.alignment().to_string()).unwrap_or_default(),
            extra,
        }
    }
}
