//! Spec §12, payloads group (§6): R33–R36 entry by entry, and R37, which is listed here but checked in the
//! payload-integrity group.

use tpack::zerocopy::little_endian::U64;
use tpack::Rule::*;

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    vec![
        // R33
        invalid(
            PayloadBounds,
            "offset-wraps",
            "offset + length wraps u64",
            patched(|b| descriptor_mut(b, CODE).offset = U64::new(u64::MAX - 40)),
        ),
        invalid(
            PayloadBounds,
            "into-trailer",
            "a payload that runs into the trailer",
            patched(|b| {
                let (trailer, _) = section(b, 5);
                descriptor_mut(b, CODE).offset = U64::new(trailer as u64 - 50);
            }),
        ),
        invalid(
            PayloadBounds,
            "over-table",
            "a payload placed on top of the table",
            patched(|b| {
                let (table, _) = section(b, 0);
                descriptor_mut(b, CODE).offset = U64::new(table as u64);
            }),
        ),
        // R34
        invalid(
            PayloadOrder,
            "before-previous",
            "a payload that starts before the previous one",
            patched(|b| {
                let previous = descriptor(b, CODE - 1).offset.get();
                descriptor_mut(b, CODE).offset = U64::new(previous - 1);
            }),
        ),
        // R35
        invalid(
            PayloadOverlap,
            "inside-previous",
            "a payload that starts inside the previous one",
            patched(|b| {
                let previous = descriptor(b, CODE - 1).offset.get();
                descriptor_mut(b, CODE).offset = U64::new(previous + 1);
            }),
        ),
        // R36
        invalid(
            PaddingNotMinimal,
            "one-byte-gap",
            "a payload one byte later than the smallest aligned offset",
            offset_plus_one(CODE),
        ),
        invalid(
            PaddingNotMinimal,
            "no-entries-payload-bytes",
            "a container with no entries whose payload section holds 8 zero bytes: with no entries the \
             payload section ends where it starts",
            {
                let mut bytes = Raw::default().encode();
                let (payloads, _) = section(&bytes, 4);
                bytes.splice(payloads..payloads, [0; 8]);
                let h = header_mut(&mut bytes);
                h.sections[4].length = U64::new(8);
                h.sections[5].offset = U64::new(h.sections[5].offset.get() + 8);
                h.total_len = U64::new(h.total_len.get() + 8);
                fix(&mut bytes);
                bytes
            },
        ),
        // R37
        invalid(
            PaddingNonZero,
            "between-payloads",
            "a non-zero padding byte",
            patched(|b| {
                let end = payload_end(b, CODE);
                assert!(descriptor(b, CODE + 1).offset.get() as usize > end);
                b[end] = 0x55;
            }),
        ),
        invalid(
            PaddingNonZero,
            "nested",
            "a non-zero padding byte inside a nested container: reported as R37, not R39",
            {
                let mut inner = base().encode();
                let end = payload_end(&inner, CODE);
                inner[end] = 0x55;
                fix(&mut inner);
                of_entries(vec![container("sub", inner)])
            },
        ),
    ]
}

/// Where the payload of `entry` ends: in `base()`, the padding before the next entry starts there.
fn payload_end(bytes: &[u8], entry: usize) -> usize {
    let d = descriptor(bytes, entry);
    (d.offset.get() + d.length.get()) as usize
}
