//! Spec §12, extension group (§3.4): R51–R52, in files of minor version ≥ 1, checked after the checksums.
//! Each case is the 1.1 model with its header extension replaced.

use tpack::{Dtype, Rule::*};

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    let own = own_records();
    vec![
        // R51
        invalid(
            ExtensionLayout,
            "tag-0",
            "an extension item of tag 0 before the block geometry",
            with_extension([extension_item(0, &[]), geometry(&own)].concat()),
        ),
        invalid(
            ExtensionLayout,
            "body-past-end",
            "the block geometry item's length runs 8 bytes past header_len",
            with_extension({
                let mut item = geometry(&own);
                let len = u32::from_le_bytes(item[4..8].try_into().unwrap()) + 8;
                item[4..8].copy_from_slice(&len.to_le_bytes());
                item
            }),
        ),
        invalid(
            ExtensionLayout,
            "padding-not-zero",
            "a 3-byte item of an unknown tag whose padding to 8 bytes holds 0xff",
            with_extension({
                let mut item = extension_item(7, &[1, 2, 3]);
                item[12] = 0xff;
                [geometry(&own), item].concat()
            }),
        ),
        invalid(
            ExtensionLayout,
            "tags-descending",
            "an item of tag 9 before the block geometry (tag 1)",
            with_extension([extension_item(9, &[]), geometry(&own)].concat()),
        ),
        invalid(
            ExtensionLayout,
            "tag-twice",
            "the block geometry item twice",
            with_extension([geometry(&own), geometry(&own)].concat()),
        ),
        // R52
        invalid(
            BlockGeometry,
            "body-not-16s",
            "a block geometry body of 16k + 8 bytes",
            with_extension(extension_item(1, &[geometry_records(&own), vec![0; 8]].concat())),
        ),
        invalid(
            BlockGeometry,
            "descending",
            "the records in descending dtype order",
            with_extension(geometry(&own.iter().rev().copied().collect::<Vec<_>>())),
        ),
        invalid(
            BlockGeometry,
            "duplicate",
            "the Q4_K record twice",
            with_extension(geometry(&with_record(&own, (Dtype::Q4_K.code(), 256, 144)))),
        ),
        invalid(
            BlockGeometry,
            "raw",
            "a record for RAW",
            with_extension(geometry(&with_record(&own, (Dtype::RAW.code(), 1, 1)))),
        ),
        invalid(
            BlockGeometry,
            "container",
            "a record for CONTAINER",
            with_extension(geometry(&with_record(&own, (Dtype::CONTAINER.code(), 1, 1)))),
        ),
        invalid(
            BlockGeometry,
            "reserved",
            "the first record's reserved field is 1",
            with_extension({
                let mut item = geometry(&own);
                item[8 + 2] = 1;
                item
            }),
        ),
        invalid(
            BlockGeometry,
            "reserved2",
            "the last record's second reserved field is 1",
            with_extension({
                let mut item = geometry(&own);
                item[8 + 16 * (own.len() - 1) + 12] = 1;
                item
            }),
        ),
        invalid(
            BlockGeometry,
            "elements-3",
            "a record for code 99 (undefined) with 3 elements per block, not a power of two",
            with_extension(geometry(&with_record(&own, (99, 3, 1)))),
        ),
        invalid(
            BlockGeometry,
            "elements-0",
            "a record for code 99 with 0 elements per block",
            with_extension(geometry(&with_record(&own, (99, 0, 1)))),
        ),
        invalid(
            BlockGeometry,
            "elements-2p17",
            "a record for code 99 with 131072 elements per block, above 65536",
            with_extension(geometry(&with_record(&own, (99, 1 << 17, 1)))),
        ),
        invalid(
            BlockGeometry,
            "bytes-0",
            "a record for code 99 with 0 bytes per block",
            with_extension(geometry(&with_record(&own, (99, 32, 0)))),
        ),
        invalid(
            BlockGeometry,
            "q4k-145",
            "Q4_K recorded as 256 elements in 145 bytes, not ggml's 144",
            with_extension(geometry(
                &own.iter()
                    .map(|&r| if r.0 == Dtype::Q4_K.code() { (r.0, 256, 145) } else { r })
                    .collect::<Vec<_>>(),
            )),
        ),
        invalid(
            BlockGeometry,
            "q8-1-gguf-py",
            "Q8_1 recorded with gguf-py's 40 bytes instead of ggml's 36",
            with_extension(geometry(&with_record(&own, (Dtype::Q8_1.code(), 32, 40)))),
        ),
        invalid(
            BlockGeometry,
            "element-dtype",
            "a record for F32 of 1 element in 2 bytes, where F32 has 4",
            with_extension(geometry(&with_record(&own, (Dtype::F32.code(), 1, 2)))),
        ),
    ]
}

/// The records a 1.1 writer gives the 1.1 model's block entries.
fn own_records() -> Vec<(u16, u32, u32)> {
    block_records(&base_1_1().entries)
}

/// `records` with `extra` inserted in dtype order (after an equal dtype).
fn with_record(records: &[(u16, u32, u32)], extra: (u16, u32, u32)) -> Vec<(u16, u32, u32)> {
    let mut out = records.to_vec();
    let at = out.partition_point(|r| r.0 <= extra.0);
    out.insert(at, extra);
    out
}

/// The 1.1 model with `extension` as its header extension.
fn with_extension(extension: Vec<u8>) -> Vec<u8> {
    model_1_1(|r| r.extension = extension)
}
