//! Text from files made terminal-safe, and measured as a terminal shows it.
//!
//! A name or string in a file is untrusted: an ESC starts a control sequence, CR and BS overwrite what was
//! printed, LF forges a line, a bidi override reorders what follows. [`escape`] writes every such character
//! as an escape, with the spelling of Rust's `{:?}` (which error messages use): `\n`, `\r`, `\t`, `\0`, `\\` and
//! `\u{1b}` for the rest. Escaped are:
//! - `\` itself, so an escape in the output always means an escaped character;
//! - C0 controls (U+0000–U+001F), DEL (U+007F) and C1 controls (U+0080–U+009F);
//! - bidi controls: U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069;
//! - the line and paragraph separators U+2028 and U+2029;
//! - invisible characters: U+200B–U+200D, U+2060–U+2064, U+FEFF.
//!
//! Widths are display columns (`unicode-width`), never bytes or chars: `é` is one column, `漢` two.

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_width::UnicodeWidthChar;

/// The ellipsis that marks text cut to fit.
pub const ELLIPSIS: char = '…';

/// Whether `c` is written as an escape by [`escape`].
#[must_use]
pub fn is_escaped(c: char) -> bool {
    matches!(
        c,
        '\\' | '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
    )
}

/// `s` with every character [`is_escaped`] selects written as an escape; borrowed when there is none.
#[must_use]
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        c if is_escaped(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

/// `s` escaped as by [`escape`], with `"` escaped too, in double quotes: the form of a name inside a sentence.
/// For every string it equals Rust's `{:?}` on the characters [`is_escaped`] selects.
#[must_use]
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' {
            out.push_str("\\\"");
        } else {
            push_escaped(&mut out, c);
        }
    }
    out.push('"');
    out
}

/// Display columns of `s` (control characters count as zero; escape text first).
#[must_use]
pub fn width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `s` cut to at most `max` columns, ending in [`ELLIPSIS`] when it was cut.
#[must_use]
pub fn truncate(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    if max > 0 {
        out.push(ELLIPSIS);
    }
    Cow::Owned(out)
}

/// `s` cut to at most `max` columns by dropping its middle, which it replaces with [`ELLIPSIS`]: the start
/// and the end of a long name tell most (`transformer.h.1…attn.c_proj.weight`).
#[must_use]
pub fn truncate_middle(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    if max < 2 {
        return truncate(s, max);
    }
    let keep = max - 1;
    let head_budget = keep / 2;
    let tail_budget = keep - head_budget;
    let mut head = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > head_budget {
            break;
        }
        head.push(c);
        used += w;
    }
    let mut tail = Vec::new();
    let mut used_tail = 0;
    for c in s.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used_tail + w > tail_budget {
            break;
        }
        tail.push(c);
        used_tail += w;
    }
    head.push(ELLIPSIS);
    head.extend(tail.into_iter().rev());
    Cow::Owned(head)
}

/// `s` padded with spaces to `columns` on the right (`left`) or on the left.
#[must_use]
pub fn pad(s: &str, columns: usize, left: bool) -> String {
    let fill = " ".repeat(columns.saturating_sub(width(s)));
    if left {
        format!("{s}{fill}")
    } else {
        format!("{fill}{s}")
    }
}

/// `text` broken at spaces into lines of at most `max` columns; continuation lines start with `indent`.
/// A word longer than a line is cut with [`truncate`].
#[must_use]
pub fn wrap(text: &str, max: usize, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let candidate_width = width(&line) + usize::from(!line.is_empty()) + width(word);
        if !line.is_empty() && line.trim() != "" && candidate_width > max {
            lines.push(std::mem::take(&mut line));
            line.push_str(indent);
        } else if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines.into_iter().map(|l| truncate(&l, max).into_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_become_escapes_spelled_as_debug_spells_them() {
        let hostile = "a\u{1b}[2J\u{7}\r\u{8}\n\u{85}\u{9b}\u{7f}\u{202e}\u{2066}\u{200e}\u{61c}\\z";
        let e = escape(hostile);
        assert!(!e.chars().any(|c| is_escaped(c) && c != '\\'), "{e}");
        assert_eq!(
            e,
            "a\\u{1b}[2J\\u{7}\\r\\u{8}\\n\\u{85}\\u{9b}\\u{7f}\\u{202e}\\u{2066}\\u{200e}\\u{61c}\\\\z"
        );
        // The same spelling as `{:?}`, which error messages use.
        assert_eq!(quoted(hostile), format!("{hostile:?}"));
        assert_eq!(quoted("say \"hi\""), format!("{:?}", "say \"hi\""));
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        assert!(matches!(escape("layers.0.attn/q_proj — ünï 漢"), Cow::Borrowed(_)));
    }

    #[test]
    fn widths_are_columns_and_cuts_respect_them() {
        assert_eq!(width("漢字ab"), 6);
        assert_eq!(truncate("漢字漢字", 5), "漢字…");
        assert!(width(&truncate("漢字漢字", 5)) <= 5);
        let m = truncate_middle("transformer.h.10.attn.c_proj.weight", 20);
        assert_eq!(width(&m), 20);
        assert_eq!(m, "transform…roj.weight");
        assert_eq!(truncate_middle("short", 20), "short");
    }

    #[test]
    fn wrapping_keeps_every_line_within_the_limit() {
        let text = "layout: header 128 B (checksum 0x12345678), table 300 × 64 B, index 2400 B, names 9000 B";
        for line in wrap(text, 30, "  ") {
            assert!(width(&line) <= 30, "{line}");
        }
    }
}
