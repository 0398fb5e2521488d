//! The text of an error, from two static strings (`Rule::NAMES` and `Rule::DESCRIPTIONS`, made by the rule table)
//! and a hand-written number formatter. Nothing here builds `format_args!`: a firmware that prints messages (the C API's
//! `tpack_error_message`) then links neither `core::fmt`'s argument interpreter, its padding, the integer
//! `Display`s nor the 64-bit division they need, about 3 KiB of code on a Cortex-M4; and two packed strings hold
//! every rule's id and name, and description and context, where a `match` per column made a table of pointers
//! and lengths for each (2 KiB more).
//!
//! Rejected: keeping `write!` and trimming around it (the machinery comes with the first `{}`), and a
//! `Display`-free C message built in the C API (two copies of every wording, free to drift apart).

use core::ffi::CStr;
use core::fmt::{self, Write};

use super::{ErrorContext, Rule, SignedAttribute};

/// Ends each field of `Rule::NAMES` and `Rule::DESCRIPTIONS`.
const FIELD_END: u8 = 0;

/// Fields per rule in each string: in `Rule::NAMES` the id, then the name; in `Rule::DESCRIPTIONS` the
/// description, then the context template. A caller names the string itself, so that a firmware that reads
/// only names links only `Rule::NAMES`.
const FIELDS: usize = 2;
/// The id's place in `Rule::NAMES`.
pub(super) const ID: usize = 0;
/// The name's place in `Rule::NAMES`.
pub(super) const NAME: usize = 1;
/// The description's place in `Rule::DESCRIPTIONS`.
pub(super) const DESCRIPTION: usize = 0;
/// The context template's place in `Rule::DESCRIPTIONS`.
const TEMPLATE: usize = 1;

/// The digits of every base used, for [`write_digits`].
const DIGITS: &str = "0123456789abcdef";

/// The bytes of `texts` (`Rule::NAMES` or `Rule::DESCRIPTIONS`) from the field at `place` of the rule numbered
/// `number` on, starting with that field: `None` for a number that is no rule. A `const fn`, so that
/// [`Rule::id`], [`Rule::name`] and [`Rule::description`] read the same strings as the messages.
const fn from_field(texts: &'static str, number: u8, place: usize) -> Option<&'static [u8]> {
    // Records are in number order from 1 (checked at compile time where the table is made).
    let Some(before) = number.checked_sub(1) else { return None };
    #[allow(clippy::as_conversions)] // u8 to usize, lossless; `usize::from` is not a `const fn`
    let Some(skip) = (before as usize).checked_mul(FIELDS) else {
        return None;
    };
    let Some(mut skip) = skip.checked_add(place) else { return None };
    let mut rest = texts.as_bytes();
    while skip > 0 {
        // Past the next NUL.
        loop {
            match rest.split_first() {
                Some((&byte, tail)) => {
                    rest = tail;
                    if byte == FIELD_END {
                        break;
                    }
                }
                None => return None,
            }
        }
        skip = skip.saturating_sub(1);
    }
    if rest.is_empty() {
        None
    } else {
        Some(rest)
    }
}

/// The field at `place` of `texts` for the rule numbered `number`, without its NUL.
pub(super) const fn text(texts: &'static str, number: u8, place: usize) -> Option<&'static str> {
    let Some(rest) = from_field(texts, number, place) else { return None };
    let mut len = 0usize;
    let mut probe = rest;
    while let Some((&byte, tail)) = probe.split_first() {
        if byte == FIELD_END {
            break;
        }
        probe = tail;
        len = len.saturating_add(1);
    }
    // A field without its NUL is the end of a malformed table: not a field.
    if probe.is_empty() {
        return None;
    }
    match rest.split_at_checked(len) {
        Some((field, _)) => match core::str::from_utf8(field) {
            Ok(field) => Some(field),
            Err(_) => None,
        },
        None => None,
    }
}

/// The field at `place` of `Rule::NAMES` for the rule numbered `number`, NUL-terminated (`c""` for no rule,
/// which the callers' rules never are).
fn c_name_text(number: u8, place: usize) -> &'static CStr {
    from_field(Rule::NAMES, number, place)
        .and_then(|rest| CStr::from_bytes_until_nul(rest).ok())
        .unwrap_or(c"")
}

impl Rule {
    /// [`Rule::id`] as a NUL-terminated string, from the static text the messages are printed from: for a C
    /// binding, which hands out the pointer.
    #[must_use]
    pub fn id_c(self) -> &'static CStr {
        c_name_text(self.number(), ID)
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
        context.write_template(text(Rule::DESCRIPTIONS, self.number(), TEMPLATE).ok_or(fmt::Error)?, out)
    }

    /// Writes `"R13 HeaderChecksum: the header checksum does not match"`: the rule's id, name and description.
    ///
    /// # Errors
    /// When `out` fails.
    pub(super) fn write_summary<W: Write + ?Sized>(self, out: &mut W) -> fmt::Result {
        let number = self.number();
        for (texts, place, after) in
            [(Rule::NAMES, ID, " "), (Rule::NAMES, NAME, ": "), (Rule::DESCRIPTIONS, DESCRIPTION, "")]
        {
            out.write_str(text(texts, number, place).ok_or(fmt::Error)?)?;
            out.write_str(after)?;
        }
        Ok(())
    }
}

