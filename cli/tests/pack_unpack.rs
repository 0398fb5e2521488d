//! `tpack pack` and `tpack unpack`: manifests checked for meaning before anything is written, payloads that
//! stream, byte-identical pack → unpack → pack round trips, and entry names that never escape the output
//! directory.

mod common;

use common::*;
use serde_json::{json, Value};
use tpack::write::{Builder, NewEntry};
use tpack::{Container, Dtype, MetaValue};

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn pack_builds_what_the_manifest_says() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])).unwrap();
    let manifest = write_manifest(
        dir.path(),
        &json!({
            "tpack_manifest": 1,
            "address_bits": 32,
            "entries": [
                {"name": "layer0.w", "dtype": "F32", "shape": [2, 3], "file": "w.bin", "alignment": 128, "target": "0x2000_0000"},
                {"name": "layer0.b", "dtype": "I8", "shape": [3], "data": [1, -2, 3]},
                {"name": "half", "dtype": "F16", "shape": [2], "data": [1.5, -2.0]},
                {"name": "flags", "dtype": "BOOL", "shape": [2], "data": [true, false]},
                {"name": "boot", "dtype": "RAW", "hex": "deadbeef", "target": 4096},
                {"name": "q", "dtype": "Q8_0", "shape": [1, 32], "hex": "003c".to_owned() + &"01".repeat(32)}
            ],
            "metadata": [
                {"key": "layers", "type": "u64[]", "value": [784, 128, 10]},
                {"key": "name", "type": "string", "value": "mnist"},
                {"key": "scale", "type": "f64", "value": 0.5},
                {"key": "nan", "type": "f64", "value": "7ff8000000000001"},
                {"key": "neg", "type": "i64", "value": -5},
                {"key": "ok", "type": "bool", "value": true},
                {"key": "blob", "type": "bytes", "value": "00ff"},
                {"key": "dims", "type": "i64[]", "value": [-1, 2]},
                {"key": "ws", "type": "f64[]", "value": [0.25, "fff0000000000000"]},
                {"key": "tags", "type": "string[]", "value": ["a", ""]}
            ]
        }),
    );
    let out = dir.path().join("model.tpack");
    let said = assert_ok(&run!("pack", manifest, "-o", out));
    assert!(said.contains("packed 6 entries and 10 metadata values"), "{said}");
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    c.verify().unwrap();
    let w = c.get("layer0.w").unwrap();
    assert_eq!(
        (w.dtype(), w.shape().dims(), w.alignment(), w.target()),
        (Dtype::F32, &[2u64, 3][..], 128, Some(0x2000_0000))
    );
    assert_eq!(w.payload(), f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    assert_eq!(c.get("layer0.b").unwrap().payload(), [1, 0xfe, 3]);
    assert_eq!(c.get("half").unwrap().payload(), [0x00, 0x3e, 0x00, 0xc0]);
    assert_eq!(c.get("flags").unwrap().payload(), [1, 0]);
    let boot = c.get("boot").unwrap();
    assert_eq!(
        (boot.shape().dims(), boot.target(), boot.payload()),
        (&[4u64][..], Some(4096), &[0xde, 0xad, 0xbe, 0xef][..])
    );
    assert_eq!(c.get("q").unwrap().byte_len(), 34);
    assert!(matches!(c.metadata().get("nan"), Some(MetaValue::F64(v)) if v.to_bits() == 0x7ff8000000000001));
    assert_eq!(c.metadata().get("name"), Some(MetaValue::String("mnist")));
    assert_eq!(c.metadata().get("neg"), Some(MetaValue::I64(-5)));
    assert_eq!(c.metadata().get("blob"), Some(MetaValue::Bytes(&[0, 255])));
    assert!(
        matches!(c.metadata().get("ws"), Some(MetaValue::F64Array(a)) if a[1].get() == f64::NEG_INFINITY)
    );

    // unpack → pack gives the identical file.
    let files = dir.path().join("files");
    assert_ok(&run!("unpack", out, "-o", files));
    let again = dir.path().join("again.tpack");
    assert_ok(&run!("pack", files.join("manifest.json"), "-o", again));
    assert_eq!(std::fs::read(&again).unwrap(), bytes);
}

