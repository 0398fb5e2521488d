//! The text of an error, from static strings (`Rule::IDS`, `Rule::NAMES`, `Rule::DESCRIPTIONS`, made by the
//! rule table) and a hand-written number formatter. Nothing here builds `format_args!`: a firmware that prints
//! messages (the C API's `tpack_error_message`) then links neither `core::fmt`'s argument interpreter, its
//! padding, the integer `Display`s nor the 64-bit division they need, about 3 KiB of code on a Cortex-M4; and
//! packed strings hold every rule's id, name, description and context, where a `match` per column made a table
//! of pointers and lengths for each (2 KiB more).
//!
//! The names, descriptions and templates are printed from their packed copy (`packed.rs`: byte-pair encoding,
//! 5.5 KB of text in about 2.0 KB), and the id from the rule's number (the ids, 256 B, stay for `Rule::id`
//! alone); the plain `Rule::NAMES` and `Rule::DESCRIPTIONS` stay for `Rule::name` and `Rule::description` (the C
//! API hands out pointers into the names), which a firmware that only prints messages does not link.
//!
//! Rejected: keeping `write!` and trimming around it (the machinery comes with the first `{}`), and a
//! `Display`-free C message built in the C API (two copies of every wording, free to drift apart).

use core::ffi::CStr;
use core::fmt::{self, Write};

use super::packed::{self, unpack, LONGEST};
use super::{ErrorContext, Rule, SignedAttribute};

/// Ends each field of `Rule::NAMES` and `Rule::DESCRIPTIONS`.
pub(super) const FIELD_END: u8 = 0;

/// Fields per rule in `Rule::DESCRIPTIONS`: the description, then the context template. `Rule::NAMES` has one,
/// the name. A caller names the string itself, so that a firmware that reads only names links only
/// `Rule::NAMES`; the ids are apart ([`IDS`]), so that one that prints messages, which write the id from the
/// number, does not link them.
const FIELDS: usize = 2;
/// The name's place in `Rule::NAMES`.
pub(super) const NAME: usize = 0;
/// The description's place in `Rule::DESCRIPTIONS`.
pub(super) const DESCRIPTION: usize = 0;
/// The context template's place in `Rule::DESCRIPTIONS`.
#[cfg(test)]
pub(super) const TEMPLATE: usize = 1;

/// What follows the message of R37 or R50 found inside a nested container.
const NESTED: &str = ", in the container at depth {depth} inside entry {outer_entry}";
/// [`NESTED`] packed, as the messages print it.
const NESTED_PACKING: ([u8; NESTED.len()], usize) = packed::pack_text::<{ NESTED.len() }>(NESTED.as_bytes());
const NESTED_PACKED: [u8; NESTED_PACKING.1] =
    packed::first::<{ NESTED.len() }, { NESTED_PACKING.1 }>(&NESTED_PACKING.0);

/// The digits of every base used, for [`write_digits`].
const DIGITS: &str = "0123456789abcdef";

/// One of the strings of records, `Rule::NAMES`, `Rule::DESCRIPTIONS` or the packed messages, with each rule's
/// record's length: a record is found by adding the lengths before it, and only its own fields are scanned, so
/// that [`Rule::id`] and the messages cost about the same for R1 as for the last rule. (A scan from the start
/// read up to 4.7 KB per call, which made every test that prints or compares rule ids several times slower under
/// Miri.) A length per record rather than a start per field: a byte per rule and string (64 B each on a
/// Cortex-M4; a `u16` start per record was twice that) for a sum of at most 63 bytes and a scan of one record.
pub(super) struct Fields {
    /// The records, a fixed number of fields each, every field ending with a NUL.
    pub(super) texts: &'static [u8],
    /// Each record's length in `texts`, in number order: the record of rule `n` follows the `n - 1` before.
    pub(super) lengths: &'static [u8],
}

/// How many records each string holds, and so the length of their tables but one.
const RECORDS: usize = Rule::ALL.len();

/// `Rule::NAMES` by record.
pub(super) const NAMES: Fields = Fields { texts: Rule::NAMES.as_bytes(), lengths: &NAME_LENGTHS };
const NAME_LENGTHS: [u8; RECORDS] = record_lengths::<1, RECORDS>(Rule::NAMES.as_bytes());

