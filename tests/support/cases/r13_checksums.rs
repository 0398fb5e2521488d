//! Spec §12, checksums group (§3.3, §8): R13–R14, checked in number order. The bytes are damaged after the
//! checksums were computed.

use tpack::zerocopy::little_endian::{U16, U64};
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
        invalid(
            HeaderChecksum,
            "major-bit-flip",
            "bit 1 of version_major flipped after the checksum was computed (major 3): the header is damaged, \
             not newer — the header diagnosis of §12 reports R13, not R3",
            damaged(|b| {
                let h = header_mut(b);
                h.version_major = U16::new(h.version_major.get() ^ 2);
            }),
        ),
        invalid(
            HeaderChecksum,
            "incompat-bit-flip",
            "bit 17 of incompat_flags flipped after the checksum was computed: the header is damaged, not newer \
             — the header diagnosis of §12 reports R13, not R5",
            damaged(|b| {
                let h = header_mut(b);
                h.incompat_flags = U64::new(h.incompat_flags.get() ^ (1 << 17));
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
