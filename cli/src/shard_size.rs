//! `--max-shard-size SIZE`: a byte count written as Hugging Face's `max_shard_size` is (`500MB`, `2GB`), or
//! with a binary unit (`500MiB`, `1.5GiB`), or as plain bytes (`123`).

/// Units and their sizes in bytes: decimal as Hugging Face counts them (`5GB` is 5,000,000,000 bytes), binary
/// as IEC does. Longest first, so that `KiB` is not read as `B`.
const UNITS: [(&str, u64); 9] = [
    ("KIB", 1 << 10),
    ("MIB", 1 << 20),
    ("GIB", 1 << 30),
    ("TIB", 1 << 40),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("B", 1),
];

/// The largest number of digits after the decimal point that is read (a byte is the smallest unit anyway).
const MAX_FRACTION_DIGITS: usize = 12;

/// Parses a shard size: a number (digits, optionally with a fractional part) and an optional unit, `B`, `KB`,
/// `MB`, `GB`, `TB` (powers of 1000, as `huggingface_hub`'s `parse_size_to_int`) or `KiB`, `MiB`, `GiB`,
/// `TiB` (powers of 1024), in any case, with optional spaces between. A fraction of a byte is dropped, as
/// Hugging Face's `int(value * multiplier)` drops it: `1.5GiB` is 1610612736 bytes.
///
/// # Errors
/// A sentence for the user when `text` is not such a size, or is zero, or is more than 2^64 - 1 bytes.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let upper = trimmed.to_ascii_uppercase();
    let (number, multiplier) = UNITS
        .iter()
        .find_map(|&(unit, m)| upper.strip_suffix(unit).map(|n| (n.trim_end(), m)))
        .unwrap_or((upper.as_str(), 1));
    let invalid = || {
        format!(
            "{text:?} is not a size; write a number of bytes with an optional unit, like 500MB, 2GB (powers of \
             1000, as Hugging Face counts), 1.5GiB or 500MiB (powers of 1024)"
        )
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) {
        return Err(invalid());
    }
    let too_large = || format!("{text:?} is more than 2^64 - 1 bytes");
    let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| too_large())? };
    // The fraction in exact integer arithmetic: digits / 10^len, times the multiplier, rounded down.
    let fraction = fraction.get(..MAX_FRACTION_DIGITS.min(fraction.len())).unwrap_or_default();
    let scale = 10u128.pow(u32::try_from(fraction.len()).unwrap_or(0));
    let fraction: u128 = if fraction.is_empty() { 0 } else { fraction.parse().map_err(|_| invalid())? };
    let bytes = whole
        .checked_mul(u128::from(multiplier))
        .and_then(|w| w.checked_add(fraction * u128::from(multiplier) / scale))
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(too_large)?;
    if bytes == 0 {
        return Err(format!("{text:?} is zero bytes; a shard must be allowed at least one byte"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn decimal_units_are_powers_of_1000_as_hugging_face_counts() {
        for (text, bytes) in [
            ("123", 123),
            ("500MB", 500_000_000),
            ("2GB", 2_000_000_000),
            ("5gb", 5_000_000_000),
            ("10KB", 10_000),
            ("1TB", 1_000_000_000_000),
            (" 2 GB ", 2_000_000_000),
            ("64B", 64),
            ("0.5KB", 500),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn binary_units_are_powers_of_1024() {
        for (text, bytes) in [
            ("500MiB", 500 << 20),
            ("1.5GiB", 1_610_612_736),
            ("1KiB", 1024),
            ("2tib", 2 << 40),
            (".5MiB", 1 << 19),
            ("1.0000000001KiB", 1024),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn what_is_no_size_is_refused_in_words() {
        for text in ["", "MB", "1.2.3GB", "-5MB", "5XB", "1e9", "five", "0", "0.0GB", "0.0001B", "."] {
            let e = parse_size(text).unwrap_err();
            assert!(e.starts_with(&format!("{text:?} is")), "{text}: {e}");
        }
        assert!(parse_size("18446744073709551616").unwrap_err().contains("more than 2^64 - 1 bytes"));
        assert!(parse_size("20000000000TB").unwrap_err().contains("more than 2^64 - 1 bytes"));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
    }
}
