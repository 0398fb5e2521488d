//! The public API's promises that no spec rule states: one spelling per code, accessors that never return a
//! silently wrong number, `Debug` that never dumps payloads, `Display` in the spec's words, and verification
//! entry by entry.

mod support;

use std::path::Path;

use tpack::format::Packing;
use tpack::write::{Builder, EntryDecl, NewEntry};
use tpack::{Container, Dtype, Error, MetaType, MetaValue, Rule, ShapeError};

/// Whether a vector is worth its time here: under Miri (which is slow) the large ones are left to the native
/// run, as in tests/vectors.rs.
fn affordable(bytes: &[u8]) -> bool {
    !cfg!(miri) || bytes.len() <= 16 * 1024
}

fn vector(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The names of the vectors in `spec/vectors/<dir>` ("valid" or "invalid"), relative to `spec/vectors`, in
/// order. Listed rather than read from manifest.json, whose parsing alone takes most of a minute under Miri.
fn vectors_in(dir: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors").join(dir);
    let mut names: Vec<String> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".tpack"))
        .map(|name| format!("{dir}/{name}"))
        .collect();
    names.sort();
    names
}

/// Regression: `Dtype::Unknown(2)` was a second spelling of `F32` (unequal to it). A code now has one
/// spelling, whichever way it is made.
#[test]
fn every_code_has_one_spelling() {
    // Every code; under Miri (which is slow), the known ones and their neighbours.
    let last = if cfg!(miri) { 300 } else { u16::MAX };
    for code in 0..=last {
        let dtype = Dtype::from_code(code);
        assert_eq!(dtype.code(), code);
        assert_eq!(dtype.is_known(), Dtype::ALL.contains(&dtype), "code {code}");
        // The version table and the dtype table agree: a code is defined in some minor iff it is known.
        assert_eq!(dtype.since_minor().is_some(), dtype.is_known(), "code {code}");
        if let Some(name) = dtype.name() {
            assert_eq!(Dtype::from_name(name), Some(dtype));
        }
    }
    assert_eq!(Dtype::from_code(2), Dtype::F32);
    assert_eq!(Dtype::from_name("F32"), Some(Dtype::from_code(2)));
    for code in 0..=u8::MAX {
        let t = MetaType::from_code(code);
        assert_eq!(t.code(), code);
        assert_eq!(t.is_known(), MetaType::ALL.contains(&t));
        assert_eq!(t.since_minor().is_some(), t.is_known(), "type {code}");
        if let Some(name) = t.name() {
            assert_eq!(MetaType::from_name(name), Some(t));
        }
    }
    assert_eq!(MetaType::from_code(10), MetaType::STRING_ARRAY);
}

#[test]
fn display_uses_the_spec_names() {
    assert_eq!(Dtype::Q8_0.to_string(), "Q8_0");
    assert_eq!(Dtype::from_code(77).to_string(), "dtype 77");
    assert_eq!(format!("{:?}", Dtype::BF16), "BF16");
    assert_eq!(format!("{:?}", Dtype::from_code(77)), "Dtype(77)");
    assert_eq!(MetaType::STRING_ARRAY.to_string(), "string[]");
    assert_eq!(MetaType::from_code(27).to_string(), "type 27");
    assert_eq!(MetaType::I8.to_string(), "i8");
    assert_eq!(Dtype::Q4_K.to_string(), "Q4_K");
}

/// `Dtype::byte_len` is the reader's own arithmetic (spec §4.1), each refusal naming its rule.
#[test]
fn byte_len_follows_the_spec_and_names_the_rule() {
    assert_eq!(Dtype::F32.byte_len(&[2, 3]), Ok(24));
    assert_eq!(Dtype::Q4_0.byte_len(&[3, 64]), Ok(6 * 18));
    assert_eq!(Dtype::CONTAINER.byte_len(&[100]), Ok(100));
    let cases = [
        (Dtype::from_code(77), &[1u64][..], ShapeError::UnknownDtype, Rule::UnknownDtype),
        (Dtype::U8, &[1; 9][..], ShapeError::RankTooLarge, Rule::RankTooLarge),
        (Dtype::U8, &[1 << 40, 1 << 40, 0][..], ShapeError::Overflow, Rule::ShapeOverflow),
        (Dtype::Q8_0, &[2, 33][..], ShapeError::PartialBlock, Rule::BlockShape),
        (Dtype::Q8_0, &[][..], ShapeError::PartialBlock, Rule::BlockShape),
        (Dtype::RAW, &[2, 2][..], ShapeError::NotRankOne, Rule::ByteShape),
    ];
    for (dtype, dims, error, rule) in cases {
        assert_eq!(dtype.byte_len(dims), Err(error), "{dtype} {dims:?}");
        assert_eq!(error.rule(), rule);
    }
    // Every known dtype agrees with its packing on a shape every packing accepts.
    for &dtype in Dtype::ALL {
        let dims: &[u64] = match dtype.packing() {
            Some(Packing::Bytes) => &[64],
            _ => &[2, 256],
        };
        let expected = match dtype.packing().unwrap() {
            Packing::Element(size) => 512 * size,
            Packing::Block { block_elems, block_bytes } => 512 / block_elems * block_bytes,
            Packing::Bytes => 64,
        };
        assert_eq!(dtype.byte_len(dims), Ok(expected), "{dtype}");
    }
}

