//! File names for entry names that came from an untrusted container.
//!
//! An entry name is any UTF-8 string: `../../etc/passwd`, `/abs`, `C:\x`, `NUL`, `a\0b`, a newline, a name that
//! differs from another only in case. None of that may reach the file system as a path. The file name of an
//! entry is therefore built, never taken: `{index}-{escaped name}{extension}`, where
//! - the index (zero-padded) makes names unique even on case-insensitive file systems and after escaping,
//!   and means a name can never be `.`, `..`, empty, or a reserved device name such as `CON` or `LPT1`;
//! - escaping keeps only `A-Z a-z 0-9 _ - .` and writes every other byte as `%XX`, so no separator (`/`, `\`),
//!   drive colon, NUL, control character or non-ASCII byte survives;
//! - the escaped part is cut to [`MAX_STEM`] bytes, so the whole name stays far below the 255-byte limit of
//!   common file systems.

use std::fmt::Write as _;

/// Longest escaped part of a file name, in bytes.
pub const MAX_STEM: usize = 96;

/// The file name of entry `index` (of `count`) named `name`, ending in `extension` (such as `.bin`).
#[must_use]
pub fn file_name(index: usize, count: usize, name: &str, extension: &str) -> String {
    let width = count.saturating_sub(1).to_string().len();
    let mut stem = String::new();
    for byte in name.bytes() {
        let piece_len = if is_kept(byte) { 1 } else { 3 };
        if stem.len() + piece_len > MAX_STEM {
            break;
        }
        if is_kept(byte) {
            stem.push(char::from(byte));
        } else {
            let _ = write!(stem, "%{byte:02X}");
        }
    }
    format!("{index:0width$}-{stem}{extension}")
}

fn is_kept(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_plain_component(name: &str) -> bool {
        !name.is_empty()
            && name != "."
            && name != ".."
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.%".contains(&b))
            && name.len() <= 255
    }

    #[test]
    fn hostile_names_become_plain_components() {
        let hostile = [
            "../../etc/passwd",
            "/etc/passwd",
            "..",
            ".",
            "a/b",
            "a\\b",
            "C:\\Windows",
            "con",
            "NUL",
            "LPT1.txt",
            "a\0b",
            "line\nbreak",
            "tab\there",
            "\u{7f}",
            "ünïcödé",
            "%2e%2e",
            " trailing space ",
            "trailing.dot.",
        ];
        for (i, name) in hostile.iter().enumerate() {
            let f = file_name(i, hostile.len(), name, ".bin");
            assert!(is_plain_component(&f), "{name:?} -> {f:?}");
            assert!(f.starts_with(&format!("{i:02}-")), "{f}");
            assert!(!f.contains('/') && !f.contains('\\') && !f.contains('\0') && !f.contains(':'));
        }
    }

    #[test]
    fn names_differing_in_case_or_escaping_get_distinct_files() {
        let a = file_name(0, 3, "W", ".bin");
        let b = file_name(1, 3, "w", ".bin");
        let c = file_name(2, 3, "%57", ".bin");
        assert_ne!(a.to_lowercase(), b.to_lowercase());
        assert_ne!(b, c);
    }

    #[test]
    fn long_names_are_cut_to_the_stem_limit() {
        let long = "x".repeat(1024);
        let f = file_name(7, 10, &long, ".bin");
        assert_eq!(f.len(), 2 + MAX_STEM + 4);
        let escaped = "/".repeat(1024);
        let g = file_name(7, 10, &escaped, ".bin");
        assert!(g.len() <= 2 + MAX_STEM + 4, "{}", g.len());
    }

    #[test]
    fn ordinary_names_stay_readable() {
        assert_eq!(
            file_name(3, 120, "layers.0.attn.q_proj.weight", ".bin"),
            "003-layers.0.attn.q_proj.weight.bin"
        );
    }
}