/// Packs `manifest` in a fresh directory (with the data files `files`) and returns the failure message.
fn pack_fails(manifest: Value, files: &[(&str, usize)], words: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (name, len) in files {
        std::fs::write(dir.path().join(name), vec![0u8; *len]).unwrap();
    }
    let path = write_manifest(dir.path(), &manifest);
    let out = dir.path().join("out.tpack");
    let o = run!("pack", path, "-o", out);
    let err = assert_fails(&o, 3, words);
    assert!(!out.exists(), "nothing is written for a bad manifest");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".tpack-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    err
}

fn one_entry(entry: Value) -> Value {
    json!({"tpack_manifest": 1, "entries": [entry]})
}

#[test]
fn manifest_problems_name_the_entry_and_field() {
    pack_fails(
        one_entry(json!({"name": "w", "dtype": "F32", "shape": [4], "file": "w.bin", "target": -1})),
        &[("w.bin", 16)],
        &["entry 0 (\"w\")", "\"target\"", "negative"],
    );
    pack_fails(
        one_entry(
            json!({"name": "w", "dtype": "F32", "shape": [4], "file": "w.bin", "target": 18446744073709551616.0}),
        ),
        &[("w.bin", 16)],
        &["entry 0 (\"w\")", "\"target\"", "not an integer from 0 to 2^64 - 1"],
    );
    pack_fails(
        one_entry(
            json!({"name": "w", "dtype": "F32", "shape": [4], "file": "w.bin", "target": "0x1_0000_0000_0000_0000"}),
        ),
        &[("w.bin", 16)],
        &["\"target\"", "not an integer"],
    );
    pack_fails(
        json!({"tpack_manifest": 1, "address_bits": 32,
               "entries": [{"name": "w", "dtype": "F32", "shape": [4], "file": "w.bin", "target": "0xfffffff8"}]}),
        &[("w.bin", 16)],
        &["entry 0 (\"w\")", "\"target\"", "beyond the 32-bit address space"],
    );
    // 2^64 - 8 + 16 bytes wraps even the 64-bit space.
    pack_fails(
        one_entry(
            json!({"name": "w", "dtype": "F32", "shape": [4], "file": "w.bin", "target": "0xfffffffffffffff8"}),
        ),
        &[("w.bin", 16)],
        &["\"target\"", "beyond the 64-bit address space"],
    );
    pack_fails(
        one_entry(json!({"name": "w", "dtype": "F32", "shape": [2, 3], "file": "w.bin"})),
        &[("w.bin", 20)],
        &["entry 0 (\"w\")", "\"shape\"", "[2, 3] of F32 needs 24 bytes", "w.bin has 20 bytes"],
    );
    pack_fails(
        one_entry(json!({"name": "q", "dtype": "Q4_0", "shape": [2, 30], "hex": ""})),
        &[],
        &["\"shape\"", "multiple of its block size 32"],
    );
    pack_fails(
        one_entry(json!({"name": "w", "dtype": "F32", "shape": [4], "file": "missing.bin"})),
        &[],
        &["entry 0 (\"w\")", "\"file\"", "missing.bin", "no such file"],
    );
    pack_fails(
        one_entry(json!({"name": "w", "dtype": "F31", "shape": [4], "file": "w.bin"})),
        &[("w.bin", 16)],
        &["entry 0 (\"w\")", "\"dtype\"", "\"F31\" is not a tpack dtype", "did you mean \"F32\"?"],
    );
    pack_fails(
        json!({"tpack_manifest": 1, "entries": [
            {"name": "w", "dtype": "U8", "shape": [1], "hex": "00"},
            {"name": "w", "dtype": "U8", "shape": [1], "hex": "01"}
        ]}),
        &[],
        &["entry 1 (\"w\")", "\"name\"", "duplicates the name of entry 0"],
    );
    pack_fails(
        one_entry(json!({"name": "w", "dtype": "U8", "shape": [1], "hex": "00", "alignment": 3})),
        &[],
        &["\"alignment\"", "power of two"],
    );
    pack_fails(
        one_entry(json!({"name": "w", "dtype": "U8", "shape": [1], "hex": "00", "shap": 1})),
        &[],
        &["unknown field \"shap\"", "did you mean \"shape\"?"],
    );
    pack_fails(
        one_entry(json!({"name": "w", "dtype": "I8", "shape": [1], "data": [200]})),
        &[],
        &["\"data\"", "out of range for I8"],
    );
    pack_fails(
        one_entry(json!({"name": "w", "dtype": "U8", "shape": [1], "data": [1], "hex": "01"})),
        &[],
        &["give exactly one of file, data, hex"],
    );
    pack_fails(
        one_entry(json!({"name": "w", "dtype": "U8", "shape": [-1], "hex": ""})),
        &[],
        &["\"shape\"", "dimension 0 is negative"],
    );
    pack_fails(
        json!({"tpack_manifest": 1, "entries": [], "metadata": [
            {"key": "k", "type": "u64", "value": -1},
            {"key": "k", "type": "u128", "value": 1}
        ]}),
        &[],
        &[
            "3 problems",
            "metadata record 0 (\"k\"), field \"value\"",
            "metadata record 1 (\"k\")",
            "duplicates the key",
            "\"u128\" is not a metadata type",
        ],
    );
    pack_fails(json!({"entries": []}), &[], &["\"tpack_manifest\" is missing"]);
    pack_fails(
        one_entry(json!({"name": "c", "dtype": "CONTAINER", "file": "w.bin"})),
        &[("w.bin", 16)],
        &["entry 0 (\"c\")", "\"file\"", "not a valid tpack container"],
    );
    // Every problem is reported at once.
    let err = pack_fails(
        json!({"tpack_manifest": 1, "entries": [
            {"name": "", "dtype": "F32", "shape": [1], "hex": "00000000"},
            {"name": "b", "dtype": "F32", "shape": [1], "file": "nope.bin"}
        ]}),
        &[],
        &["2 problems", "entry 0", "is empty", "entry 1 (\"b\")", "nope.bin"],
    );
    assert_eq!(err.lines().count(), 3, "{err}");
}