/// Regression: an entry of a dtype unknown to the reader, in a newer-minor file, escaped R25, so shape
/// `[2^63, 4]` parsed and `Shape::elements` returned `u64::MAX`. R25 now holds for every entry, so
/// `elements` is exact for every entry a reader accepts.
#[test]
fn element_counts_are_exact_for_every_accepted_entry() {
    let refused = vector("invalid/R25-unknown-dtype.tpack");
    assert_eq!(Container::parse(&refused).unwrap_err().rule(), Rule::ShapeOverflow);
    let mut unknown = 0;
    for name in vectors_in("valid") {
        let bytes = vector(&name);
        if !affordable(&bytes) {
            continue;
        }
        let c = Container::parse(&bytes).unwrap();
        for e in c.entries() {
            let product = e.shape().dims().iter().try_fold(1u64, |a, &d| a.checked_mul(d));
            assert_eq!(Some(e.shape().elements()), product, "{name}: {}", e.name());
            unknown += usize::from(!e.dtype().is_known());
        }
    }
    assert!(unknown > 0, "the valid vectors include entries of unknown dtype");
}

/// Regression: `Debug` of a container and an entry printed the whole byte slice — gigabytes for a mapped
/// model. It prints a summary.
#[test]
fn debug_never_prints_the_payload() {
    // Large enough that printing it could not fit the bound below.
    let payload = vec![0xAB; 4096];
    let mut b = Builder::new();
    b.push(NewEntry::new("big", Dtype::U8, &[4096], &payload)).unwrap();
    b.metadata("k", MetaValue::String("v")).unwrap();
    let bytes = b.finish().unwrap();
    let c = Container::parse(&bytes).unwrap();
    let container = format!("{c:?}");
    let entry = format!("{:?}", c.get("big").unwrap());
    for text in [&container, &entry] {
        assert!(text.len() < 400, "{} bytes of Debug: {text}", text.len());
        assert!(!text.contains("171"), "a payload byte (0xAB = 171) is printed: {text}");
    }
    assert!(entry.contains("\"big\"") && entry.contains("U8"), "{entry}");
    assert!(container.contains("entries: 1"), "{container}");
    assert_eq!(format!("{:?}", c.metadata()), r#"{"k": String("v")}"#);
}

#[test]
fn metadata_is_a_view_with_lookups_and_iteration() {
    let mut b = Builder::new();
    b.metadata("b", MetaValue::U64(2)).unwrap();
    b.metadata("a", MetaValue::Bool(true)).unwrap();
    let bytes = b.finish().unwrap();
    let c = Container::parse(&bytes).unwrap();
    let m = c.metadata();
    assert_eq!((m.len(), m.is_empty()), (2, false));
    assert_eq!(m.get("a"), Some(MetaValue::Bool(true)));
    assert_eq!(m.get("c"), None);
    assert_eq!(m.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(m.into_iter().len(), 2);
    // By position, in key order; `nth` skips without decoding and agrees.
    assert_eq!(m.at(0), Some(("a", MetaValue::Bool(true))));
    assert_eq!(m.at(1), Some(("b", MetaValue::U64(2))));
    assert_eq!(m.at(2), None);
    assert_eq!(m.iter().nth(1), m.at(1));
    assert_eq!(m.iter().nth(2), None);
    let mut it = m.iter();
    assert_eq!(it.nth(1), m.at(1));
    assert_eq!(it.next(), None);
}

/// `verification` reports each entry, every problem of it, and progress that adds up to the payloads.
#[test]
fn verification_goes_entry_by_entry_with_progress() {
    let mut b = Builder::new();
    b.push(EntryDecl::new("a", Dtype::U8, &[3]).with_alignment(16).with_data(&[1, 2, 3])).unwrap();
    b.push(NewEntry::new("b", Dtype::U8, &[5], &[4; 5])).unwrap();
    let mut bytes = b.finish().unwrap();
    let c = Container::parse(&bytes).unwrap();
    let a = c.get("a").unwrap().range();
    let bb = c.get("b").unwrap().range();
    // Corrupt a padding byte before `b` and a payload byte of `b`.
    bytes[usize::try_from(a.end).unwrap()] = 1;
    bytes[usize::try_from(bb.start).unwrap()] ^= 0xFF;
    let c = Container::parse(&bytes).unwrap();
    let mut done = 0;
    let found: Vec<_> = c.verification().with_progress(|n| done += n).collect();
    assert_eq!(done, 8);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].result(), Ok(()));
    assert_eq!(found[1].entry.name(), "b");
    assert_eq!(
        found[1].padding,
        Err(Error::PaddingNonZero { offset: a.end, nesting: tpack::Nesting::OUTERMOST })
    );
    assert!(matches!(found[1].payload, Err(Error::EntryChecksum { entry: 1, .. })));
    assert_eq!(found[1].result(), found[1].padding);
    assert_eq!(c.verify(), found[1].padding);
}