/// Bytes per id in [`IDS`]: `"R64"` and a NUL.
const ID_WIDTH: usize = 4;

/// Every rule's id from `Rule::IDS`, each NUL-terminated and padded with NULs to [`ID_WIDTH`] bytes, in number
/// order: found by the number alone, without a table of where each starts.
const IDS: &[u8; ID_WIDTH * RECORDS] = &fixed_width(Rule::IDS.as_bytes());

/// `ids`, NUL-terminated fields, each in [`ID_WIDTH`] bytes. Fails to compile when `ids` does not hold exactly
/// `LEN / ID_WIDTH` fields, or one does not fit with its NUL.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // at compile time only
const fn fixed_width<const LEN: usize>(ids: &[u8]) -> [u8; LEN] {
    let mut out = [FIELD_END; LEN];
    let (mut field, mut len, mut i) = (0, 0, 0);
    while i < ids.len() {
        if ids[i] == FIELD_END {
            field += 1;
            len = 0;
        } else {
            assert!(len + 1 < ID_WIDTH, "a rule id too long for its slot");
            out[field * ID_WIDTH + len] = ids[i];
            len += 1;
        }
        i += 1;
    }
    assert!(field * ID_WIDTH == LEN, "a rule id table with another count than the rules");
    out
}

/// The id of the rule numbered `number`, up to and with its NUL: `None` for a number that is no rule.
pub(super) const fn id_with_nul(number: u8) -> Option<&'static [u8]> {
    let Some(before) = number.checked_sub(1) else { return None };
    #[allow(clippy::as_conversions)] // u8 to usize, lossless; `usize::from` is not a `const fn`
    let Some(at) = (before as usize).checked_mul(ID_WIDTH) else {
        return None;
    };
    let Some((_, rest)) = IDS.split_at_checked(at) else { return None };
    let mut probe = match rest.split_at_checked(ID_WIDTH) {
        Some((slot, _)) => slot,
        None => return None,
    };
    let mut len = 0usize;
    while let Some((&byte, tail)) = probe.split_first() {
        len = len.saturating_add(1);
        if byte == FIELD_END {
            return match rest.split_at_checked(len) {
                Some((id, _)) => Some(id),
                None => None,
            };
        }
        probe = tail;
    }
    None
}

/// The id of the rule numbered `number`, without its NUL.
pub(super) const fn id_text(number: u8) -> Option<&'static str> {
    let Some(id) = id_with_nul(number) else { return None };
    let Some((_, id)) = id.split_last() else { return None };
    match core::str::from_utf8(id) {
        Ok(id) => Some(id),
        Err(_) => None,
    }
}

/// `Rule::DESCRIPTIONS` by record.
pub(super) const DESCRIPTIONS: Fields =
    Fields { texts: Rule::DESCRIPTIONS.as_bytes(), lengths: &DESCRIPTION_LENGTHS };
const DESCRIPTION_LENGTHS: [u8; RECORDS] = record_lengths::<FIELDS, RECORDS>(Rule::DESCRIPTIONS.as_bytes());

/// The length of each record of `PER` NUL-terminated fields of `bytes`. Fails to compile when `bytes` does not
/// hold exactly `LEN` records, ends in a field without its NUL, or has a record longer than 255 bytes.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::as_conversions)] // at compile time only
pub(super) const fn record_lengths<const PER: usize, const LEN: usize>(bytes: &[u8]) -> [u8; LEN] {
    let mut lengths = [0u8; LEN];
    let (mut fields, mut start, mut i) = (0, 0, 0);
    while i < bytes.len() {
        if bytes[i] == FIELD_END {
            fields += 1;
            if fields % PER == 0 {
                let record = fields / PER - 1;
                assert!(record < LEN, "a rule text table with more records than rules");
                assert!(i + 1 - start <= u8::MAX as usize, "a rule's texts longer than 255 bytes");
                lengths[record] = (i + 1 - start) as u8;
                start = i + 1;
            }
        }
        i += 1;
    }
    assert!(fields == LEN * PER, "a rule text table with fewer fields than its rules need");
    assert!(start == bytes.len(), "a rule text table ends in a field without its NUL");
    lengths
}