#[test]
fn invalid_json_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.json");
    std::fs::write(&path, "{\"tpack_manifest\": 1,\n \"entries\": [,]}").unwrap();
    let o = run!("pack", path, "-o", dir.path().join("o.tpack"));
    assert_fails(&o, 3, &["m.json is not valid JSON", "line 2"]);
}

/// Every valid vector of the spec with minor version 0 (the one this tool writes) survives unpack → pack
/// byte for byte; so do the converted fixtures.
#[test]
fn unpack_then_pack_is_byte_identical_for_every_vector() {
    let mut inputs: Vec<std::path::PathBuf> = std::fs::read_dir(repo().join("spec/vectors/valid"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tpack"))
        .collect();
    inputs.sort();
    let dir = tempfile::tempdir().unwrap();
    for fixture_name in ["model.safetensors", "model.gguf", "aligned64.gguf"] {
        let out = dir.path().join(format!("{fixture_name}.tpack"));
        assert_ok(&run!("convert", fixture(fixture_name), out));
        inputs.push(out);
    }
    let mut checked = 0;
    for input in &inputs {
        let bytes = std::fs::read(input).unwrap();
        let c = Container::parse(&bytes).unwrap();
        let files = dir.path().join(format!("unpacked-{checked}"));
        let o = run!("unpack", input, "-o", files);
        // What a writer of this version would not write so: a newer minor, or a minor-1 header extension with
        // an item of a tag it does not know, or with empty items (spec §11.1).
        let name = input.file_stem().unwrap().to_str().unwrap();
        // A signed file is unpacked without its signature: pack gives back its unsigned content.
        if c.signed_attributes().is_some() {
            assert_ok(&o);
            let again = dir.path().join(format!("again-{checked}.tpack"));
            assert_ok(&run!("pack", files.join("manifest.json"), "-o", again));
            let unsigned = tpack::sign::unsign_container(&bytes).unwrap();
            assert!(
                std::fs::read(&again).unwrap() == unsigned,
                "{} differs from its unsigned form",
                input.display()
            );
            checked += 1;
            continue;
        }
        if c.version().1 > 1 || ["header-extension", "extension-empty-items"].contains(&name) {
            assert_fails(&o, 3, &["cannot repack", ""]);
            continue;
        }
        assert_ok(&o);
        let again = dir.path().join(format!("again-{checked}.tpack"));
        assert_ok(&run!("pack", files.join("manifest.json"), "-o", again));
        assert!(std::fs::read(&again).unwrap() == bytes, "{} differs after unpack → pack", input.display());
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} files round-tripped");
}

#[test]
fn hostile_entry_names_stay_inside_the_output_directory() {
    let names = [
        "../../escaped",
        "/etc/passwd-tpack-test",
        "..",
        ".",
        "a/../../b",
        "C:\\Windows\\x",
        "CON",
        "nul.txt",
        "a\0b",
        "line\nbreak",
        "\u{1b}[31mred",
        "W",
        "w",
        "manifest.json",
    ];
    let mut b = Builder::new();
    for (i, name) in names.iter().enumerate() {
        b.push(NewEntry::new(name, Dtype::U8, &[1], &[i as u8])).unwrap();
    }
    b.metadata("k", MetaValue::String("v")).unwrap();
    let bytes = b.finish().unwrap();
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("hostile.tpack");
    std::fs::write(&input, &bytes).unwrap();
    let out = root.path().join("deep/out");
    assert_ok(&run!("unpack", input, "-o", out));

    // Only `hostile.tpack` and `deep/` at the top; only plain files inside `deep/out`.
    let mut top: Vec<_> = std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    top.sort();
    assert_eq!(top, ["deep", "hostile.tpack"]);
    let inside: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap()).collect();
    assert_eq!(inside.len(), names.len() + 1);
    for e in &inside {
        assert!(e.file_type().unwrap().is_file());
        let n = e.file_name().into_string().unwrap();
        assert!(n.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.%".contains(&b)), "{n:?}");
    }
    // The manifest is the real one, not entry 13's payload.
    let manifest: Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["entries"].as_array().unwrap().len(), names.len());
    // And the hostile names come back exactly.
    let again = root.path().join("again.tpack");
    assert_ok(&run!("pack", out.join("manifest.json"), "-o", again));
    assert_eq!(std::fs::read(&again).unwrap(), bytes);
}

#[test]
fn unpack_does_not_overwrite_without_force_and_never_follows_symlinks() {
    let mut b = Builder::new();
    b.push(NewEntry::new("w", Dtype::U8, &[2], &[7, 8])).unwrap();
    let bytes = b.finish().unwrap();
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("m.tpack");
    std::fs::write(&input, &bytes).unwrap();
    let out = root.path().join("out");
    assert_ok(&run!("unpack", input, "-o", out));

    let o = run!("unpack", input, "-o", out);
    assert_fails(&o, 4, &["already exists", "--force"]);

    // A symlink planted where a payload goes: --force replaces the link, the file it points to is untouched.
    let victim = root.path().join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let payload = out.join("0-w.bin");
    assert!(payload.exists());
    std::fs::remove_file(&payload).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&victim, &payload).unwrap();
    let o = run!("unpack", input, "-o", out);
    assert_fails(&o, 4, &["0-w.bin", "already exists"]);
    assert_ok(&run!("unpack", input, "-o", out, "--force"));
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert_eq!(std::fs::read(&payload).unwrap(), [7, 8]);
    assert!(!std::fs::symlink_metadata(&payload).unwrap().file_type().is_symlink());
}