impl ErrorContext {
    /// Writes `template` with each `{slot}` replaced by that slot of this context: `entry`, `record`,
    /// `position`, `offset`, `value`, `depth` in decimal; `value:x` in hexadecimal after `0x`; `stored` and
    /// `computed` as `0x` and eight hexadecimal digits; `section` by its name; `inner` as the inner rule's id, name
    /// and description; `attribute` as the metadata key of the signed attribute numbered `value`. Every other
    /// byte is copied. For a binding's own messages in the crate's style, with no `core::fmt` arguments.
    ///
    /// # Errors
    /// `fmt::Error` when a placeholder is unknown, unclosed, or names a slot that is `None`, or when `out` fails:
    /// the text before it has been written then.
    pub fn write_template<W: Write + ?Sized>(&self, template: &str, out: &mut W) -> fmt::Result {
        pieces(template, &mut |piece| match piece {
            Piece::Text(text) => out.write_str(text),
            Piece::Slot(name) => self.write_slot(name, out),
        })
    }

    /// Writes placeholder `name`; `fmt::Error` when it is unknown or not set.
    fn write_slot<W: Write + ?Sized>(&self, name: &str, out: &mut W) -> fmt::Result {
        // A table and one comparison loop: a `match` on the strings compiled to a comparison per arm.
        let (_, which) = PLACEHOLDERS.iter().find(|(n, _)| *n == name).ok_or(fmt::Error)?;
        // (base, digits at least, value) of a number; texts and the inner rule are written at once.
        let (base, min_digits, n) = match which {
            Placeholder::Entry => (10, 1, self.entry.map(u64::from)),
            Placeholder::Record => (10, 1, self.record.map(u64::from)),
            Placeholder::Position => (10, 1, self.position.map(u64::from)),
            Placeholder::Offset => (10, 1, self.offset),
            Placeholder::Value => (10, 1, self.value),
            Placeholder::ValueHex => (16, 1, self.value),
            Placeholder::Depth => (10, 1, self.depth.map(u64::from)),
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
enum Placeholder {
    Entry,
    Record,
    Position,
    Offset,
    Value,
    ValueHex,
    Depth,
    Stored,
    Computed,
    Section,
    Inner,
    Attribute,
}

/// Every placeholder by its name in a template.
const PLACEHOLDERS: [(&str, Placeholder); 12] = [
    ("entry", Placeholder::Entry),
    ("record", Placeholder::Record),
    ("position", Placeholder::Position),
    ("offset", Placeholder::Offset),
    ("value", Placeholder::Value),
    ("value:x", Placeholder::ValueHex),
    ("depth", Placeholder::Depth),
    ("stored", Placeholder::Stored),
    ("computed", Placeholder::Computed),
    ("section", Placeholder::Section),
    ("inner", Placeholder::Inner),
    ("attribute", Placeholder::Attribute),
];

/// A part of a template: text to copy, or a placeholder's name (between the braces).
enum Piece<'a> {
    Text(&'a str),
    Slot(&'a str),
}

/// Hands `each` the pieces of `template` in order; stops at the first error. An unclosed `{` is an error.
fn pieces<'a>(template: &'a str, each: &mut impl FnMut(Piece<'a>) -> fmt::Result) -> fmt::Result {
    let mut rest = template;
    while let Some(open) = rest.bytes().position(|b| b == b'{') {
        each(Piece::Text(rest.get(..open).ok_or(fmt::Error)?))?;
        let after = rest.get(open.saturating_add(1)..).ok_or(fmt::Error)?;
        let close = after.bytes().position(|b| b == b'}').ok_or(fmt::Error)?;
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
            assert!(text(Rule::DESCRIPTIONS, rule.number(), TEMPLATE).is_some());
            let mut t = Text(std::string::String::new());
            rule.write_summary(&mut t).unwrap();
            assert_eq!(t.0, std::format!("{} {}: {}", rule.id(), rule.name(), rule.description()));
            assert_eq!(rule.id_c().to_str(), Ok(rule.id()));
            assert_eq!(rule.name_c().to_str(), Ok(rule.name()));
        }
        let past = u8::try_from(Rule::ALL.len() + 1).unwrap();
        for (texts, place) in [
            (Rule::NAMES, ID),
            (Rule::NAMES, NAME),
            (Rule::DESCRIPTIONS, DESCRIPTION),
            (Rule::DESCRIPTIONS, TEMPLATE),
        ] {
            assert!(text(texts, 0, place).is_none());
            assert!(text(texts, past, place).is_none());
        }
        assert_eq!(c_name_text(past, NAME), c"");
    }

    #[test]
    fn a_template_with_a_missing_or_unknown_slot_fails() {
        let context = ErrorContext { entry: Some(3), ..ErrorContext::default() };
        for (template, before) in [
            (" (entry {entry}: {value})", " (entry 3: "),
            (" ({nonsense})", " ("),
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