/// The field at `place` of the rule numbered `number`, with its NUL: `None` for a number that is no rule.
pub(super) const fn with_nul(fields: &Fields, number: u8, place: usize) -> Option<&'static [u8]> {
    // Records are in number order from 1 (checked at compile time where the table is made).
    let Some(before) = number.checked_sub(1) else { return None };
    #[allow(clippy::as_conversions)] // u8 to usize, lossless; `usize::from` is not a `const fn`
    let before = before as usize;
    let Some((earlier, [length, ..])) = fields.lengths.split_at_checked(before) else { return None };
    let mut start = 0usize;
    let mut rest = earlier;
    while let Some((&len, tail)) = rest.split_first() {
        #[allow(clippy::as_conversions)] // u8 to usize, lossless; `usize::from` is not a `const fn`
        let len = len as usize;
        start = start.saturating_add(len);
        rest = tail;
    }
    #[allow(clippy::as_conversions)] // u8 to usize, lossless
    let end = start.saturating_add(*length as usize);
    let Some((record, _)) = fields.texts.split_at_checked(end) else { return None };
    let Some((_, mut field)) = record.split_at_checked(start) else { return None };
    // Past `place` fields of the record, then up to the next NUL.
    let mut skip = place;
    let mut probe = field;
    let mut len = 0usize;
    while let Some((&byte, tail)) = probe.split_first() {
        probe = tail;
        len = len.saturating_add(1);
        if byte == FIELD_END {
            if skip == 0 {
                return match field.split_at_checked(len) {
                    Some((field, _)) => Some(field),
                    None => None,
                };
            }
            skip = skip.saturating_sub(1);
            field = probe;
            len = 0;
        }
    }
    None
}

/// The field at `place` of `fields` for the rule numbered `number`, without its NUL.
pub(super) const fn text(fields: &Fields, number: u8, place: usize) -> Option<&'static str> {
    let Some(field) = with_nul(fields, number, place) else { return None };
    let Some((_, field)) = field.split_last() else { return None };
    match core::str::from_utf8(field) {
        Ok(field) => Some(field),
        Err(_) => None,
    }
}

/// The field at `place` of `Rule::NAMES` for the rule numbered `number`, NUL-terminated (`c""` for no rule,
/// which the callers' rules never are).
fn c_name_text(number: u8, place: usize) -> &'static CStr {
    with_nul(&NAMES, number, place).and_then(|field| CStr::from_bytes_with_nul(field).ok()).unwrap_or(c"")
}

impl Rule {
    /// [`Rule::id`] as a NUL-terminated string, from the static text the messages are printed from: for a C
    /// binding, which hands out the pointer.
    #[must_use]
    pub fn id_c(self) -> &'static CStr {
        id_with_nul(self.number()).and_then(|id| CStr::from_bytes_with_nul(id).ok()).unwrap_or(c"")
    }

    /// [`Rule::name`] as a NUL-terminated string, from the static text the messages are printed from: for a C
    /// binding, which hands out the pointer.
    #[must_use]
    pub fn name_c(self) -> &'static CStr {
        c_name_text(self.number(), NAME)
    }

    /// Writes this rule's message at `context`: `"R13 HeaderChecksum: the header checksum does not match (stored
    /// 0x1a2b3c4d, computed 0x00000000)"`, what [`Error`](super::Error)'s `Display` prints. A binding that keeps
    /// an error as plain fields prints the crate's own text with it, without rebuilding the [`Error`](super::Error).
    ///
    /// # Errors
    /// `fmt::Error` when `context` lacks a slot the message prints (a `None`, or a `value` that is no signed
    /// attribute for R56; never for an [`Error`](super::Error)'s own context), or when `out` fails: part of the
    /// message may have been written then.
    pub fn write_message<W: Write + ?Sized>(self, context: &ErrorContext, out: &mut W) -> fmt::Result {
        // No check before writing: a firmware's caller discards a failed message (the C API does), and the check
        // would cost the code of a second pass.
        self.write_summary(out)?;
        let mut room = [0u8; LONGEST];
        context.write_coded_template(
            unpack(self.number(), packed::TEMPLATE, &mut room).ok_or(fmt::Error)?,
            out,
        )?;
        // Where in the nesting, for an integrity error found inside a nested container (R39's template says it).
        match (self, context.depth) {
            (Rule::PaddingNonZero | Rule::EntryChecksum, Some(1..)) => {
                packed::write_template(context, &NESTED_PACKED, &mut room, out)
            }
            _ => Ok(()),
        }
    }

    /// Writes `"R13 HeaderChecksum: the header checksum does not match"`: the rule's id, name and description.
    ///
    /// # Errors
    /// When `out` fails.
    pub(super) fn write_summary<W: Write + ?Sized>(self, out: &mut W) -> fmt::Result {
        let number = self.number();
        // The id from the number ("R" and its digits, as the ids are written: checked by the tests), so that the
        // messages do not link the ids; the name and description from their packed copy, so that they do not
        // link the plain names.
        out.write_str("R")?;
        write_digits(out, u64::from(number), 10, 1)?;
        out.write_str(" ")?;
        let mut room = [0u8; LONGEST];
        write_ascii(out, unpack(number, packed::SUMMARY, &mut room).ok_or(fmt::Error)?)
    }
}