#[test]
fn pack_refuses_to_replace_an_existing_output_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_manifest(
        dir.path(),
        &one_entry(json!({"name": "w", "dtype": "U8", "shape": [1], "hex": "05"})),
    );
    let out = dir.path().join("o.tpack");
    std::fs::write(&out, b"old").unwrap();
    assert_fails(&run!("pack", manifest, "-o", out), 4, &["o.tpack already exists", "--force"]);
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    assert_ok(&run!("pack", manifest, "-o", out, "--force"));
    assert_eq!(Container::parse(&std::fs::read(&out).unwrap()).unwrap().get("w").unwrap().payload(), [5]);
}

#[test]
fn nested_containers_unpack_and_repack() {
    let mut inner = Builder::new();
    inner.push(NewEntry::new("x", Dtype::F32, &[1], &1.5f32.to_le_bytes())).unwrap();
    let inner = inner.finish().unwrap();
    let mut outer = Builder::new();
    outer.push(NewEntry::new("sub", Dtype::CONTAINER, &[inner.len() as u64], &inner)).unwrap();
    let bytes = outer.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("n.tpack");
    std::fs::write(&input, &bytes).unwrap();
    let files = dir.path().join("files");
    assert_ok(&run!("unpack", input, "-o", files));
    assert_eq!(std::fs::read(files.join("0-sub.tpack")).unwrap(), inner);
    let again = dir.path().join("again.tpack");
    assert_ok(&run!("pack", files.join("manifest.json"), "-o", again));
    assert_eq!(std::fs::read(&again).unwrap(), bytes);
}

