//! Spec §12, header group (§3): R1–R9, checked in number order.

use tpack::zerocopy::little_endian::{U16, U32, U64};
use tpack::Rule::*;

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    vec![
        // R1
        invalid(TooShort, "100-bytes", "the first 100 bytes of a container", base().encode()[..100].to_vec()),
        invalid(TooShort, "empty-input", "zero bytes", Vec::new()),
        // R2
        invalid(
            BadMagic,
            "high-bit-stripped",
            "the magic's first byte lost its high bit (a 7-bit transfer)",
            patched(|b| b[0] = 0x09),
        ),
        invalid(BadMagic, "crlf-to-lf", "the magic's CR LF became LF (text-mode conversion)", {
            damaged(|b| {
                b.remove(4);
            })
        }),
        // R3
        invalid(
            UnsupportedVersion,
            "major-2",
            "a newer major version",
            patched(|b| header_mut(b).version_major = U16::new(2)),
        ),
        invalid(
            UnsupportedVersion,
            "damaged-and-unsound",
            "major 3 and descriptor_len 112, both set after the checksum was computed: the header is not a sound \
             1.x header (R6), so the header diagnosis of §12 cannot judge it and R3 stands, not R13",
            damaged(|b| {
                let h = header_mut(b);
                h.version_major = U16::new(3);
                h.descriptor_len = U32::new(112);
            }),
        ),
        // R4
        invalid(
            HeaderLength,
            "not-160-in-minor-0",
            "header_len 224 in a minor-0 file, everything else consistent",
            model(|r| r.header_len = 224),
        ),
        invalid(
            HeaderLength,
            "not-multiple-of-8",
            "header_len 164",
            model(|r| {
                r.minor = 1;
                r.header_len = 164
            }),
        ),
        // R5
        invalid(
            UnknownIncompatFlags,
            "bit0",
            "an incompatible flag no 1.0 reader implements",
            patched(|b| header_mut(b).incompat_flags = U64::new(1)),
        ),
        invalid(
            UnknownIncompatFlags,
            "damaged-and-cut-short",
            "incompat bit 17 set after the checksum was computed, and the file cut at 200 bytes, inside its table: \
             the input does not hold the checksummed region, so the header diagnosis of §12 cannot judge it and \
             R5 stands, not R8 or R13",
            damaged(|b| {
                header_mut(b).incompat_flags = U64::new(1 << 17);
                b.truncate(200);
            }),
        ),
        // R6
        invalid(
            DescriptorLength,
            "112",
            "descriptor_len 112",
            patched(|b| header_mut(b).descriptor_len = U32::new(112)),
        ),
        // R7
        invalid(
            ReservedNonZero,
            "header",
            "a reserved header byte set",
            patched(|b| header_mut(b).reserved[3] = 1),
        ),
        // R8
        invalid(
            Truncated,
            "last-byte",
            "the container minus its last byte",
            damaged(|b| {
                b.pop();
            }),
        ),
        invalid(
            Truncated,
            "header-len-past-end",
            "a minor-1 header claiming 4096 bytes in a 1.7 KB file",
            patched(|b| {
                let h = header_mut(b);
                h.version_minor = U16::new(1);
                h.header_len = U32::new(4096);
            }),
        ),
        // R9
        invalid(
            TrailingBytes,
            "one-byte",
            "one byte after the declared end (a polyglot trailer)",
            damaged(|b| b.push(0)),
        ),
    ]
}
