//! Spec §12, checksums group (§3.3, §8): R13–R14, checked in number order. The bytes are damaged after the
//! checksums were computed.

use tpack::Rule::*;

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    vec![
        // R13
        invalid(
            HeaderChecksum,
            "name-bit-flip",
            "one bit of a name flipped after the checksum was computed",
            damaged(|b| {
                let (names, _) = section(b, 2);
                b[names] ^= 0x20;
            }),
        ),
        // R14
        invalid(
            TrailerChecksum,
            "last-value",
            "the trailer's own checksum altered",
            damaged(|b| {
                let at = b.len() - 1;
                b[at] ^= 1;
            }),
        ),
    ]
}
