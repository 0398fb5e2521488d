//! `Rule::MESSAGES` (every rule's summary, `"{name}: {what}"`, and context template) as the messages print it,
//! packed at compile time: first each `{slot}` placeholder becomes one byte (`FIRST_PLACEHOLDER` on, so that
//! printing looks for no braces and compares no names), then byte-pair encoding: each pair of `PAIRS` stands for
//! two bytes, each a plain byte, a placeholder or an earlier pair, and takes one byte that the text never holds
//! (above `0x7e`, or a control byte after the placeholders'). A firmware that prints messages keeps 2,225 B of
//! packed text and 292 B of pairs where the plain names, descriptions and templates are 5,604 B.
//! [`Rule::name`](super::Rule::name) and [`Rule::description`](super::Rule::description) still hand out plain
//! strings (a `const fn` returning `&'static str` cannot unpack; the C API hands out pointers into the names),
//! which a firmware that only prints messages then does not link.
//!
//! The pairs are chosen by the test `the_pairs_are_the_generators_choice` (greedy: the most frequent pair first)
//! and checked in; the text is packed from them in a `const fn`, from the one plain string, so that a message
//! edited in the rule table is packed as it is, whether or not the pairs suit it (they only decide how small it
//! gets; the test then fails and prints the new table). Rejected: choosing the pairs in a `const fn` too (about
//! 150 passes counting every pair of 5.6 KB: minutes of compile-time evaluation), and a packed copy of the text
//! checked in (a second copy of every message to keep in step). The word dictionary before (93 recurring words
//! as a byte each, with a table of where each starts) kept 2.4 KB for the descriptions and templates alone.

use core::fmt::{self, Write};

use super::message::{record_lengths, with_nul, Fields, FIELD_END, PLACEHOLDERS, PLACEHOLDER_NAMES};
use super::{ErrorContext, Rule};

/// The plain text packed: two fields per rule, each ending with a NUL.
const PLAIN: &[u8] = Rule::MESSAGES.as_bytes();