impl ErrorContext {
    /// Writes `template` with each `{slot}` replaced by that slot of this context: `entry`, `record`,
    /// `position`, `offset`, `value`, `depth`, `outer_entry` in decimal; `value:x` in hexadecimal after `0x`; `stored` and
    /// `computed` as `0x` and eight hexadecimal digits; `section` by its name; `inner` as the inner rule's id, name
    /// and description; `attribute` as the metadata key of the signed attribute numbered `value`. Every other
    /// byte is copied. For a binding's own messages in the crate's style, with no `core::fmt` arguments.
    ///
    /// # Errors
    /// `fmt::Error` when a placeholder is unknown, unclosed, or names a slot that is `None`, or when `out` fails:
    /// the text before it has been written then.
    pub fn write_template<W: Write + ?Sized>(&self, template: &str, out: &mut W) -> fmt::Result {
        // A piece of a `&str` cut at ASCII braces is UTF-8: `from_utf8` only gives it back as a `&str` (the
        // messages of this crate go through `write_ascii_template`, which does not link it).
        pieces(template.as_bytes(), &mut |piece| match piece {
            Piece::Text(text) => out.write_str(core::str::from_utf8(text).map_err(|_| fmt::Error)?),
            Piece::Slot(name) => {
                // A table and one comparison loop: a `match` on the strings compiled to a comparison per arm.
                let at = PLACEHOLDER_NAMES.split(|&b| b == FIELD_END).position(|n| n == name);
                self.write_slot(*at.and_then(|at| PLACEHOLDERS.get(at)).ok_or(fmt::Error)?, out)
            }
        })
    }

    /// [`ErrorContext::write_template`] of a packed message's template, unpacked: printable ASCII written by
    /// [`write_ascii`] (so that the messages link no UTF-8 validation), and each placeholder as the one byte
    /// the packing gave it (`packed::FIRST_PLACEHOLDER` on, in the order of [`PLACEHOLDERS`]), so that they
    /// look for no braces and compare no names.
    pub(super) fn write_coded_template<W: Write + ?Sized>(
        &self,
        template: &[u8],
        out: &mut W,
    ) -> fmt::Result {
        for byte in template {
            let slot = usize::from(byte.wrapping_sub(packed::FIRST_PLACEHOLDER));
            match PLACEHOLDERS.get(slot) {
                Some(&which) => self.write_slot(which, out)?,
                None => write_ascii(out, core::slice::from_ref(byte))?,
            }
        }
        Ok(())
    }

    /// Writes placeholder `which`; `fmt::Error` when it is not set.
    fn write_slot<W: Write + ?Sized>(&self, which: Placeholder, out: &mut W) -> fmt::Result {
        // (base, digits at least, value) of a number; texts and the inner rule are written at once.
        let (base, min_digits, n) = match which {
            Placeholder::Entry => (10, 1, self.entry.map(u64::from)),
            Placeholder::Record => (10, 1, self.record.map(u64::from)),
            Placeholder::Position => (10, 1, self.position.map(u64::from)),
            Placeholder::Offset => (10, 1, self.offset),
            Placeholder::Value => (10, 1, self.value),
            Placeholder::ValueHex => (16, 1, self.value),
            Placeholder::Depth => (10, 1, self.depth.map(u64::from)),
            Placeholder::OuterEntry => (10, 1, self.outer_entry.map(u64::from)),
            Placeholder::Stored => (16, 8, self.stored.map(u64::from)),
            Placeholder::Computed => (16, 8, self.computed.map(u64::from)),
            Placeholder::Section => return out.write_str(self.section.ok_or(fmt::Error)?.name()),
            Placeholder::Inner => return self.inner_rule.ok_or(fmt::Error)?.write_summary(out),
            Placeholder::Attribute => {
                let attribute =
                    SignedAttribute::try_from(self.value.ok_or(fmt::Error)?).map_err(|()| fmt::Error)?;
                return out.write_str(attribute.key().unwrap_or("an undefined tpack.sig. key"));
            }
        };
        let n = n.ok_or(fmt::Error)?;
        if base == 16 {
            out.write_str("0x")?;
        }
        write_digits(out, n, base, min_digits)
    }
}

