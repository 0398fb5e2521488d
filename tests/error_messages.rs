//! Every rule's message, pinned: `Error`'s `Display` (which the C API's `tpack_error_message` shares) must print
//! exactly the text recorded in `tests/data/error-messages.txt`, for every rule and a spread of context values
//! (small numbers, all ones, each section, each signed attribute, nested depths). The file was written by the
//! `format!`-based `Display` this crate had before its messages became a static table with a hand-written number
//! formatter, so a change of wording, spacing or number format fails here. `TPACK_BLESS=1` rewrites the file
//! (for a deliberate change of wording, to be reviewed in the diff).

use tpack::format::Section;
use tpack::{Error, ErrorContext, Rule};

/// The contexts every rule is printed with: slot values chosen to reach every number width and format.
fn contexts() -> Vec<ErrorContext> {
    let values = [0, 5, 7, 255, 65_535, 4_294_967_295, 10_000_000_000, 12_345_678_901_234_567_890, u64::MAX];
    let checksums = [0, 8, 0xdead_beef, u32::MAX];
    let inner = [Rule::NameUtf8, Rule::EntryChecksum, Rule::TooShort, Rule::EntryDigest];
    (0..values.len())
        .map(|i| {
            let small = u32::try_from(i).expect("small");
            ErrorContext {
                entry: Some(small.wrapping_mul(1_000_003)),
                record: Some(small.wrapping_mul(77)),
                position: Some(small.wrapping_add(5)),
                offset: Some(values[(i + 3) % values.len()]),
                section: Some(Section::ALL[i % Section::ALL.len()]),
                value: Some(values[i]),
                stored: Some(checksums[i % checksums.len()]),
                computed: Some(checksums[(i + 1) % checksums.len()]),
                depth: Some(u8::try_from(i % 9).expect("small")),
                inner_rule: Some(inner[i % inner.len()]),
            }
        })
        .collect()
}

/// One line per (rule, context) whose context fits the rule's error: the rule, the context's number, the text.
fn messages() -> String {
    let mut out = String::new();
    for &rule in Rule::ALL {
        for (i, context) in contexts().iter().enumerate() {
            if let Some(error) = Error::from_context(rule, context) {
                out.push_str(&format!("{} {i}: {error}\n", rule.id()));
            }
        }
    }
    out
}

#[test]
fn every_rule_prints_its_recorded_message() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/error-messages.txt");
    let printed = messages();
    if std::env::var_os("TPACK_BLESS").is_some() {
        std::fs::write(path, &printed).expect("write");
    }
    let recorded = std::fs::read_to_string(path).expect("tests/data/error-messages.txt");
    for (line, (p, r)) in printed.lines().zip(recorded.lines()).enumerate() {
        assert_eq!(p, r, "line {}", line + 1);
    }
    assert_eq!(printed.lines().count(), recorded.lines().count());
    // Every rule is printed at least once (with the small context), so none is left unpinned.
    assert!(Rule::ALL
        .iter()
        .all(|r| printed.contains(&format!("\n{} ", r.id())) || printed.starts_with(r.id())));
}

#[test]
fn rule_display_is_id_and_name() {
    assert_eq!(Rule::HeaderChecksum.to_string(), "R13 HeaderChecksum");
    assert_eq!(Rule::EntryDigest.to_string(), "R64 EntryDigest");
}
