//! Spec §12, entries group (§4): R22–R32 and R53, each an edit of one descriptor of the base model (or, for
//! the rules of format 1.1, of the 1.1 model).

use tpack::{Dtype, Rule::*};

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    let mut cases = vec![
        // R22
        invalid(
            UnknownDtype,
            "code-99",
            "dtype code 99 in a minor-0 file",
            model(|r| r.entries[5].dtype = 99),
        ),
        invalid(UnknownDtype, "code-0", "dtype code 0", model(|r| r.entries[5].dtype = 0)),
        // R23
        invalid(RankTooLarge, "rank-9", "rank 9", model(|r| r.entries[0].rank = 9)),
        // R24
        invalid(
            UnusedDimNonZero,
            "dim5",
            "dims[5] set on a rank-2 entry",
            model(|r| r.entries[0].dims[5] = 1),
        ),
        // R25
        invalid(
            ShapeOverflow,
            "dims-2p63-by-2",
            "shape [2^63, 2]: the element count wraps u64",
            model(|r| r.entries[0].dims[..2].copy_from_slice(&[1 << 63, 2])),
        ),
        invalid(
            ShapeOverflow,
            "bytes-wrap",
            "shape [2^62 + 1] of F32: the byte length wraps u64",
            model(|r| {
                r.entries[0].rank = 1;
                r.entries[0].dims = [(1 << 62) + 1, 0, 0, 0, 0, 0, 0, 0];
            }),
        ),
        invalid(
            ShapeOverflow,
            "unknown-dtype",
            "a minor-3 file with an entry of dtype 77 (unknown, so skippable) and shape [2^63, 4]: the element \
             count wraps u64, which R25 forbids for every entry, whatever its dtype",
            model(|r| {
                r.entries[0].dtype = 77;
                r.entries[0].dims[..2].copy_from_slice(&[1 << 63, 4]);
                as_minor_3(r);
            }),
        ),
        invalid(
            ShapeOverflow,
            "partial-product",
            "shape [2^40, 2^40, 0]: a partial product overflows although the count is 0",
            model(|r| {
                r.entries[5].dtype = Dtype::U8.code();
                r.entries[5].rank = 3;
                r.entries[5].dims[..3].copy_from_slice(&[1 << 40, 1 << 40, 0]);
            }),
        ),
        invalid(
            ShapeOverflow,
            "q8-blocks-times-bytes",
            "Q8_0 shape [2^64 - 32]: (count / 32) x 34 overflows",
            model(|r| {
                r.entries[2].rank = 1;
                r.entries[2].dims = [u64::MAX - 31, 0, 0, 0, 0, 0, 0, 0];
            }),
        ),
        // R26
        invalid(
            BlockShape,
            "q8-inner-31",
            "a Q8_0 entry whose innermost dimension is 31",
            model(|r| r.entries[2].dims[1] = 31),
        ),
        invalid(
            BlockShape,
            "q8-scalar",
            "a rank-0 Q8_0 entry",
            model(|r| {
                r.entries[2].rank = 0;
                r.entries[2].dims = [0; 8];
            }),
        ),
        invalid(
            BlockShape,
            "before-byte-length",
            "a minor-1 Q8_K entry of shape [2^64 - 1]: the element count fits, the innermost dimension is not a \
             multiple of 256 (R26), and (count / 256) x 292 would overflow; the byte length of a block dtype is \
             defined only for whole blocks, so §12 checks R26 before the byte-length part of R25",
            {
                let entries = vec![RawEntry::new("q", Dtype::Q8_K, &[u64::MAX], Vec::new())];
                Raw { minor: 1, extension: geometry_of(&entries), entries, ..Raw::default() }.encode()
            },
        ),
        // R27
        invalid(
            ByteShape,
            "raw-rank-2",
            "a RAW entry of rank 2",
            model(|r| {
                r.entries[CODE].rank = 2;
                r.entries[CODE].dims[..2].copy_from_slice(&[10, 10]);
            }),
        ),
        // R28
        invalid(
            LengthMismatch,
            "short-payload",
            "an F32 [4, 8] entry with 124 bytes",
            model(|r| r.entries[0].data.truncate(124)),
        ),
        invalid(
            LengthMismatch,
            "zero-dim-nonzero-length",
            "a zero-size shape with a 4-byte payload",
            model(|r| r.entries[5].data = vec![0; 4]),
        ),
        // R29
        invalid(BadAlignment, "zero", "alignment 0", model(|r| r.entries[CODE].alignment = 0)),
        invalid(BadAlignment, "three", "alignment 3", model(|r| r.entries[CODE].alignment = 3)),
        invalid(BadAlignment, "2p31", "alignment 2^31", model(|r| r.entries[CODE].alignment = 1 << 31)),
        // R30
        invalid(Misaligned, "offset-plus-1", "an offset one past a 64-byte boundary", offset_plus_one(0)),
        // R31
        invalid(EntryFlags, "unknown-bit", "entry flag bit 1 set", model(|r| r.entries[0].flags = 2)),
        invalid(
            EntryFlags,
            "target-without-flag",
            "a target address without HAS_TARGET",
            model(|r| r.entries[0].target = 0x1000),
        ),
        // R32
        invalid(
            TargetOverflow,
            "past-2p64",
            "target + length exceeds 2^64",
            model(|r| r.entries[CODE].target = u64::MAX - 50),
        ),
    ];
    cases.extend(format_1_1());
    // In rule order, each rule's cases in the order given (a stable sort).
    cases.sort_by_key(|c| c.rule.map(tpack::Rule::number));
    cases
}