/// What a placeholder prints (see [`ErrorContext::write_template`]).
#[derive(Clone, Copy)]
pub(super) enum Placeholder {
    Entry,
    Record,
    Position,
    Offset,
    Value,
    ValueHex,
    Depth,
    OuterEntry,
    Stored,
    Computed,
    Section,
    Inner,
    Attribute,
}

/// Every placeholder's name in a template, each ending with a NUL, in the order of [`PLACEHOLDERS`]: one string
/// rather than a pointer and length per name.
pub(super) const PLACEHOLDER_NAMES: &[u8] = concat!(
    "entry\0record\0position\0offset\0value\0value:x\0depth\0outer_entry\0",
    "stored\0computed\0section\0inner\0attribute\0",
)
.as_bytes();

/// Every placeholder, in the order of [`PLACEHOLDER_NAMES`].
pub(super) const PLACEHOLDERS: [Placeholder; 13] = [
    Placeholder::Entry,
    Placeholder::Record,
    Placeholder::Position,
    Placeholder::Offset,
    Placeholder::Value,
    Placeholder::ValueHex,
    Placeholder::Depth,
    Placeholder::OuterEntry,
    Placeholder::Stored,
    Placeholder::Computed,
    Placeholder::Section,
    Placeholder::Inner,
    Placeholder::Attribute,
];