/// The pairs, two bytes each: pair `i` stands for `PAIRS[2 * i]` then `PAIRS[2 * i + 1]`, each a plain byte, a
/// placeholder's byte or the symbol of an earlier pair, and is written as [`symbol`]`(i)`. Generated from
/// [`PLAIN`] by `tests::choose_pairs`: when a rule text changes, `cargo test -p tpack --lib
/// the_pairs_are_the_generators_choice` fails and prints the table to paste here. (When a placeholder is added,
/// there is one symbol less and this table may no longer compile, "more pairs than symbols": empty it, run the
/// test, paste.)
#[rustfmt::skip]
const PAIRS: &[u8] = &[
    0x73, 0x20, 0x65, 0x20, 0x65, 0x6e, 0x3a, 0x20, 0x74, 0x68, 0x74, 0x20, 0x74, 0x61, 0x74, 0x72,
    0x64, 0x20, 0x20, 0x28, 0x65, 0x72, 0x6f, 0x72, 0x87, 0x79, 0x6e, 0x6f, 0x82, 0x8c, 0x84, 0x81,
    0x6f, 0x6e, 0x65, 0x63, 0x8d, 0x85, 0x69, 0x80, 0x83, 0x61, 0x6d, 0x65, 0x8e, 0x20, 0x69, 0x6e,
    0x74, 0x65, 0x69, 0x67, 0x61, 0x74, 0x89, 0x96, 0x99, 0x6e, 0x9b, 0x01, 0x61, 0x64, 0x94, 0x20,
    0x6e, 0x20, 0x69, 0x90, 0x72, 0x65, 0x61, 0x6c, 0x61, 0x86, 0x64, 0xa4, 0x6c, 0x6f, 0x86, 0xa5,
    0x8a, 0x20, 0x93, 0x92, 0x95, 0xa7, 0xaa, 0x20, 0x62, 0x79, 0x65, 0x80, 0x8b, 0x20, 0x65, 0x88,
    0x6f, 0x75, 0x72, 0x91, 0x83, 0x8f, 0xb1, 0x8b, 0x27, 0x80, 0x65, 0x79, 0x9d, 0x29, 0x64, 0x6f,
    0x68, 0x61, 0x6c, 0x61, 0x2c, 0x20, 0x61, 0x79, 0x73, 0x9c, 0x74, 0xa1, 0x67, 0x84, 0x74, 0x79,
    0x82, 0xbe, 0x9a, 0x75, 0xab, 0xb3, 0x61, 0x6e, 0x63, 0x68, 0x63, 0x6b, 0x65, 0x73, 0x65, 0x78,
    0xad, 0x92, 0xb7, 0xc8, 0x4d, 0x65, 0x6f, 0x66, 0x70, 0x65, 0x72, 0x81, 0x88, 0x02, 0x91, 0xbd,
    0x94, 0xa0, 0xca, 0x86, 0x05, 0x29, 0x20, 0xa9, 0x61, 0x20, 0x65, 0x9e, 0x89, 0xc2, 0x8e, 0xb4,
    0xbb, 0xa6, 0xce, 0x29, 0x20, 0xac, 0x61, 0xa0, 0x67, 0x65, 0x69, 0x6d, 0x6b, 0x8d, 0x6d, 0x9a,
    0x73, 0xa1, 0x74, 0x81, 0x76, 0x8a, 0x98, 0x73, 0x9d, 0x83, 0xd6, 0xd9, 0xde, 0x77, 0xdf, 0xc4,
    0x61, 0x95, 0x63, 0x6f, 0x63, 0x90, 0x68, 0xd5, 0x69, 0x74, 0x69, 0x84, 0x6b, 0xb5, 0x6e, 0xe6,
    0x6f, 0x6c, 0x73, 0x75, 0x73, 0xcf, 0x76, 0xa3, 0x97, 0x67, 0x98, 0x64, 0x98, 0x88, 0xb0, 0x6e,
    0xb9, 0x67, 0xcb, 0x20, 0xda, 0xe3, 0x4c, 0xc0, 0x6d, 0x70, 0x70, 0x6c, 0x70, 0x81, 0x70, 0xd8,
    0x86, 0x97, 0xac, 0xe1, 0xbc, 0xc1, 0xd0, 0xd7, 0xea, 0x0e, 0x05, 0xfa, 0x13, 0x29, 0x20, 0xc9,
    0x53, 0x9c, 0x61, 0x6d, 0x17, 0x81, 0x61, 0x85, 0x61, 0xc5, 0x64, 0x8a, 0x64, 0xbf, 0x64, 0xc7,
    0x65, 0x64, 0x69, 0x73,
];

/// How many pairs [`PAIRS`] holds.
const PAIR_COUNT: usize = PAIRS.len() / 2;

/// The byte that stands for the first placeholder of `PLACEHOLDER_NAMES` in packed text (`{entry}`); the
/// others follow. One byte, so that printing a message finds no braces and compares no names.
pub(super) const FIRST_PLACEHOLDER: u8 = 0x01;
/// The first control byte after the placeholders': the first of the low symbols.
#[allow(clippy::arithmetic_side_effects, clippy::as_conversions)] // 13 placeholders
const FIRST_LOW_SYMBOL: u8 = FIRST_PLACEHOLDER + PLACEHOLDERS.len() as u8;
/// Pairs with a symbol above `0x7e`: `0x80` to `0xff`.
const HIGH_SYMBOLS: usize = 128;
/// The most pairs there are symbols for: `0x80` to `0xff`, then the control bytes after the placeholders' to
/// `0x1f`.
#[allow(clippy::arithmetic_side_effects, clippy::as_conversions)] // at compile time only
const MAX_PAIRS: usize = HIGH_SYMBOLS + (0x20 - FIRST_LOW_SYMBOL as usize);

