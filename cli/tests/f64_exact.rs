//! f64 values keep every bit through the tool's JSON: manifests (`pack`, `unpack`), `inspect --json` and
//! safetensors `__metadata__`. Finite values are JSON numbers in their shortest round-trip form; NaN and ±∞,
//! which JSON has no numbers for, are `{"f64_bits": "<16 hex digits>"}`.

mod common;

use std::path::Path;

use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use tpack::zerocopy::little_endian::F64;
use tpack::{Builder, Container, Dtype, MetaValue, NewEntry};
use tpack_cli::{run_pack, run_unpack};

/// A container with `bits` as f64 metadata (one scalar per value and one array of all) and as an F64 entry.
fn container_of(bits: &[u64]) -> Vec<u8> {
    let values: Vec<F64> = bits.iter().map(|&b| F64::new(f64::from_bits(b))).collect();
    let payload: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
    let mut b = Builder::new();
    b.push(NewEntry::new("d", Dtype::F64, &[bits.len() as u64], &payload)).unwrap();
    for (i, &v) in bits.iter().enumerate() {
        b.metadata(&format!("x{i:02}"), MetaValue::F64(f64::from_bits(v))).unwrap();
    }
    b.metadata("xs", MetaValue::F64Array(&values)).unwrap();
    b.finish().unwrap()
}

/// unpack → pack in-process; returns the repacked bytes.
fn repack(dir: &Path, bytes: &[u8]) -> Vec<u8> {
    let input = dir.join("in.tpack");
    std::fs::write(&input, bytes).unwrap();
    let files = dir.join("files");
    run_unpack(&input, &files, false).unwrap();
    let again = dir.join("again.tpack");
    run_pack(&files.join("manifest.json"), &again, false, true).unwrap();
    std::fs::read(again).unwrap()
}

/// Packs a manifest with one F64 entry whose `data` is `items`; returns the payload.
fn pack_data(dir: &Path, items: &[Value]) -> Vec<u8> {
    let manifest = dir.join("data.json");
    let doc = json!({"tpack_manifest": 1, "entries": [
        {"name": "d", "dtype": "F64", "shape": [items.len()], "data": items}
    ]});
    // The text as any JSON writer gives it: serde_json's shortest round-trip form of each f64.
    std::fs::write(&manifest, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = dir.join("data.tpack");
    run_pack(&manifest, &out, true, true).unwrap();
    let bytes = std::fs::read(out).unwrap();
    Container::parse(&bytes).unwrap().get("d").unwrap().payload().to_vec()
}

/// Random bit patterns, biased to the patterns that are easy to lose: NaN payloads (quiet and signalling),
/// ±∞, ±0, subnormals, and the largest and smallest normals.
fn f64_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => any::<u64>(),
        1 => (any::<bool>(), 1u64..(1 << 52)).prop_map(|(neg, m)| (u64::from(neg) << 63) | 0x7ff0_0000_0000_0000 | m),
        1 => (any::<bool>(), 0u64..(1 << 52)).prop_map(|(neg, m)| (u64::from(neg) << 63) | m),
        1 => prop::sample::select(vec![
            0x7ff0_0000_0000_0000, 0xfff0_0000_0000_0000, 0, 0x8000_0000_0000_0000, 0x7fef_ffff_ffff_ffff,
            0x0010_0000_0000_0000, 0x7ff8_0000_0000_0000, 0x7ff0_0000_0000_0001, 1,
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// pack(unpack(x)) is x, bit for bit, for any f64 bit patterns in metadata and in an F64 entry.
    #[test]
    fn unpack_then_pack_keeps_every_f64_bit_pattern(bits in prop::collection::vec(f64_bits(), 1..12)) {
        let dir = tempfile::tempdir().unwrap();
        let bytes = container_of(&bits);
        prop_assert!(repack(dir.path(), &bytes) == bytes, "unpack → pack changed {bits:x?}");
    }

    /// Finite f64s given as JSON numbers in an F64 entry's `data` are stored exactly.
    #[test]
    fn data_numbers_are_stored_exactly(bits in prop::collection::vec(f64_bits(), 1..12)) {
        let finite: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).filter(|v| v.is_finite()).collect();
        prop_assume!(!finite.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let items: Vec<Value> = finite.iter().map(|&v| json!(v)).collect();
        let stored = pack_data(dir.path(), &items);
        let want: Vec<u8> = finite.iter().flat_map(|v| v.to_le_bytes()).collect();
        prop_assert_eq!(stored, want);
    }
}

/// The value from issue 13: the default serde_json parser stored it one unit in the last place off.
#[test]
fn a_decimal_that_used_to_be_misparsed_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let v: f64 = "503.23630133151005".parse().unwrap();
    let manifest = dir.path().join("m.json");
    std::fs::write(
        &manifest,
        r#"{"tpack_manifest": 1,
            "entries": [{"name": "d", "dtype": "F64", "shape": [1], "data": [503.23630133151005]}],
            "metadata": [{"key": "k", "type": "f64", "value": 503.23630133151005}]}"#,
    )
    .unwrap();
    let out = dir.path().join("m.tpack");
    run_pack(&manifest, &out, false, true).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    assert_eq!(c.get("d").unwrap().payload(), v.to_le_bytes());
    assert!(matches!(c.metadata().get("k"), Some(MetaValue::F64(x)) if x.to_bits() == v.to_bits()));
}