/// A part of a template: text to copy, or a placeholder's name (between the braces).
enum Piece<'a> {
    Text(&'a [u8]),
    Slot(&'a [u8]),
}

/// Writes `text`, printable ASCII (as every unpacked message is, but for its placeholders' bytes), a character
/// at a time: making a `&str` of the bytes would link `core::str::from_utf8` (620 bytes on a Cortex-M4, with its
/// table). `fmt::Error` for any other byte.
pub(super) fn write_ascii<W: Write + ?Sized>(out: &mut W, text: &[u8]) -> fmt::Result {
    for &byte in text {
        if !(b' '..=b'~').contains(&byte) {
            return Err(fmt::Error);
        }
        out.write_char(char::from(byte))?;
    }
    Ok(())
}

/// Hands `each` the pieces of `template` in order; stops at the first error. An unclosed `{` is an error.
fn pieces<'a>(template: &'a [u8], each: &mut impl FnMut(Piece<'a>) -> fmt::Result) -> fmt::Result {
    let mut rest = template;
    while let Some(open) = rest.iter().position(|&b| b == b'{') {
        each(Piece::Text(rest.get(..open).ok_or(fmt::Error)?))?;
        let after = rest.get(open.saturating_add(1)..).ok_or(fmt::Error)?;
        let close = after.iter().position(|&b| b == b'}').ok_or(fmt::Error)?;
        each(Piece::Slot(after.get(..close).ok_or(fmt::Error)?))?;
        rest = after.get(close.saturating_add(1)..).ok_or(fmt::Error)?;
    }
    if rest.is_empty() {
        Ok(())
    } else {
        each(Piece::Text(rest))
    }
}

/// Writes `n` in `base` (10 or 16, lower-case), with at least `min_digits` digits (zeros in front).
///
/// By long division in 16-bit steps with 32-bit arithmetic: a `u64` division would link the 64-bit division
/// routine (860 B on a Cortex-M4, which divides 32-bit numbers in hardware).
fn write_digits<W: Write + ?Sized>(out: &mut W, n: u64, base: u32, min_digits: usize) -> fmt::Result {
    // Most digits a u64 has: 20 in decimal.
    let mut digits = [0u8; 20];
    let mut count = 0usize;
    // Base-2^16 limbs, most significant first.
    let mut limbs = [48, 32, 16, 0].map(|shift| u32::try_from(n.wrapping_shr(shift) & 0xffff).unwrap_or(0));
    loop {
        let mut remainder = 0u32;
        for limb in &mut limbs {
            // remainder < base ≤ 16: below 2^20.
            let current = remainder.wrapping_shl(16) | *limb;
            *limb = current.checked_div(base).unwrap_or(0);
            remainder = current.checked_rem(base).unwrap_or(0);
        }
        if let Some(d) = digits.get_mut(count) {
            *d = u8::try_from(remainder).unwrap_or(0);
        }
        count = count.saturating_add(1);
        if limbs.iter().all(|l| *l == 0) && count >= min_digits {
            break;
        }
    }
    for d in digits.get(..count).unwrap_or(&[]).iter().rev() {
        let d = usize::from(*d);
        out.write_str(DIGITS.get(d..d.saturating_add(1)).unwrap_or("?"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    struct Text(std::string::String);

    impl Write for Text {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0.push_str(s);
            Ok(())
        }
    }

    fn digits(n: u64, base: u32, min: usize) -> std::string::String {
        let mut t = Text(std::string::String::new());
        write_digits(&mut t, n, base, min).unwrap();
        t.0
    }

    #[test]
    fn numbers_print_as_core_fmt_prints_them() {
        let mut n = 1u64;
        let mut samples =
            std::vec![0, 1, 9, 10, 99, 100, 65_535, 65_536, u64::from(u32::MAX), u64::MAX - 1, u64::MAX];
        for _ in 0..64 {
            samples.extend([n, n - 1, n + 1]);
            n = n.wrapping_mul(3).wrapping_add(7);
        }
        for s in samples {
            assert_eq!(digits(s, 10, 1), std::format!("{s}"));
            assert_eq!(digits(s, 16, 1), std::format!("{s:x}"));
            if let Ok(c) = u32::try_from(s) {
                assert_eq!(digits(s, 16, 8), std::format!("{c:08x}"));
            }
        }
    }

    #[test]
    fn every_rule_has_its_texts() {
        for &rule in Rule::ALL {
            // Against what does not come from the strings: the number, and the variant's name as `Debug` prints it.
            assert_eq!(rule.id(), std::format!("R{}", rule.number()));
            assert_eq!(rule.name(), std::format!("{rule:?}"));
            assert!(!rule.description().is_empty());
            assert!(text(&DESCRIPTIONS, rule.number(), TEMPLATE).is_some());
            let mut t = Text(std::string::String::new());
            rule.write_summary(&mut t).unwrap();
            assert_eq!(t.0, std::format!("{} {}: {}", rule.id(), rule.name(), rule.description()));
            assert_eq!(rule.id_c().to_str(), Ok(rule.id()));
            assert_eq!(rule.name_c().to_str(), Ok(rule.name()));
        }
        let past = u8::try_from(Rule::ALL.len() + 1).unwrap();
        for (texts, place) in [(&NAMES, NAME), (&DESCRIPTIONS, DESCRIPTION), (&DESCRIPTIONS, TEMPLATE)] {
            assert!(text(texts, 0, place).is_none());
            assert!(text(texts, past, place).is_none());
        }
        assert_eq!(c_name_text(past, NAME), c"");
        assert_eq!((id_text(0), id_text(past)), (None, None));
    }

    #[test]
    fn a_template_with_a_missing_or_unknown_slot_fails() {
        let context = ErrorContext { entry: Some(3), ..ErrorContext::default() };
        for (template, before) in [
            (" (entry {entry}: {value})", " (entry 3: "),
            (" ({nonsense})", " ("),
            // The empty name after the last NUL of the names is no placeholder either.
            (" ({})", " ("),
            (" (entry {entry", " (entry "),
            ("entry {entry}, {{ no", "entry 3, "),
        ] {
            let mut t = Text(std::string::String::new());
            assert!(context.write_template(template, &mut t).is_err(), "{template}");
            assert_eq!(t.0, before, "{template}");
        }
        let mut t = Text(std::string::String::new());
        context.write_template(" (entry {entry})", &mut t).unwrap();
        assert_eq!(t.0, " (entry 3)");
        let mut t = Text(std::string::String::new());
        assert!(Rule::EntryChecksum.write_message(&context, &mut t).is_err());
    }
}