/// The firmware's container (`embedded/tiny-mlp/tiny-mlp.tpack`) is what packing the demo manifest gives
/// today: `tpack pack cli/demo/tiny-mlp/manifest.json -o embedded/tiny-mlp/tiny-mlp.tpack --force`.
#[test]
fn the_firmware_container_is_current() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tiny-mlp.tpack");
    assert_ok(&run!("pack", repo().join("cli/demo/tiny-mlp/manifest.json"), "-o", out));
    let checked_in = std::fs::read(repo().join("embedded/tiny-mlp/tiny-mlp.tpack")).unwrap();
    assert!(
        std::fs::read(&out).unwrap() == checked_in,
        "embedded/tiny-mlp/tiny-mlp.tpack is stale: run `cargo run -p tpack-cli -- pack cli/demo/tiny-mlp/manifest.json \
         -o embedded/tiny-mlp/tiny-mlp.tpack --force`, then `TPACK_BLESS=1 cargo test -p tiny-mlp`"
    );
}

/// The format 1.1 metadata types in a manifest: range-checked integers, f32 as its 8 hex digits, `array[]`
/// items as `{"type", "value"}` of an array type; each problem named.
#[test]
fn manifest_metadata_of_the_new_types_is_checked() {
    let err = pack_fails(
        json!({"tpack_manifest": 1, "entries": [], "metadata": [
            {"key": "a", "type": "u8", "value": 256},
            {"key": "b", "type": "i16[]", "value": [1, -40000]},
            {"key": "c", "type": "f32", "value": 1.5},
            {"key": "d", "type": "f32[]", "value": ["3f80000"]},
            {"key": "e", "type": "bool[]", "value": [1]},
            {"key": "f", "type": "array[]", "value": [{"type": "u8", "value": 1}]},
            {"key": "g", "type": "array[]", "value": [[1, 2]]}
        ]}),
        &[],
        &[
            "7 problems",
            "256 is out of range for u8",
            "item 1: -40000 is out of range for i16",
            "1.5 is not a string of the 8 hex digits",
            "\"3f80000\" is not the 8 hex digits",
            "item 0: 1 is not true or false",
            "type \"u8\" is not an array type",
            "is not {\"type\": \"<an array type>\"",
        ],
    );
    assert!(err.contains("metadata record 6 (\"g\")"), "{err}");
    // And the good spellings build the container.
    let dir = tempfile::tempdir().unwrap();
    let path = write_manifest(
        dir.path(),
        &json!({"tpack_manifest": 1, "entries": [], "metadata": [
            {"key": "a", "type": "u8", "value": 255},
            {"key": "c", "type": "f32", "value": "7f800001"},
            {"key": "f", "type": "array[]", "value": [{"type": "u8[]", "value": [1]},
                                                     {"type": "array[]", "value": []}]}
        ]}),
    );
    let out = dir.path().join("out.tpack");
    assert_ok(&run!("pack", path, "-o", out));
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    assert_eq!(c.metadata().get("a"), Some(MetaValue::U8(255)));
    let Some(MetaValue::F32(f)) = c.metadata().get("c") else { panic!("c") };
    assert_eq!(f.to_bits(), 0x7f80_0001);
    let Some(MetaValue::ArrayArray(items)) = c.metadata().get("f") else { panic!("f") };
    assert_eq!(items.count(), 2);
}