/// The entry rules as format 1.1 changes them: its dtypes, geometry records for unknown codes, and R53.
fn format_1_1() -> Vec<Case> {
    vec![
        invalid(
            UnknownDtype,
            "1-1-dtype-in-minor-0",
            "a Q4_K entry (format 1.1) in a minor-0 file",
            model(|r| r.entries[5].dtype = Dtype::Q4_K.code()),
        ),
        invalid(
            UnknownDtype,
            "code-44-minor-1",
            "dtype code 44, undefined in 1.1, in a minor-1 file",
            model_1_1(|r| r.entries[6].dtype = 44),
        ),
        invalid(
            ShapeOverflow,
            "unknown-dtype-record-bytes",
            "a minor-3 file with dtype 98, recorded as 1 element of 2^31 bytes, and shape [2^33]: the byte length \
             that the record gives wraps u64",
            newer_with_record((98, 1, 1 << 31), &[1 << 33], Vec::new()),
        ),
        invalid(
            BlockShape,
            "q4k-inner-128",
            "a Q4_K entry of shape [4, 128]: 128 is not a multiple of its 256-element block",
            model_1_1(|r| r.entries[0].dims[..2].copy_from_slice(&[4, 128])),
        ),
        invalid(
            BlockShape,
            "unknown-dtype-record",
            "a minor-3 file with dtype 99, recorded as blocks of 32 elements in 10 bytes, and shape [48]",
            newer_with_record((99, 32, 10), &[48], vec![0; 15]),
        ),
        invalid(
            LengthMismatch,
            "q6k-short",
            "a Q6_K entry of one 256-element block with 209 bytes, not 210",
            model_1_1(|r| {
                r.entries[1].data.pop();
            }),
        ),
        invalid(
            LengthMismatch,
            "unknown-dtype-record",
            "a minor-3 file with dtype 99, recorded as blocks of 32 elements in 10 bytes, shape [64] and 19 bytes",
            newer_with_record((99, 32, 10), &[64], vec![0; 19]),
        ),
        invalid(
            MissingGeometry,
            "q4k",
            "a minor-1 file whose geometry has no record for its Q4_K entry",
            model_1_1(|r| r.extension = geometry(&without(&block_records(&r.entries), Dtype::Q4_K))),
        ),
        invalid(
            MissingGeometry,
            "q8-0",
            "a minor-1 file whose geometry has no record for its Q8_0 entry (a dtype of 1.0, recorded all the same)",
            model_1_1(|r| r.extension = geometry(&without(&block_records(&r.entries), Dtype::Q8_0))),
        ),
        invalid(
            MissingGeometry,
            "no-extension",
            "a minor-1 file of the 1.0 model (Q8_0) with no header extension",
            model(|r| r.minor = 1),
        ),
        invalid(
            MissingGeometry,
            "minor-3",
            "a minor-3 file of the 1.1 model with no header extension: R53 holds for every minor from 1",
            model_1_1(|r| {
                r.minor = 3;
                r.extension.clear();
            }),
        ),
    ]
}

/// `records` without the one for `dtype`.
fn without(records: &[(u16, u32, u32)], dtype: Dtype) -> Vec<(u16, u32, u32)> {
    records.iter().copied().filter(|r| r.0 != dtype.code()).collect()
}

/// A minor-3 file with one entry of the code that `record` describes, of shape `dims` and payload `data`.
fn newer_with_record(record: (u16, u32, u32), dims: &[u64], data: Vec<u8>) -> Vec<u8> {
    Raw {
        minor: 3,
        extension: geometry(&[record]),
        entries: vec![RawEntry { dtype: record.0, ..RawEntry::new("future", Dtype::U8, dims, data) }],
        ..Raw::default()
    }
    .encode()
}
