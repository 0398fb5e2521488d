//! UTF-8 validation for the checks that only ask whether bytes are UTF-8 (R18, R43, R49, and the C API's name
//! and key arguments), without `core::str::from_utf8`: its validator and the 256-byte table of character widths
//! it reads are about 620 bytes of flash on a Cortex-M4, this loop 176. The reader keeps `from_utf8` where it
//! must hand out a `&str` (the crate forbids `unsafe` without `std`: [`Entry::name`](crate::Entry::name),
//! metadata keys and values), which a firmware that only verifies, decodes and prints messages does not link.

/// Whether `bytes` is well-formed UTF-8 (Unicode's table 3-7: no overlong form, no surrogate, nothing past
/// U+10FFFF), exactly what `core::str::from_utf8(bytes).is_ok()` says.
#[must_use]
pub fn is_valid(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some((&lead, tail)) = rest.split_first() {
        rest = tail;
        if lead < 0x80 {
            continue;
        }
        if !(0xc2..=0xf4).contains(&lead) {
            return false;
        }
        // The lead's high one bits count it and its continuation bytes (2 to 4, from the range above); the first
        // continuation byte's range is narrower after four leads (overlong forms, surrogates, past U+10FFFF).
        let more = usize::try_from(lead.leading_ones()).unwrap_or(usize::MAX).saturating_sub(1);
        let mut low = match lead {
            0xe0 => 0xa0,
            0xf0 => 0x90,
            _ => 0x80,
        };
        let mut high = match lead {
            0xed => 0x9f,
            0xf4 => 0x8f,
            _ => 0xbf,
        };
        let Some((continuation, tail)) = rest.split_at_checked(more) else { return false };
        for &byte in continuation {
            if byte < low || byte > high {
                return false;
            }
            (low, high) = (0x80, 0xbf);
        }
        rest = tail;
    }
    true
}

/// Whether byte `index` of `text`, valid UTF-8, starts a character (or is its end), as `str::is_char_boundary`
/// says.
pub(crate) fn is_boundary(text: &[u8], index: usize) -> bool {
    match text.get(index) {
        Some(&byte) => !(0x80..=0xbf).contains(&byte),
        None => index == text.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core_says(bytes: &[u8]) -> bool {
        core::str::from_utf8(bytes).is_ok()
    }

    #[test]
    fn every_sequence_of_one_and_two_bytes_as_core() {
        for a in 0..=255u8 {
            assert_eq!(is_valid(&[a]), core_says(&[a]), "{a:02x}");
            // Under Miri (which finds no unsafe code here to check), every 7th second byte: minutes otherwise.
            for b in (0..=255u8).step_by(if cfg!(miri) { 7 } else { 1 }) {
                assert_eq!(is_valid(&[a, b]), core_says(&[a, b]), "{a:02x} {b:02x}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "8 million sequences: hours under Miri, over no unsafe code; QEMU runs it")]
    fn every_sequence_of_three_bytes_from_a_non_ascii_lead_as_core() {
        for a in 0x80..=255u8 {
            for b in 0..=255u8 {
                for c in 0..=255u8 {
                    assert_eq!(is_valid(&[a, b, c]), core_says(&[a, b, c]), "{a:02x} {b:02x} {c:02x}");
                }
            }
        }
    }

    #[test]
    fn four_byte_sequences_and_their_neighbours_as_core() {
        // Every lead from 0xe0, with the second and third bytes over their edges and a fourth byte each way.
        let edges = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
        // Under Miri, every 5th lead (the module has no unsafe code; natively and under QEMU, all of them).
        for a in (0xe0..=255u8).step_by(if cfg!(miri) { 5 } else { 1 }) {
            for b in edges {
                for c in edges {
                    for d in edges {
                        let s = [a, b, c, d];
                        assert_eq!(is_valid(&s), core_says(&s), "{s:02x?}");
                        let t = [b'x', a, b, c, d, b'y'];
                        assert_eq!(is_valid(&t), core_says(&t), "{t:02x?}");
                    }
                }
            }
        }
        for text in ["", "tpack", "ünïcödé", "名前", "𝔘𝔫𝔦", "a\u{10ffff}b", "\u{d7ff}\u{e000}"]
        {
            assert!(is_valid(text.as_bytes()), "{text}");
            for i in 0..=text.len() + 1 {
                assert_eq!(is_boundary(text.as_bytes(), i), text.is_char_boundary(i), "{text} {i}");
            }
        }
    }
}
