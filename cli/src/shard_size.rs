//! `--max-shard-size`: a size in bytes as people write it, with the units Hugging Face's `max_shard_size`
//! takes (decimal `KB`/`MB`/`GB`/`TB`, binary `KiB`/`MiB`/`GiB`/`TiB`).

/// Units, longest spelling first so that `MiB` is not read as `B`; matched without regard to case.
const UNITS: [(&str, u64); 9] = [
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("tb", 1_000_000_000_000),
    ("b", 1),
];

/// Digits after the decimal point that are read (more would only be rounded away).
const MAX_FRACTION_DIGITS: usize = 12;

/// The byte count `text` gives: `123`, `500MB`, `2GB`, `1.5GiB`, `500 MiB`. Decimal units are powers of
/// 1000 and binary ones powers of 1024, as in Hugging Face's `max_shard_size`; the case of the unit does not
/// matter; a fraction is rounded down to whole bytes.
///
/// # Errors
/// Why `text` is not such a size, in words: not a number, an unknown unit, zero, or past 2^64 - 1 bytes.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let (number, unit) = UNITS
        .iter()
        .find_map(|&(suffix, unit)| lower.strip_suffix(suffix).map(|n| (n.trim_end(), unit)))
        .unwrap_or((lower.as_str(), 1));
    let bad = || {
        format!(
            "{text:?} is not a size; give bytes (123), or a number with a unit: KB, MB, GB, TB (powers of 1000) \
             or KiB, MiB, GiB, TiB (powers of 1024), such as 2GB or 1.5GiB"
        )
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let too_large = || format!("{text:?} is more than 2^64 - 1 bytes");
    let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| too_large())? };
    let digits = fraction.get(..fraction.len().min(MAX_FRACTION_DIGITS)).unwrap_or("");
    let scale = 10u128.pow(u32::try_from(digits.len()).unwrap_or(0));
    let fraction: u128 = if digits.is_empty() { 0 } else { digits.parse().map_err(|_| bad())? };
    let bytes = whole
        .checked_mul(u128::from(unit))
        .and_then(|w| w.checked_add(fraction * u128::from(unit) / scale))
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(too_large)?;
    if bytes == 0 {
        return Err(format!("{text:?} is zero bytes; a shard holds at least one byte"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_read_as_hugging_face_reads_them() {
        for (text, bytes) in [
            ("123", 123),
            ("500MB", 500_000_000),
            ("2GB", 2_000_000_000),
            ("1.5GiB", 1_610_612_736),
            ("500MiB", 524_288_000),
            ("500 mib", 524_288_000),
            ("10kB", 10_000),
            ("1KiB", 1024),
            ("64B", 64),
            ("0.5KB", 500),
            (".5KiB", 512),
            ("1.0000000000001GB", 1_000_000_000),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn what_is_not_a_size_is_said_in_words() {
        for text in ["", "GB", "1.2.3GB", "-1", "2 gigabytes", "1e9", "0x10", "."] {
            let e = parse_size(text).unwrap_err();
            assert!(e.contains("is not a size") && e.contains("1.5GiB"), "{text}: {e}");
        }
        assert!(parse_size("0").unwrap_err().contains("zero bytes"));
        assert!(parse_size("0.0001KB").unwrap_err().contains("zero bytes"));
        assert!(parse_size("18446744073709551616").unwrap_err().contains("more than 2^64 - 1"));
        assert!(parse_size("99999999999TiB").unwrap_err().contains("more than 2^64 - 1"));
    }
}