/// The byte that stands for pair `index` (below [`MAX_PAIRS`]).
#[allow(clippy::arithmetic_side_effects, clippy::as_conversions)] // index < MAX_PAIRS, checked where called
const fn symbol(index: usize) -> u8 {
    if index < HIGH_SYMBOLS {
        0x80 + index as u8
    } else {
        (index - HIGH_SYMBOLS) as u8 + FIRST_LOW_SYMBOL
    }
}

/// The pair `byte` stands for, `None` for a plain byte (or a symbol past the table, which the packed text never
/// holds).
fn pair_of(byte: u8) -> Option<(u8, u8)> {
    let index = match byte {
        0x80.. => usize::from(byte.wrapping_sub(0x80)),
        FIRST_LOW_SYMBOL..=0x1f => {
            usize::from(byte).wrapping_add(HIGH_SYMBOLS).wrapping_sub(usize::from(FIRST_LOW_SYMBOL))
        }
        _ => return None,
    };
    let at = index.checked_mul(2)?;
    Some((*PAIRS.get(at)?, *PAIRS.get(at.checked_add(1)?)?))
}

/// Whether `byte` may be in the plain text: printable ASCII, or the NUL that ends a field.
const fn is_plain(byte: u8) -> bool {
    byte == FIELD_END || (byte >= 0x20 && byte <= 0x7e)
}

/// Whether `byte` may be in the text the pairs pack: plain, or a placeholder's byte.
const fn is_coded(byte: u8) -> bool {
    is_plain(byte) || (byte >= FIRST_PLACEHOLDER && byte < FIRST_LOW_SYMBOL)
}

/// How deep the pairs nest: 1 for a pair of plain bytes. The unpacking stack holds one more byte.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // at compile time only
const DEPTH: usize = {
    assert!(PAIRS.len().is_multiple_of(2), "a pair table of odd length");
    assert!(PAIR_COUNT <= MAX_PAIRS, "more pairs than symbols");
    let mut depths = [0usize; MAX_PAIRS];
    let mut deepest = 0;
    let mut i = 0;
    while i < PAIR_COUNT {
        let mut depth = 0;
        let mut half = 0;
        while half < 2 {
            let byte = PAIRS[2 * i + half];
            let d = if byte != FIELD_END && is_coded(byte) {
                0
            } else {
                // An earlier pair's symbol.
                let mut j = 0;
                while j < i && symbol(j) != byte {
                    j += 1;
                }
                assert!(j < i, "a pair of a byte that is neither plain nor an earlier pair");
                depths[j]
            };
            if d > depth {
                depth = d;
            }
            half += 1;
        }
        depths[i] = depth + 1;
        if depths[i] > deepest {
            deepest = depths[i];
        }
        i += 1;
    }
    deepest
};

/// Room for the bytes still to expand while one symbol is unpacked.
const STACK: usize = DEPTH + 1;

/// `plain` (its first `N` bytes) with each `{name}` placeholder replaced by its byte ([`FIRST_PLACEHOLDER`] on),
/// and its length. Fails to compile when `plain` holds a byte that is not printable ASCII or a NUL, an unknown
/// placeholder, or an unclosed one.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::as_conversions)] // at compile time only
const fn code<const N: usize>(plain: &[u8]) -> ([u8; N], usize) {
    let mut out = [0u8; N];
    let (mut from, mut to) = (0, 0);
    while from < N {
        let byte = plain[from];
        assert!(is_plain(byte), "a text that is not printable ASCII");
        if byte != b'{' {
            out[to] = byte;
            (from, to) = (from + 1, to + 1);
            continue;
        }
        let mut close = from + 1;
        while close < N && plain[close] != b'}' {
            close += 1;
        }
        assert!(close < N, "an unclosed placeholder");
        out[to] = FIRST_PLACEHOLDER + placeholder_index(plain, from + 1, close) as u8;
        (from, to) = (close + 1, to + 1);
    }
    (out, to)
}

