//! Spec §12, sections group (§3.2): R10–R12, checked in number order.

use tpack::zerocopy::little_endian::{U32, U64};
use tpack::Rule::*;

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    vec![
        // R10
        invalid(
            SectionBounds,
            "names-wraps-u64",
            "the name pool's offset + length wraps u64",
            patched(|b| header_mut(b).sections[2].length = U64::new(u64::MAX - 100)),
        ),
        invalid(
            SectionBounds,
            "table-beyond-file",
            "the table's length runs past the end",
            patched(|b| header_mut(b).sections[0].length = U64::new(1 << 40)),
        ),
        // R11
        invalid(
            SectionLayout,
            "index-gap",
            "the index does not start where the table ends",
            patched(|b| {
                let s = &mut header_mut(b).sections[1];
                s.offset = U64::new(s.offset.get() + 4);
                s.length = U64::new(s.length.get() - 4);
            }),
        ),
        // R12
        invalid(
            SectionLength,
            "entry-count",
            "entry_count is one more than the table holds",
            patched(|b| {
                let h = header_mut(b);
                h.entry_count = U32::new(h.entry_count.get() + 1)
            }),
        ),
        invalid(
            SectionLength,
            "count-times-size-wraps-u32",
            "entry_count 0xFFFFFFFF: count × 104 wraps a u32 to a small number",
            patched(|b| header_mut(b).entry_count = U32::new(u32::MAX)),
        ),
    ]
}
