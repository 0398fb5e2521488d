//! `tpack inspect` and `tpack verify` on intact, corrupt and foreign files.

mod common;

use common::*;
use serde_json::Value;
use tpack::write::{Builder, EntryDecl, NewEntry};
use tpack::zerocopy::little_endian::U64;
use tpack::{Container, Dtype, MetaValue};

fn sample() -> Vec<u8> {
    let mut b = Builder::new();
    b.push(NewEntry::new("layers.0.attn.q", Dtype::F32, &[2, 2], &[0; 16])).unwrap();
    b.push(NewEntry::new("layers.0.attn.k", Dtype::F32, &[2, 2], &[1; 16])).unwrap();
    b.push(NewEntry::new("layers.1/mlp", Dtype::I8, &[3], &[1, 2, 3])).unwrap();
    b.push(EntryDecl::new("boot", Dtype::RAW, &[4]).with_target(0x2000_0000).with_data(&[9; 4])).unwrap();
    b.metadata("arch", MetaValue::String("mlp")).unwrap();
    b.metadata("sizes", MetaValue::U64Array(&[U64::new(784), U64::new(10)])).unwrap();
    b.finish().unwrap()
}

fn file_with(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tpack");
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

#[test]
fn inspect_shows_a_tree_totals_and_typed_metadata() {
    let (_dir, path) = file_with(&sample());
    let text = assert_ok(&run!("inspect", path));
    for want in [
        "tpack 1.0",
        "entries (4):",
        // Natural order (`boot` first); pieces keep their separators, so `layers.1/mlp` is not `1.mlp`.
        "├── boot",
        "└── layers.",
        "    ├── 0.attn.",
        "q ",
        "k ",
        "1/mlp",
        "I8",
        "[2, 2]",
        "load at 0x20000000",
        "totals: 4 entries",
        "arch (string) = \"mlp\"",
        "sizes (u64[]) = [784, 10]",
    ] {
        assert!(text.contains(want), "inspect output lacks {want:?}:\n{text}");
    }
}

#[test]
fn inspect_json_has_the_documented_schema() {
    let (_dir, path) = file_with(&sample());
    let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", path, "--json"))).unwrap();
    assert_eq!(doc["schema"], "tpack-inspect/3");
    assert_eq!(doc["version"], serde_json::json!([1, 0]));
    assert_eq!(doc["totals"]["entries"], 4);
    assert_eq!(doc["totals"]["payload_bytes"], 16 + 16 + 3 + 4);
    assert_eq!(doc["totals"]["by_dtype"]["F32"]["entries"], 2);
    let e = &doc["entries"][3];
    assert_eq!(
        (e["name"].as_str(), e["dtype"].as_str(), e["target"].as_u64()),
        (Some("boot"), Some("RAW"), Some(0x2000_0000))
    );
    for key in ["offset", "length", "alignment", "checksum", "shape"] {
        assert!(e.get(key).is_some(), "{key}");
    }
    assert_eq!(doc["metadata"][1], serde_json::json!({"key": "sizes", "type": "u64[]", "value": [784, 10]}));
    assert!(doc["file_length"].as_u64().unwrap() > 0);
}

/// Issue 22: `inspect --json` showed an f32 as the hex digits of its bits (`"48f42400"`) and an f64 as a number.
/// Both are numbers now (the shortest decimal that reads back as the same value), and only NaN and ±∞ keep
/// their bits; text shows the same decimals. `unpack` keeps spec §13's hex, which `pack` reads back exactly.
#[test]
fn inspect_shows_f32_as_numbers_and_only_nan_and_infinity_as_bits() {
    use tpack::zerocopy::little_endian::F32;
    let f32s = [F32::new(0.1), F32::new(f32::from_bits(0x7fc0_0001)), F32::new(f32::NEG_INFINITY)];
    let mut b = Builder::new();
    b.push(NewEntry::new("w", Dtype::F32, &[1], &[0; 4])).unwrap();
    b.metadata("rope.freq_base", MetaValue::F32(500_000.0)).unwrap();
    b.metadata("f32s", MetaValue::F32Array(&f32s)).unwrap();
    b.metadata("f64", MetaValue::F64(0.1)).unwrap();
    let (dir, path) = file_with(&b.finish().unwrap());
    let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", path, "--json"))).unwrap();
    let value = |key: &str| {
        doc["metadata"].as_array().unwrap().iter().find(|m| m["key"] == key).unwrap()["value"].clone()
    };
    assert_eq!(value("rope.freq_base").to_string(), "500000.0");
    assert_eq!(value("f32s"), serde_json::json!([0.1, {"f32_bits": "7fc00001"}, {"f32_bits": "ff800000"}]));
    assert_eq!(value("f32s")[0].to_string(), "0.1", "the f32's shortest decimal, not 0.10000000149011612");
    assert_eq!(value("f64").to_string(), "0.1");
    let text = assert_ok(&run!("inspect", path));
    assert!(text.contains("rope.freq_base (f32) = 500000.0"), "{text}");
    // The manifest keeps every bit: spec §13's hex.
    let out = dir.path().join("unpacked");
    assert_ok(&run!("unpack", path, "-o", out));
    let manifest: Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let record =
        manifest["metadata"].as_array().unwrap().iter().find(|m| m["key"] == "f32s").unwrap().clone();
    assert_eq!(record["value"], serde_json::json!(["3dcccccd", "7fc00001", "ff800000"]));
}

#[test]
fn inspect_one_entry() {
    let (_dir, path) = file_with(&sample());
    let text = assert_ok(&run!("inspect", path, "--entry", "layers.1/mlp"));
    assert!(text.contains("dtype      I8") && text.contains("[3] (3 elements)"), "{text}");
    let doc: Value =
        serde_json::from_str(&assert_ok(&run!("inspect", path, "--entry", "boot", "--json"))).unwrap();
    assert_eq!(doc["length"], 4);
    assert_fails(&run!("inspect", path, "--entry", "nope"), 3, &["no entry named \"nope\""]);
}

#[test]
fn verify_passes_an_intact_file() {
    let (_dir, path) = file_with(&sample());
    let text = assert_ok(&run!("verify", path));
    assert!(text.contains("intact: 4 entries"), "{text}");
}

#[test]
fn verify_names_every_corrupt_entry() {
    let mut bytes = sample();
    let c = Container::parse(&bytes).unwrap();
    let q = c.get("layers.0.attn.q").unwrap().offset() as usize;
    let boot = c.get("boot").unwrap().offset() as usize;
    let padding = c.get("layers.1/mlp").unwrap().range().end as usize; // padding before `boot`
    bytes[q] ^= 0x80;
    bytes[boot + 3] ^= 1;
    bytes[padding] = 1;
    let (_dir, path) = file_with(&bytes);
    let err = assert_fails(&run!("verify", path), 1, &["is corrupt", "2 of 4 entries"]);
    assert!(err.contains("entry 0 \"layers.0.attn.q\"") && err.contains("R50"), "{err}");
    assert!(err.contains("entry 3 \"boot\"") && err.contains("R37"), "{err}");
    assert!(!err.contains("entry 1 ") && !err.contains("entry 2 "), "{err}");
}

/// A payload damaged two containers down: the outer entry is named, and the words say how deep and which entry
/// of the nested container. Regression: they gave the nested container's entry alone.
#[test]
fn verify_says_how_deep_a_nested_error_is() {
    use tpack::write::{StreamWriter, VecBookkeeping};
    fn written(entries: &[(&str, Dtype, &[u8])]) -> Vec<u8> {
        let mut w = StreamWriter::new(Vec::new(), VecBookkeeping);
        let shapes: Vec<[u64; 1]> = entries.iter().map(|(_, _, p)| [p.len() as u64]).collect();
        for ((name, dtype, _), shape) in entries.iter().zip(&shapes) {
            w.declare(EntryDecl::new(name, *dtype, shape)).unwrap();
        }
        for (_, _, payload) in entries {
            w.write_entry(payload).unwrap();
        }
        w.finish().unwrap()
    }
    let mut inner = written(&[("a", Dtype::U8, &[1, 2, 3, 4])]);
    let at = Container::parse(&inner).unwrap().entry(0).unwrap().offset() as usize;
    inner[at] ^= 1;
    let middle = written(&[("x", Dtype::U8, &[9]), ("deep", Dtype::CONTAINER, &inner)]);
    let outer =
        written(&[("p", Dtype::U8, &[0]), ("q", Dtype::U8, &[0]), ("mid", Dtype::CONTAINER, &middle)]);
    let (_dir, path) = file_with(&outer);
    let err = assert_fails(&run!("verify", path), 1, &["is corrupt", "1 of 3 entries"]);
    assert!(err.contains("entry 2 \"mid\""), "{err}");
    assert!(err.contains("2 levels down") && err.contains("R50"), "{err}");
    assert!(
        err.contains("(entry 0: stored") && err.contains("in the container at depth 2 inside entry 2"),
        "{err}"
    );
    // The JSON report gives the rule the nested payload breaks, R50, as spec §6 says (regression: it said R39,
    // the rule for a nested container's structure).
    let o = run!("verify", "--json", path);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["files"][0]["problems"][0]["entry"], 2, "{doc}");
    assert_eq!(doc["files"][0]["problems"][0]["rule"], "R50", "{doc}");
}