/// The place in `PLACEHOLDER_NAMES` of the name `plain[start..end]`. Fails to compile for an unknown name.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)] // at compile time only
const fn placeholder_index(plain: &[u8], start: usize, end: usize) -> usize {
    let (mut index, mut at) = (0, 0);
    while at < PLACEHOLDER_NAMES.len() {
        let mut len = 0;
        while PLACEHOLDER_NAMES[at + len] != FIELD_END {
            len += 1;
        }
        if len == end - start {
            let mut i = 0;
            while i < len && PLACEHOLDER_NAMES[at + i] == plain[start + i] {
                i += 1;
            }
            if i == len {
                return index;
            }
        }
        (index, at) = (index + 1, at + len + 1);
    }
    panic!("an unknown placeholder");
}

/// `plain` with its placeholders coded ([`code`]), then every pair replaced, in the pairs' order, and its
/// length.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // at compile time only
const fn pack<const N: usize>(plain: &[u8]) -> ([u8; N], usize) {
    let (mut text, mut len) = code::<N>(plain);
    let mut p = 0;
    while p < PAIR_COUNT {
        let (first, second, sym) = (PAIRS[2 * p], PAIRS[2 * p + 1], symbol(p));
        let (mut from, mut to) = (0, 0);
        while from < len {
            if from + 1 < len && text[from] == first && text[from + 1] == second {
                text[to] = sym;
                from += 2;
            } else {
                text[to] = text[from];
                from += 1;
            }
            to += 1;
        }
        len = to;
        p += 1;
    }
    (text, len)
}

/// `plain` (`N` bytes: printable ASCII, fields ended by NULs, `{slot}` placeholders as
/// [`ErrorContext::write_template`] takes them) packed with the pairs of the rule messages, and its packed
/// length: for a binding's own fixed texts in a firmware (the C API's result texts). Take the first that many
/// bytes with [`first`], and print a field with [`write_text`] or [`write_template`]. NULs stay as they are, so
/// the packed fields are found as the plain ones are. Fails to compile when `plain` holds another byte, or an
/// unknown or unclosed placeholder.
#[must_use]
pub const fn pack_text<const N: usize>(plain: &[u8]) -> ([u8; N], usize) {
    pack::<N>(plain)
}

/// The first `LEN` bytes of `bytes`.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // at compile time only
#[must_use]
pub const fn first<const N: usize, const LEN: usize>(bytes: &[u8; N]) -> [u8; LEN] {
    let mut out = [0u8; LEN];
    let mut i = 0;
    while i < LEN {
        out[i] = bytes[i];
        i += 1;
    }
    out
}

const PACKING: ([u8; PLAIN.len()], usize) = pack::<{ PLAIN.len() }>(PLAIN);
const PACKED_TEXT: [u8; PACKING.1] = first::<{ PLAIN.len() }, { PACKING.1 }>(&PACKING.0);
const PACKED_LENGTHS: [u8; Rule::ALL.len()] = record_lengths::<2, { Rule::ALL.len() }>(&PACKED_TEXT);

/// The packed `Rule::MESSAGES`, by record: the same records and fields, each field packed.
pub(super) const PACKED: Fields = Fields { texts: &PACKED_TEXT, lengths: &PACKED_LENGTHS };

/// The summary's place in a record: `"HeaderChecksum: the header checksum does not match"`.
pub(super) const SUMMARY: usize = 0;
/// The context template's place in a record: `" (stored {stored}, computed {computed})"`.
pub(super) const TEMPLATE: usize = 1;

/// The longest field of the plain text: the room [`unpack`] needs.
pub(super) const LONGEST: usize = longest_field(PLAIN);

/// The longest NUL-terminated field of `bytes`, without its NUL: the room [`write_text`] and [`write_template`]
/// need to unpack it.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // at compile time only
#[must_use]
pub const fn longest_field(bytes: &[u8]) -> usize {
    let (mut longest, mut len, mut i) = (0, 0, 0);
    while i < bytes.len() {
        if bytes[i] == FIELD_END {
            len = 0;
        } else {
            len += 1;
            if len > longest {
                longest = len;
            }
        }
        i += 1;
    }
    longest
}