/// `verify` (the small path a microcontroller runs) and `verification` (entry by entry) agree on every
/// golden vector that parses.
#[test]
fn verify_and_verification_agree_on_every_vector() {
    let mut checked = 0;
    // Under Miri (slow), every 4th invalid vector: most fail to parse, and rules.rs reaches each rule natively.
    let invalid = vectors_in("invalid").into_iter().step_by(if cfg!(miri) { 4 } else { 1 });
    for name in vectors_in("valid").into_iter().chain(invalid) {
        let bytes = vector(&name);
        if !affordable(&bytes) {
            continue;
        }
        let Ok(c) = Container::parse(&bytes) else { continue };
        let first = c.verification().find_map(|v| v.result().err()).map_or(Ok(()), Err);
        assert_eq!(c.verify(), first, "{name}");
        checked += 1;
    }
    assert!(checked > 20, "only {checked} vectors parse");
}

/// `MetaValue::from_encoded` accepts exactly the pool encodings a reader accepts, and the value written back
/// reads the same.
#[test]
fn metadata_values_from_their_encoding_are_validated_as_a_reader_does() {
    let item = |t: MetaType, body: &[u8]| {
        let mut v = vec![t.code(), 0, 0, 0];
        v.extend_from_slice(&u32::try_from(body.len()).unwrap().to_le_bytes());
        v.extend_from_slice(body);
        v
    };
    let strings = [&2u32.to_le_bytes()[..], b"hi", &0u32.to_le_bytes()].concat();
    let nested = [item(MetaType::U16_ARRAY, &[1, 0, 2, 0]), item(MetaType::STRING_ARRAY, &strings)].concat();
    let valid: [(MetaType, &[u8]); 7] = [
        (MetaType::STRING, b"text"),
        (MetaType::BYTES, &[0xff, 0]),
        (MetaType::U32, &[1, 2, 3, 4]),
        (MetaType::F32_ARRAY, &[0; 8]),
        (MetaType::BOOL_ARRAY, &[0, 1, 1]),
        (MetaType::STRING_ARRAY, &strings),
        (MetaType::ARRAY_ARRAY, &nested),
    ];
    for (t, bytes) in valid {
        let value = MetaValue::from_encoded(t, bytes).unwrap_or_else(|| panic!("{t:?} refused"));
        assert_eq!(value.value_type(), t);
        let mut b = Builder::new();
        b.metadata("k", value).unwrap();
        let out = b.finish().unwrap();
        assert_eq!(Container::parse(&out).unwrap().metadata().get("k"), Some(value), "{t:?}");
    }
    let MetaValue::ArrayArray(mut items) = MetaValue::from_encoded(MetaType::ARRAY_ARRAY, &nested).unwrap()
    else {
        panic!("not an array[]")
    };
    assert_eq!(items.next(), Some(MetaValue::U16Array(&[1.into(), 2.into()])));

    // Nine levels of array[] (the limit is 8), as R47 counts them.
    let mut deep = item(MetaType::U8_ARRAY, &[1]);
    for _ in 0..8 {
        deep = item(MetaType::ARRAY_ARRAY, &deep);
    }
    assert!(MetaValue::from_encoded(MetaType::ARRAY_ARRAY, &deep[8..]).is_some(), "8 levels are valid");
    let invalid: [(MetaType, &[u8]); 11] = [
        (MetaType::STRING, &[0xc3]),                   // R48: not UTF-8
        (MetaType::U32, &[1, 2, 3]),                   // R47: not 4 bytes
        (MetaType::F32_ARRAY, &[0; 6]),                // R47: no whole number of items
        (MetaType::BOOL_ARRAY, &[0, 2]),               // R49: a bool other than 0 or 1
        (MetaType::STRING_ARRAY, &strings[..9]),       // R47: a cut item
        (MetaType::STRING_ARRAY, &[1, 0, 0, 0, 0xff]), // R48: an item not UTF-8
        (MetaType::ARRAY_ARRAY, &nested[..nested.len() - 1]),
        (MetaType::ARRAY_ARRAY, &item(MetaType::U8, &[1])), // R47: an item that is no array
        (MetaType::ARRAY_ARRAY, &deep),                     // R47: 9 levels
        (MetaType::U64, &[0; 8]),                           // inline: not a pool type
        (MetaType::from_code(200), &[]),                    // unknown
    ];
    for (i, (t, bytes)) in invalid.into_iter().enumerate() {
        assert_eq!(MetaValue::from_encoded(t, bytes), None, "case {i}: {t:?}");
    }
}