#[test]
fn verify_and_inspect_explain_structural_damage() {
    let bytes = sample();
    let (_dir, path) = file_with(&bytes[..bytes.len() - 1]);
    assert_fails(&run!("verify", path), 1, &["m.tpack is not a valid tpack file", "R"]);
    assert_fails(&run!("inspect", path), 1, &["m.tpack is not a valid tpack file"]);
    let mut bad_header = bytes.clone();
    bad_header[20] ^= 1;
    let (_dir2, path2) = file_with(&bad_header);
    assert_fails(&run!("verify", path2), 1, &["not a valid tpack file"]);
}

#[test]
fn foreign_files_get_a_hint() {
    let o = run!("verify", fixture("model.safetensors"));
    assert_fails(&o, 1, &["not a valid tpack file", "looks like a safetensors file", "tpack convert"]);
    // `inspect` reads foreign files itself (tests/inspect_scale.rs); a damaged one still gets the hint.
    let bytes = std::fs::read(fixture("model.gguf")).unwrap();
    let (_dir, path) = file_with(&bytes[..20]);
    assert_fails(&run!("verify", path), 1, &["looks like a GGUF file"]);
}

#[test]
fn missing_and_unreadable_files_are_io_errors() {
    let o = run!("verify", "/nonexistent/m.tpack");
    assert_fails(&o, 4, &["cannot open /nonexistent/m.tpack", "no such file or directory"]);
    let dir = tempfile::tempdir().unwrap();
    assert_fails(&run!("inspect", dir.path()), 4, &["is a directory"]);
}

#[test]
fn empty_file_is_refused() {
    let (_dir, path) = file_with(&[]);
    assert_fails(&run!("verify", path), 1, &["not a valid tpack file", "R1"]);
}

#[test]
fn usage_errors_exit_2_and_help_has_examples_and_exit_codes() {
    let o = run!("verify");
    assert_eq!(o.status.code(), Some(2));
    let help = assert_ok(&run!("--help"));
    for want in ["Examples:", "tpack convert", "Exit codes:", "4  a file cannot be read or written"] {
        assert!(help.contains(want), "{want}: {help}");
    }
    for cmd in ["inspect", "verify", "pack", "unpack", "convert"] {
        let h = assert_ok(&run!(cmd, "--help"));
        assert!(h.contains("Example"), "{cmd} --help has no example:\n{h}");
    }
}

#[test]
fn no_progress_bar_when_not_a_terminal() {
    // Tests run with stderr captured: a bar would leave escape codes or carriage returns behind.
    let (_dir, path) = file_with(&sample());
    let o = run!("verify", path);
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
}