/// The field at `place` ([`SUMMARY`] or [`TEMPLATE`]) of the rule numbered `number`, unpacked into `room`:
/// `None` for a number that is no rule.
pub(super) fn unpack(number: u8, place: usize, room: &mut [u8; LONGEST]) -> Option<&[u8]> {
    let (_, packed) = with_nul(&PACKED, number, place)?.split_last()?;
    unpack_text(packed, room)
}

/// Writes `packed`, a text that [`pack_text`] packed (one field, without its NUL), unpacking it in `room`.
///
/// # Errors
/// `fmt::Error` when it does not fit `room` ([`longest_field`] of the plain text does), or `out` fails.
pub fn write_text<W: Write + ?Sized>(packed: &[u8], room: &mut [u8], out: &mut W) -> fmt::Result {
    super::message::write_ascii(out, unpack_text(packed, room).ok_or(fmt::Error)?)
}

/// Writes `packed`, a template that [`pack_text`] packed (one field, without its NUL), unpacking it in `room`,
/// with `context`'s slots: [`ErrorContext::write_template`].
///
/// # Errors
/// As [`ErrorContext::write_template`], and `fmt::Error` when it does not fit `room`.
pub fn write_template<W: Write + ?Sized>(
    context: &ErrorContext,
    packed: &[u8],
    room: &mut [u8],
    out: &mut W,
) -> fmt::Result {
    context.write_coded_template(unpack_text(packed, room).ok_or(fmt::Error)?, out)
}

