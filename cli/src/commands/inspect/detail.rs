//! `--entry NAME`: one entry's details as text.

use std::fmt::Write as _;

use super::model::{Item, Model};
use super::table::SHAPE_WIDTH;
use super::WIDTH;
use crate::describe::{dtype_name, dtype_with_geometry};
use crate::fsutil::{size_short, size_words};
use crate::text::{self, escape, quoted};

/// The details of `item`: dtype, shape, size and, for a tpack entry, where it lies, its checksum and its
/// nested container's entries.
pub(super) fn text(item: &Item<'_>) -> String {
    let mut out = String::new();
    match &item.entry {
        Some(e) => {
            let _ = writeln!(out, "entry {} {}", e.position(), quoted(e.name()));
        }
        None => {
            let _ = writeln!(out, "entry {}", quoted(&item.name));
        }
    }
    let _ = writeln!(out, "  dtype      {}", escape(&dtype_with_geometry(item.dtype)));
    let _ = writeln!(out, "  shape      {} ({} elements)", item.shape_text(), item.elements);
    let _ = writeln!(out, "  size       {}", size_words(item.bytes));
    if let Some(e) = &item.entry {
        let _ = writeln!(out, "  offset     {:#x} ({})", e.offset(), e.offset());
        let _ = writeln!(out, "  alignment  {}", e.alignment());
        match e.target() {
            Some(t) => {
                let _ =
                    writeln!(out, "  load at    {t:#x} .. {:#x}", u128::from(t) + u128::from(e.byte_len()));
            }
            None => {
                let _ = writeln!(out, "  load at    none");
            }
        }
        let _ = writeln!(out, "  checksum   {:#010x} (stored; run `tpack verify` to check it)", e.checksum());
        if let Some(nested) = e.nested() {
            let _ = writeln!(out, "  nested container: {} entries", nested.len());
            if let Some(line) = super::text::signed_line(&nested) {
                for piece in text::wrap(&line, WIDTH - 2, "    ") {
                    let _ = writeln!(out, "  {piece}");
                }
            }
            for n in nested.entries() {
                let n = Model::item_of_entry(&n);
                let _ = writeln!(
                    out,
                    "    {}  {}  {}  {}  align {}",
                    text::pad(&text::truncate_middle(&escape(&n.name), 40), 40, true),
                    escape(&dtype_name(n.dtype)),
                    text::truncate(&n.shape_text(), SHAPE_WIDTH),
                    size_short(n.bytes),
                    n.entry.map_or(0, |e| e.alignment())
                );
            }
        }
    }
    fit_all(&out)
}

/// `text` with every line cut to [`WIDTH`] columns.
fn fit_all(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(&text::truncate(line, WIDTH));
        out.push('\n');
    }
    out
}
