//! Spec §12, payload-integrity group (§6, §8): R50 (R37, checked with it, is in `r33_payloads`). The bytes are
//! damaged after the checksums were computed.

use tpack::Rule::*;

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    vec![
        // R50
        invalid(
            EntryChecksum,
            "payload-bit-flip",
            "one payload bit flipped after the checksums were computed",
            damaged(|b| {
                let d = descriptor(b, 0);
                b[d.offset.get() as usize + 5] ^= 0x01;
            }),
        ),
        invalid(
            EntryChecksum,
            "nested-payload",
            "a nested container's payload does not match the nested trailer, though the outer checksum does",
            {
                let mut inner = base().encode();
                let d = descriptor(&inner, 0);
                inner[d.offset.get() as usize] ^= 0x10;
                of_entries(vec![container("sub", inner)])
            },
        ),
    ]
}