/// `packed`, a text that [`pack_text`] packed (without its NULs: one field), unpacked into `room`: `None` when
/// it does not fit, or `packed` was not made by [`pack_text`].
fn unpack_text<'r>(packed: &[u8], room: &'r mut [u8]) -> Option<&'r [u8]> {
    let mut len = 0usize;
    // The bytes still to expand, the next on top: a pair pushes its second byte, then its first.
    let mut stack = [0u8; STACK];
    for &byte in packed {
        *stack.first_mut()? = byte;
        let mut top = 1usize;
        while let Some(below) = top.checked_sub(1) {
            let next = *stack.get(below)?;
            match pair_of(next) {
                Some((first, second)) => {
                    *stack.get_mut(below)? = second;
                    *stack.get_mut(top)? = first;
                    top = top.checked_add(1)?;
                }
                None => {
                    *room.get_mut(len)? = next;
                    len = len.checked_add(1)?;
                    top = below;
                }
            }
        }
    }
    room.get(..len)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::collections::BTreeMap;
    use std::vec::Vec;

    use super::*;

    /// The pairs byte-pair encoding chooses for `plain`: greedily, the pair of bytes (plain or earlier pairs) that
    /// occurs most often (counted as the packing replaces them: left to right, without overlap; ties to the
    /// lowest pair), while a pair saves more than its two bytes in the table, up to [`MAX_PAIRS`]. Never a pair
    /// across a field's NUL.
    fn choose_pairs(plain: &[u8]) -> Vec<[u8; 2]> {
        let mut text = plain.to_vec();
        let mut pairs = Vec::new();
        while pairs.len() < MAX_PAIRS {
            // (count, where the last counted one ends) per pair.
            let mut counts: BTreeMap<[u8; 2], (usize, usize)> = BTreeMap::new();
            for (at, w) in text.windows(2).enumerate() {
                if w[0] == FIELD_END || w[1] == FIELD_END {
                    continue;
                }
                let (count, end) = counts.entry([w[0], w[1]]).or_insert((0, 0));
                if at >= *end {
                    *count += 1;
                    *end = at + 2;
                }
            }
            let mut best: Option<([u8; 2], usize)> = None;
            for (pair, (count, _)) in counts {
                if best.is_none_or(|(_, c)| count > c) {
                    best = Some((pair, count));
                }
            }
            let Some((pair, count)) = best else { break };
            if count < 3 {
                break;
            }
            let sym = symbol(pairs.len());
            pairs.push(pair);
            let mut packed = Vec::with_capacity(text.len());
            let mut from = 0;
            while from < text.len() {
                if text.get(from..from + 2) == Some(&pair[..]) {
                    packed.push(sym);
                    from += 2;
                } else {
                    packed.push(text[from]);
                    from += 1;
                }
            }
            text = packed;
        }
        pairs
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "the generator's search: tens of minutes under Miri, over no unsafe code; QEMU runs it"
    )]
    fn the_pairs_are_the_generators_choice() {
        let (coded, len) = code::<{ PLAIN.len() }>(PLAIN);
        let chosen = choose_pairs(&coded[..len]);
        let table: Vec<[u8; 2]> = PAIRS.chunks(2).map(|p| [p[0], p[1]]).collect();
        if chosen != table {
            let mut rows = std::string::String::new();
            for line in chosen.chunks(8) {
                rows.push_str("   ");
                for p in line {
                    rows.push_str(&std::format!(" 0x{:02x}, 0x{:02x},", p[0], p[1]));
                }
                rows.push('\n');
            }
            panic!("the rule texts changed: replace PAIRS in src/error/packed.rs with\n{rows}");
        }
    }

    /// `coded` with each placeholder's byte written back as `{name}`.
    fn uncode(coded: &[u8]) -> std::string::String {
        let names: Vec<&[u8]> = PLACEHOLDER_NAMES.split(|&b| b == FIELD_END).collect();
        let mut text = std::string::String::new();
        for &b in coded {
            match usize::from(b)
                .checked_sub(usize::from(FIRST_PLACEHOLDER))
                .filter(|&i| i < PLACEHOLDERS.len())
            {
                Some(i) => text.push_str(&std::format!("{{{}}}", std::str::from_utf8(names[i]).unwrap())),
                None => text.push(char::from(b)),
            }
        }
        text
    }

    #[test]
    fn placeholders_are_coded_and_the_rest_copied() {
        let (coded, len) = code::<25>(b"at {offset}: {value:x} }\0");
        assert_eq!(uncode(&coded[..len]), "at {offset}: {value:x} }\0");
        assert_eq!(len, 10);
        assert_eq!(coded[3], FIRST_PLACEHOLDER + 3);
        assert_eq!(coded[6], FIRST_PLACEHOLDER + 5);
    }

    #[test]
    fn every_field_unpacks_to_the_plain_text() {
        let mut room = [0u8; LONGEST];
        for &rule in Rule::ALL {
            let summary = std::format!("{}: {}", rule.name(), rule.description());
            assert_eq!(unpack(rule.number(), SUMMARY, &mut room), Some(summary.as_bytes()), "{rule:?}");
            let template = super::super::message::text(
                &super::super::message::DESCRIPTIONS,
                rule.number(),
                super::super::message::TEMPLATE,
            )
            .unwrap();
            assert_eq!(uncode(unpack(rule.number(), TEMPLATE, &mut room).unwrap()), template, "{rule:?}");
        }
        let past = u8::try_from(Rule::ALL.len() + 1).unwrap();
        assert_eq!(unpack(0, SUMMARY, &mut room), None);
        assert_eq!(unpack(past, TEMPLATE, &mut room), None);
    }

    #[test]
    fn packing_saves_what_the_pairs_cost() {
        // Each pair is worth its place: the packed text and the table under half the plain text (at the time of
        // writing 2,225 + 292 bytes of 5,604).
        assert!(PACKED_TEXT.len() + PAIRS.len() < PLAIN.len() / 2);
    }

    #[test]
    fn symbols_are_never_plain_bytes() {
        for index in 0..MAX_PAIRS {
            assert!(!is_coded(symbol(index)), "{index}");
        }
        let all: std::collections::BTreeSet<u8> = (0..MAX_PAIRS).map(symbol).collect();
        assert_eq!(all.len(), MAX_PAIRS);
    }
}
