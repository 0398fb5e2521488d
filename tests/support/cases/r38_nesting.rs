//! Spec §12, nesting group (§9): R38–R39.

use tpack::{Dtype, Rule::*};

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    vec![
        // R38
        invalid(NestingTooDeep, "depth-9", "containers nested 9 deep", nested_chain(10)),
        invalid(
            NestingTooDeep,
            "garbage-at-depth-9",
            "a depth-8 container whose CONTAINER payload is not even a container",
            wrapped(of_entries(vec![container("deeper", pattern(64, 3))]), 8),
        ),
        // R39
        invalid(
            NestedInvalid,
            "bad-magic",
            "a CONTAINER entry whose payload is not a container",
            model(|r| r.entries.push(container("sub", pattern(200, 1)))),
        ),
        invalid(
            NestedInvalid,
            "inner-rule",
            "a nested container with a duplicate name",
            model(|r| {
                let mut inner = base();
                inner.entries[5].name = b"embed.weight".to_vec();
                r.entries.push(container("sub", inner.encode()));
            }),
        ),
        // R39 covers the extension group and R53 too (spec §12: "R1–R36, R39–R49 or R51–R53"). The outer
        // containers are of minor 1 (with no extension, as their content needs none) so that a 1.0 reader, which
        // cannot know these rules, may accept them (compat_1_0.py).
        invalid(
            NestedInvalid,
            "inner-R51",
            "a nested 1.1 container whose header extension is one item of tag 0 (R51 inside)",
            of_entries_1_1(vec![container(
                "sub",
                model_1_1(|r| {
                    r.entries.retain(|e| !is_block(e));
                    r.extension = extension_item(0, &[]);
                }),
            )]),
        ),
        invalid(
            NestedInvalid,
            "inner-R52",
            "a nested 1.1 container whose geometry record gives Q4_K 145 bytes a block (R52 inside)",
            of_entries_1_1(vec![container(
                "sub",
                model_1_1(|r| {
                    let mut records = block_records(&r.entries);
                    records.iter_mut().find(|x| x.0 == Dtype::Q4_K.code()).unwrap().2 = 145;
                    r.extension = geometry(&records);
                }),
            )]),
        ),
        invalid(
            NestedInvalid,
            "inner-R53",
            "a nested 1.1 container with block dtypes and no header extension (R53 inside)",
            of_entries_1_1(vec![container("sub", model_1_1(|r| r.extension.clear()))]),
        ),
        invalid(
            NestedInvalid,
            "inner-R55",
            "a nested signed container whose signature entry is aligned to 16 (R55 inside)",
            super::signature::nested_signature_entry_misaligned(),
        ),
    ]
}

/// A minor-1 container of just these entries, none of a block dtype (so no header extension).
fn of_entries_1_1(entries: Vec<RawEntry>) -> Vec<u8> {
    Raw { minor: 1, entries, ..Raw::default() }.encode()
}

/// Whether `e` has a block dtype (which needs a geometry record in a 1.1 file).
fn is_block(e: &RawEntry) -> bool {
    matches!(Dtype::from_code(e.dtype).packing(), Some(tpack::Packing::Block { .. }))
}
