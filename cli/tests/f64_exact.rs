//! f64 values keep every bit through the tool's JSON: manifests (`pack`, `unpack`), `inspect --json` and
//! safetensors `__metadata__`. Finite values are JSON numbers in their shortest round-trip form; NaN and ±∞,
//! which JSON has no numbers for, are `{"f64_bits": "<16 hex digits>"}`.

mod common;

use std::path::Path;

use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use tpack::write::{Builder, NewEntry};
use tpack::zerocopy::little_endian::F64;
use tpack::{Container, Dtype, MetaValue};
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

/// The f64 metadata of [`spelled`]: a decimal that needs all 17 digits, −0, a NaN with a payload, −∞, and
/// an array of them.
fn spelled_container() -> Vec<u8> {
    let v: f64 = "503.23630133151005".parse().unwrap();
    let nan = f64::from_bits(0x7ff8_0000_0000_0001);
    let all = [F64::new(v), F64::new(-0.0), F64::new(nan), F64::new(f64::NEG_INFINITY), F64::new(1e300)];
    let mut b = Builder::new();
    b.push(NewEntry::new("w", Dtype::F32, &[1], &1f32.to_le_bytes())).unwrap();
    b.metadata("a.decimal", MetaValue::F64(v)).unwrap();
    b.metadata("b.negzero", MetaValue::F64(-0.0)).unwrap();
    b.metadata("c.nan", MetaValue::F64(nan)).unwrap();
    b.metadata("d.array", MetaValue::F64Array(&all)).unwrap();
    b.finish().unwrap()
}

/// How every JSON the tool writes spells the values of [`spelled_container`].
fn spelled() -> [Value; 4] {
    let v: f64 = "503.23630133151005".parse().unwrap();
    let nan = json!({"f64_bits": "7ff8000000000001"});
    let inf = json!({"f64_bits": "fff0000000000000"});
    [json!(v), json!(-0.0), nan.clone(), json!([v, -0.0, nan, inf, 1e300])]
}

#[test]
fn inspect_json_writes_finite_f64_as_numbers_and_nan_as_marked_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.tpack");
    std::fs::write(&path, spelled_container()).unwrap();
    let text = assert_ok(&run!("inspect", path, "--json"));
    // The shortest text that reads back as the same f64, not a rounded or hex form.
    assert!(text.contains("503.23630133151005"), "{text}");
    assert!(text.contains("-0.0"), "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let values: Vec<Value> = doc["metadata"].as_array().unwrap().iter().map(|m| m["value"].clone()).collect();
    assert_eq!(values, spelled());
    assert!(values[1].as_f64().unwrap().is_sign_negative());
}

#[test]
fn unpack_writes_f64_as_inspect_does_and_pack_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = spelled_container();
    let path = dir.path().join("f.tpack");
    std::fs::write(&path, &bytes).unwrap();
    let files = dir.path().join("files");
    assert_ok(&run!("unpack", path, "-o", files));
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(files.join("manifest.json")).unwrap()).unwrap();
    let values: Vec<Value> =
        manifest["metadata"].as_array().unwrap().iter().map(|m| m["value"].clone()).collect();
    assert_eq!(values, spelled());
    let again = dir.path().join("again.tpack");
    assert_ok(&run!("pack", files.join("manifest.json"), "-o", again));
    assert!(std::fs::read(&again).unwrap() == bytes);
}

/// Manifests written before the marked form spelled NaN and ±∞ as bare 16-digit hex strings: still read.
#[test]
fn pack_still_reads_bare_hex_f64() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_manifest(
        dir.path(),
        &json!({"tpack_manifest": 1, "entries": [], "metadata": [
            {"key": "a", "type": "f64", "value": "7ff0000000000001"},
            {"key": "b", "type": "f64", "value": {"f64_bits": "fff0000000000001"}},
            {"key": "c", "type": "f64[]", "value": ["8000000000000000", {"f64_bits": "7ff8000000000000"}, 2.5]}
        ]}),
    );
    let out = dir.path().join("m.tpack");
    run_pack(&manifest, &out, false, true).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    let bits = |k: &str| match c.metadata().get(k) {
        Some(MetaValue::F64(v)) => vec![v.to_bits()],
        Some(MetaValue::F64Array(a)) => a.iter().map(|v| v.get().to_bits()).collect(),
        other => panic!("{other:?}"),
    };
    assert_eq!(bits("a"), [0x7ff0_0000_0000_0001]);
    assert_eq!(bits("b"), [0xfff0_0000_0000_0001]);
    assert_eq!(bits("c"), [0x8000_0000_0000_0000, 0x7ff8_0000_0000_0000, 2.5f64.to_bits()]);
}

#[test]
fn pack_explains_a_bad_f64_bits_value() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_manifest(
        dir.path(),
        &json!({"tpack_manifest": 1, "entries": [], "metadata": [
            {"key": "a", "type": "f64", "value": {"f64_bits": "7ff8"}},
            {"key": "b", "type": "f64", "value": {"bits": "7ff8000000000000"}}
        ]}),
    );
    let err = run_pack(&manifest, &dir.path().join("m.tpack"), false, true).unwrap_err().to_string();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[1].contains("record 0 (\"a\")") && lines[1].contains("\"7ff8\" is not the 16 hex digits"),
        "{err}"
    );
    assert!(lines[2].contains("record 1 (\"b\")") && lines[2].contains("the form of NaN and ±∞"), "{err}");
}

/// safetensors `__metadata__` holds strings: a non-string value is its JSON text, f64 as above.
#[test]
fn safetensors_metadata_spells_f64_as_json_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.tpack");
    std::fs::write(&path, spelled_container()).unwrap();
    let out = dir.path().join("f.safetensors");
    assert_ok(&run!("convert", path, out));
    let bytes = std::fs::read(&out).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let meta = header.metadata().clone().unwrap();
    for (key, want) in ["a.decimal", "b.negzero", "c.nan", "d.array"].iter().zip(spelled()) {
        let text = &meta[*key];
        assert_eq!(serde_json::from_str::<Value>(text).unwrap(), want, "{key}: {text}");
    }
    assert_eq!(meta["a.decimal"], "503.23630133151005");
    assert_eq!(meta["c.nan"], r#"{"f64_bits":"7ff8000000000001"}"#);
    // And Python reads the same strings.
    if let Some(py) = python() {
        let read = python_readback(&py, &out);
        assert_eq!(read["metadata"]["a.decimal"], "503.23630133151005");
        assert_eq!(read["metadata"]["d.array"], meta["d.array"].as_str());
    }
}

#[test]
fn f64_data_takes_nan_and_infinity_in_the_marked_form() {
    let dir = tempfile::tempdir().unwrap();
    let items =
        [json!(1.5), json!({"f64_bits": "7ff0000000000001"}), json!({"f64_bits": "fff0000000000000"})];
    let stored = pack_data(dir.path(), &items);
    let want: Vec<u8> = [1.5f64.to_bits(), 0x7ff0_0000_0000_0001, 0xfff0_0000_0000_0000]
        .iter()
        .flat_map(|b| b.to_le_bytes())
        .collect();
    assert_eq!(stored, want);
}
