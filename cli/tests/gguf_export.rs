//! tpack → GGUF: every GGUF written by gguf-py comes back byte for byte through tpack, gguf-py reads back
//! what it wrote, splits are named and keyed as llama.cpp's, and what GGUF cannot hold is refused by name.

mod common;

use std::path::{Path, PathBuf};

use common::hand_made::HandMadeGguf;
use common::*;
use serde_json::Value;
use tpack::write::{Builder, EntryDecl, NewEntry};
use tpack::zerocopy::little_endian::U64;
use tpack::{ArrayArray, Container, Dtype, MetaValue};

/// The GGUF fixtures, which all come back byte for byte: among them a vocabulary file with no tensors and no
/// padding after its metadata (`vocab.gguf`, recorded as `gguf.unpadded`), and arrays nested 9 levels deep,
/// the most a tpack value holds (`deep.gguf`).
const FIXTURES: [&str; 7] = [
    "model.gguf",
    "aligned64.gguf",
    "alltypes.gguf",
    "mixed.gguf",
    "bigendian.gguf",
    "vocab.gguf",
    "deep.gguf",
];

/// `IN` → tpack → GGUF in `dir`; returns the GGUF written back and the convert report of the first step.
fn round_trip(dir: &Path, input: &Path) -> (PathBuf, String) {
    let stem = input.file_stem().unwrap().to_str().unwrap();
    let mid = dir.join(format!("{stem}.tpack"));
    let back = dir.join(format!("{stem}.back.gguf"));
    let report = assert_ok(&run!("convert", input, mid));
    assert_ok(&run!("convert", mid, back));
    (back, report)
}

#[test]
fn gguf_to_tpack_to_gguf_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    for name in FIXTURES {
        let (back, report) = round_trip(dir.path(), &fixture(name));
        assert!(!report.contains("note:"), "{name}: {report}");
        let (a, b) = (std::fs::read(fixture(name)).unwrap(), std::fs::read(&back).unwrap());
        assert_eq!(a.len(), b.len(), "{name}");
        let first = a.iter().zip(&b).position(|(x, y)| x != y);
        assert_eq!(first, None, "{name}: first differing byte");
    }
}

/// What gguf-py reads from the GGUF written back is what it read from its own file.
#[test]
fn gguf_py_reads_the_written_back_gguf_as_its_own() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let expected = expected();
    for name in FIXTURES {
        let (back, _) = round_trip(dir.path(), &fixture(name));
        assert_eq!(python_readback(&py, &back), expected[name], "{name}");
    }
}

/// A big-endian file comes back big-endian (recorded as `gguf.big_endian`), its elements swapped back on the
/// way out; one with a quantized tensor is refused, since the byte order of its blocks is not defined.
#[test]
fn big_endian_gguf_comes_back_big_endian() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("be.tpack");
    assert_ok(&run!("convert", fixture("bigendian.gguf"), mid));
    let bytes = std::fs::read(&mid).unwrap();
    let c = Container::parse(&bytes).unwrap();
    assert_eq!(c.metadata().get("gguf.big_endian"), Some(MetaValue::Bool(true)));
    let mut b = Builder::new();
    b.push(NewEntry::new("q", Dtype::Q8_0, &[32], &[0; 34])).unwrap();
    b.metadata("gguf.big_endian", MetaValue::Bool(true)).unwrap();
    let input = dir.path().join("q.tpack");
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let out = dir.path().join("q.gguf");
    assert_fails(&run!("convert", input, out), 3, &["entry \"q\"", "Q8_0", "big-endian", "not defined"]);
    assert!(!out.exists());
}

/// The tpack metadata as `inspect --json` shows it: f32 as a number, arrays of arrays as `{"type", "value"}`
/// items, `bool[]` as booleans; the GGUF file inspected directly shows the same records.
#[test]
fn inspect_shows_the_exact_types_in_spec_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("all.tpack");
    assert_ok(&run!("convert", fixture("alltypes.gguf"), mid));
    let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", mid, "--json", "--full"))).unwrap();
    let meta =
        |key: &str| doc["metadata"].as_array().unwrap().iter().find(|m| m["key"] == key).cloned().unwrap();
    assert_eq!(
        meta("test.float32"),
        serde_json::json!({"key": "test.float32", "type": "f32", "value": -0.3})
    );
    assert_eq!(meta("test.array.bool")["value"], serde_json::json!([false, true, true, false]));
    assert_eq!(meta("test.array.int8")["type"], "i8[]");
    assert_eq!(
        meta("test.nested.mixed")["value"],
        serde_json::json!([
            {"type": "bool[]", "value": [true, false]}, {"type": "f32[]", "value": [0.5]},
            {"type": "string[]", "value": ["s"]}, {"type": "i32[]", "value": [7]}])
    );
    // Read lazily from the GGUF file, the records are those `convert` stored (tpack sorts them by key).
    let direct: Value =
        serde_json::from_str(&assert_ok(&run!("inspect", fixture("alltypes.gguf"), "--json", "--full")))
            .unwrap();
    let sorted = |d: &Value| {
        let mut records = d["metadata"].as_array().unwrap().clone();
        records.sort_by(|a, b| a["key"].as_str().cmp(&b["key"].as_str()));
        records
    };
    assert_eq!(sorted(&direct), sorted(&doc));
    let q4k = doc["entries"].as_array().unwrap().iter().find(|e| e["name"] == "t.q4_k").unwrap();
    assert_eq!(q4k["block"], serde_json::json!({"elements": 256, "bytes": 144}));
    let text = assert_ok(&run!("inspect", mid, "--entry", "t.iq2_xxs"));
    assert!(text.contains("IQ2_XXS (256 elements / 66 bytes per block)"), "{text}");
    // A foreign file shows the same.
    let text = assert_ok(&run!("inspect", fixture("mixed.gguf"), "--entry", "blk.0.ffn_up.weight"));
    assert!(text.contains("MXFP4 (32 elements / 17 bytes per block)"), "{text}");
}

/// `unpack` writes the new types into the manifest in spec §13's spelling, and `pack` rebuilds the
/// identical container from it; that container gives back the GGUF file.
#[test]
fn unpack_and_pack_keep_every_gguf_type() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("all.tpack");
    assert_ok(&run!("convert", fixture("alltypes.gguf"), mid));
    let files = dir.path().join("files");
    assert_ok(&run!("unpack", mid, "-o", files));
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(files.join("manifest.json")).unwrap()).unwrap();
    let deep =
        manifest["metadata"].as_array().unwrap().iter().find(|m| m["key"] == "test.nested.deep").unwrap();
    assert_eq!(deep["value"][0]["type"], "array[]");
    assert_eq!(deep["value"][0]["value"][1], serde_json::json!({"type": "i32[]", "value": [2, 3]}));
    let again = dir.path().join("again.tpack");
    assert_ok(&run!("pack", files.join("manifest.json"), "-o", again));
    assert!(std::fs::read(&again).unwrap() == std::fs::read(&mid).unwrap(), "pack gives another container");
    let back = dir.path().join("back.gguf");
    assert_ok(&run!("convert", again, back));
    assert!(std::fs::read(&back).unwrap() == std::fs::read(fixture("alltypes.gguf")).unwrap());
}

/// Q8_1 is left out of the gguf-py fixtures (gguf-py's table gives it 40-byte blocks where ggml has 36), so
/// this file is built by hand, from gguf.md: one Q8_1 tensor of 2 × 64 elements, 4 blocks of 36 bytes.
#[test]
fn q8_1_is_ggmls_36_byte_block_both_ways() {
    let mut gguf = HandMadeGguf::v3(1, 0);
    // The tensor info: name, n_dims, ne[0], ne[1], GGML_TYPE_Q8_1, offset.
    gguf.string("q8_1").u32(2).u64(64).u64(2).u32(9).u64(0).pad_to(32);
    let blocks: Vec<u8> = (0..4 * 36).map(|i| (i * 7 % 251) as u8).collect();
    gguf.bytes.extend(&blocks);
    gguf.pad_to(32);
    let bytes = gguf.bytes;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("q8_1.gguf");
    std::fs::write(&input, &bytes).unwrap();
    let (back, _) = round_trip(dir.path(), &input);
    let mid = std::fs::read(dir.path().join("q8_1.tpack")).unwrap();
    let c = Container::parse(&mid).unwrap();
    let e = c.get("q8_1").unwrap();
    assert_eq!((e.dtype(), e.shape().dims(), e.payload()), (Dtype::Q8_1, &[2u64, 64][..], &blocks[..]));
    assert!(std::fs::read(&back).unwrap() == bytes);
}

/// A GGUF file not laid out as GGUF writers lay theirs out (here: bytes after the last tensor's padding)
/// converts, with a note that it will not come back byte for byte; the GGUF written back is valid.
#[test]
fn a_non_canonical_gguf_converts_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tail.gguf");
    let mut bytes = std::fs::read(fixture("aligned64.gguf")).unwrap();
    bytes.extend([0u8; 64]);
    std::fs::write(&input, &bytes).unwrap();
    let (back, report) = round_trip(dir.path(), &input);
    assert!(report.contains("will not give") && report.contains("bytes long"), "{report}");
    assert!(std::fs::read(&back).unwrap() == std::fs::read(fixture("aligned64.gguf")).unwrap());
    // Non-zero padding is told apart too.
    let mut bytes = std::fs::read(fixture("aligned64.gguf")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] = 1;
    std::fs::write(&input, &bytes).unwrap();
    let report = assert_ok(&run!("convert", input, dir.path().join("pad.tpack")));
    assert!(report.contains("padding after the last tensor is not zero"), "{report}");
}

/// A tpack file that never was GGUF: metadata in key order, alignment 32, read by gguf-py.
#[test]
fn a_tpack_file_from_elsewhere_becomes_a_gguf_file() {
    let mut b = Builder::new();
    let w: Vec<u8> = (0..24).collect();
    b.push(NewEntry::new("w", Dtype::F32, &[2, 3], &w)).unwrap();
    b.push(NewEntry::new("q", Dtype::Q4_K, &[256], &[7u8; 144])).unwrap();
    let long = "l".repeat(64);
    b.push(NewEntry::new(&long, Dtype::I8, &[1], &[1])).unwrap();
    b.metadata("z.last", MetaValue::U64Array(&[U64::new(1), U64::new(2)])).unwrap();
    b.metadata("a.first", MetaValue::String("x")).unwrap();
    let items = [MetaValue::BoolArray(&[true]), MetaValue::U8Array(&[1, 2])];
    b.metadata("m.nested", MetaValue::ArrayArray(ArrayArray::new(&items))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.tpack");
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let out = dir.path().join("m.out");
    let report = assert_ok(&run!("convert", input, out, "--to", "gguf"));
    assert!(report.contains("1 tensor name is 64 bytes or longer, which llama.cpp refuses"), "{report}");
    let bytes = std::fs::read(&out).unwrap();
    let g = tpack_gguf::parse(&bytes).unwrap();
    assert_eq!((g.version, g.alignment), (3, 32));
    let keys: Vec<&str> = g.metadata.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, ["a.first", "m.nested", "z.last"]);
    assert_eq!(g.tensors[0].data, &w[..]);
    assert_eq!(g.tensors[1].dims, [256]);
    let Some(py) = python() else { return };
    let read = python_readback(&py, &out);
    assert_eq!(
        read["metadata"]["m.nested"]["value"][1],
        serde_json::json!({"item_type": "UINT8", "value": [1, 2]})
    );
    assert_eq!(read["tensors"]["q"]["ggml_type"], "Q4_K");
    assert_eq!(read["tensors"]["w"]["sha256"], sha256(&w));
}

/// An entry asking for more than tpack's default alignment sets the GGUF alignment.
#[test]
fn a_larger_payload_alignment_becomes_general_alignment() {
    let mut b = Builder::new();
    b.push(EntryDecl::new("w", Dtype::F32, &[1]).with_alignment(256).with_data(&[0, 0, 128, 63])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.tpack");
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let out = dir.path().join("m.gguf");
    assert_ok(&run!("convert", input, out));
    let bytes = std::fs::read(&out).unwrap();
    let g = tpack_gguf::parse(&bytes).unwrap();
    assert_eq!(g.alignment, 256);
    assert_eq!(g.metadata, [("general.alignment", tpack_gguf::GgufValue::U32(256))]);
    assert_eq!(g.data_offset % 256, 0);
}

/// Builds a tpack file with `entry` (and a fine one) and `meta`, converts it to GGUF, and expects a refusal
/// naming every one of `words`, with nothing written.
fn refused(decl: Option<(EntryDecl<'_>, &[u8])>, meta: Option<(&str, MetaValue<'_>)>, words: &[&str]) {
    let mut b = Builder::new();
    b.push(NewEntry::new("fine", Dtype::F32, &[1], &[0; 4])).unwrap();
    if let Some((decl, data)) = decl {
        b.push(decl.with_data(data)).unwrap();
    }
    if let Some((key, value)) = meta {
        b.metadata(key, value).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.tpack");
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let out = dir.path().join("m.gguf");
    assert_fails(&run!("convert", input, out), 3, words);
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing else is left behind");
}

#[test]
fn what_gguf_cannot_hold_is_refused_by_name() {
    refused(Some((EntryDecl::new("boot", Dtype::RAW, &[2]), &[1, 2])), None, &["entry \"boot\"", "RAW"]);
    let inner = {
        let mut b = Builder::new();
        b.push(NewEntry::new("x", Dtype::U8, &[1], &[1])).unwrap();
        b.finish().unwrap()
    };
    refused(
        Some((EntryDecl::new("sub", Dtype::CONTAINER, &[inner.len() as u64]), &inner)),
        None,
        &["entry \"sub\"", "nested container"],
    );
    refused(
        Some((EntryDecl::new("loaded", Dtype::F32, &[1]).with_target(0x2000_0000), &[0; 4])),
        None,
        &["entry \"loaded\"", "load address (0x20000000)", "GGUF has no place"],
    );
    for (dtype, name) in
        [(Dtype::U8, "U8"), (Dtype::BOOL, "BOOL"), (Dtype::F8E4M3, "F8E4M3"), (Dtype::C64, "C64")]
    {
        refused(
            Some((EntryDecl::new("odd", dtype, &[8]), &[0; 64][..dtype.byte_len(&[8]).unwrap() as usize])),
            None,
            &["entry \"odd\"", &format!("dtype {name}"), "GGUF has no tensor type"],
        );
    }
    refused(
        Some((EntryDecl::new("scalar", Dtype::F32, &[]), &[0; 4])),
        None,
        &["\"scalar\"", "0 dimensions"],
    );
    refused(
        Some((EntryDecl::new("wide", Dtype::I8, &[1, 1, 1, 1, 2]), &[0; 2])),
        None,
        &["\"wide\"", "5 dimensions", "1 to 4"],
    );
    refused(
        None,
        Some(("blob", MetaValue::Bytes(b"\x00"))),
        &["metadata \"blob\"", "bytes", "GGUF has no type"],
    );
    refused(None, Some(("gguf.mine", MetaValue::U64(1))), &["metadata \"gguf.mine\"", "reserves"]);
    refused(None, Some(("gguf.version", MetaValue::U32(4))), &["gguf.version", "2 or 3"]);
    refused(None, Some(("gguf.key_order", MetaValue::U64(1))), &["gguf.key_order", "string[]"]);
    refused(None, Some(("gguf.big_endian", MetaValue::U8(1))), &["gguf.big_endian", "bool true"]);
    refused(None, Some(("gguf.unpadded", MetaValue::U8(1))), &["gguf.unpadded", "no padding", "bool true"]);
    refused(None, Some(("general.alignment", MetaValue::U32(48))), &["general.alignment", "power of two"]);
}

/// A GGUF key in tpack's reserved namespace could not be told from tpack's own record: refused on the way in.
#[test]
fn a_gguf_key_in_the_reserved_namespace_is_refused() {
    let mut gguf = HandMadeGguf::v3(0, 1);
    // A u32 (type 4) of value 1.
    gguf.string("gguf.key_order").u32(4).u32(1);
    let bytes = gguf.bytes;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("r.gguf");
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.path().join("r.tpack");
    assert_fails(&run!("convert", input, out), 3, &["metadata key \"gguf.key_order\"", "reserves"]);
    assert!(!out.exists());
}

/// The recorded key order no longer matching the metadata (a key added by hand): the recorded keys keep their
/// order, the new one follows, and a note says so.
#[test]
fn an_edited_key_order_is_followed_as_far_as_it_goes() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("m.tpack");
    assert_ok(&run!("convert", fixture("aligned64.gguf"), mid));
    let files = dir.path().join("files");
    assert_ok(&run!("unpack", mid, "-o", files));
    let path = files.join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let records = manifest["metadata"].as_array_mut().unwrap();
    records.push(serde_json::json!({"key": "aaa.added", "type": "u8", "value": 5}));
    std::fs::write(&path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let edited = dir.path().join("edited.tpack");
    assert_ok(&run!("pack", path, "-o", edited));
    let back = dir.path().join("back.gguf");
    let report = assert_ok(&run!("convert", edited, back));
    assert!(report.contains("note:") && report.contains("1 keys not in it"), "{report}");
    let bytes = std::fs::read(&back).unwrap();
    let keys: Vec<&str> = tpack_gguf::parse(&bytes).unwrap().metadata.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        keys,
        ["general.architecture", "general.alignment", "general.name", "test.uint32", "aaa.added"]
    );
}

/// Splits as llama.cpp writes them: `NAME-0000i-of-0000n.gguf`, each a GGUF file gguf-py reads, the first
/// with all the metadata, each with split.no (u16), split.count (u16) and split.tensors.count (i32), the
/// tensors in order across them; together exactly the input's tensors.
#[test]
fn max_shard_size_writes_llama_cpp_splits() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("mixed.tpack");
    assert_ok(&run!("convert", fixture("mixed.gguf"), mid));
    let out = dir.path().join("split.gguf");
    let report = assert_ok(&run!("convert", mid, out, "--max-shard-size", "0.5KB"));
    assert!(!out.exists(), "no unsplit file");
    let want = &expected()["mixed.gguf"];
    let tensors = want["tensors"].as_object().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("split"))
        .collect();
    names.sort();
    let n = names.len();
    assert!(n >= 3, "{names:?}");
    let expected_names: Vec<String> = (1..=n).map(|i| format!("split-{i:05}-of-{n:05}.gguf")).collect();
    assert_eq!(names, expected_names);
    assert!(report.contains(&format!("{n} files")), "{report}");
    let mut seen = Vec::new();
    let py = python();
    for (i, name) in names.iter().enumerate() {
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        let g = tpack_gguf::parse(&bytes).unwrap();
        use tpack_gguf::GgufValue::{I32, U16};
        assert_eq!(g.get("split.no"), Some(&U16(i as u16)), "{name}");
        assert_eq!(g.get("split.count"), Some(&U16(n as u16)), "{name}");
        assert_eq!(g.get("split.tensors.count"), Some(&I32(tensors.len() as i32)), "{name}");
        let size: usize = g.tensors.iter().map(|t| t.data.len()).sum();
        assert!(size <= 500 || g.tensors.len() == 1, "{name}: {size} bytes in {} tensors", g.tensors.len());
        if i == 0 {
            assert_eq!(g.metadata.len(), want["metadata"].as_object().unwrap().len() + 3);
            assert_eq!(g.metadata.last().unwrap().0, "split.tensors.count");
        } else {
            assert_eq!(g.metadata.len(), 3, "{name}: only the split keys");
        }
        if let Some(py) = &py {
            let read = python_readback(py, &dir.path().join(name));
            for (t, info) in read["tensors"].as_object().unwrap() {
                assert_eq!(info, &tensors[t], "{name}: {t}");
            }
            if i == 0 {
                for (key, m) in want["metadata"].as_object().unwrap() {
                    assert_eq!(&read["metadata"][key], m, "{key}");
                }
            }
        }
        seen.extend(g.tensors.iter().map(|t| t.name.to_owned()));
    }
    // In the input's order (serde_json's map is sorted, so the order is read from the file itself).
    let original = std::fs::read(fixture("mixed.gguf")).unwrap();
    let order: Vec<String> =
        tpack_gguf::parse(&original).unwrap().tensors.iter().map(|t| t.name.to_owned()).collect();
    assert_eq!(seen, order, "the tensors, in order, once each");
    assert_eq!(order.len(), tensors.len());
}

/// Existing shards are not replaced without --force (checked before any work); one shard is the plain file;
/// a bad size is said in words; tpack output cannot be split.
#[test]
fn max_shard_size_checks_its_outputs_and_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("m.tpack");
    assert_ok(&run!("convert", fixture("aligned64.gguf"), mid));
    let out = dir.path().join("m.gguf");
    // Everything fits in one shard: the plain file, without split keys, byte for byte the original.
    assert_ok(&run!("convert", mid, out, "--max-shard-size", "1GiB"));
    assert!(std::fs::read(&out).unwrap() == std::fs::read(fixture("aligned64.gguf")).unwrap());
    let second = dir.path().join("m-00002-of-00003.gguf");
    std::fs::write(&second, b"precious").unwrap();
    assert_fails(
        &run!("convert", mid, out, "--max-shard-size", "64"),
        4,
        &["m-00002-of-00003.gguf", "--force"],
    );
    assert_eq!(std::fs::read(&second).unwrap(), b"precious");
    assert!(!dir.path().join("m-00001-of-00003.gguf").exists());
    assert_ok(&run!("convert", mid, out, "--max-shard-size", "64", "--force"));
    tpack_gguf::parse(&std::fs::read(&second).unwrap()).unwrap();
    assert_fails(
        &run!("convert", mid, out, "--max-shard-size", "2 gigabytes", "--force"),
        2, // refused by the argument parser, as a usage error
        &["--max-shard-size", "is not a size"],
    );
    assert_fails(
        &run!("convert", fixture("mixed.gguf"), dir.path().join("x.tpack"), "--max-shard-size", "1MB"),
        3,
        &["--max-shard-size", "tpack output is written as one file"],
    );
}

/// `inspect --json` cuts long arrays inside an `array[]` too, at every level, each marked; `--full` does not.
#[test]
fn inspect_cuts_long_arrays_inside_arrays_of_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("m.json");
    let doc = serde_json::json!({"tpack_manifest": 1, "entries": [], "metadata": [{"key": "n", "type": "array[]",
        "value": [{"type": "u8[]", "value": (0..40).collect::<Vec<u8>>()},
                  {"type": "array[]", "value": [{"type": "string[]", "value": vec!["x"; 33]}]}]}]});
    std::fs::write(&manifest, doc.to_string()).unwrap();
    let out = dir.path().join("m.tpack");
    assert_ok(&run!("pack", manifest, "-o", out));
    let cut: Value = serde_json::from_str(&assert_ok(&run!("inspect", out, "--json"))).unwrap();
    let n = &cut["metadata"][0]["value"];
    assert_eq!((n[0]["value"].as_array().unwrap().len(), &n[0]["count"]), (32, &serde_json::json!(40)));
    assert_eq!(n[1]["value"][0]["count"], 33);
    assert_eq!(cut["totals"]["elided_values"], 2);
    let full: Value = serde_json::from_str(&assert_ok(&run!("inspect", out, "--json", "--full"))).unwrap();
    assert_eq!(full["metadata"][0]["value"], doc["metadata"][0]["value"]);
}

/// `gguf.unpadded` describes a file with no tensors; a container that has tensors is written padded, as every
/// GGUF writer pads before tensor data, with a note.
#[test]
fn a_stale_unpadded_record_is_noted_and_the_file_padded() {
    let mut b = Builder::new();
    b.push(NewEntry::new("w", Dtype::F32, &[1], &[0; 4])).unwrap();
    b.metadata("gguf.unpadded", MetaValue::Bool(true)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.tpack");
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let out = dir.path().join("m.gguf");
    let report = assert_ok(&run!("convert", input, out));
    assert!(report.contains("note: gguf.unpadded records a GGUF file with no tensors"), "{report}");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes.len() % 32, 0, "padded to the alignment");
    assert_eq!(tpack_gguf::parse(&bytes).unwrap().tensors.len(), 1);
}

/// The files a sharded output would replace are checked before the container's payloads are verified, as
/// every other check of the output comes before the work: an existing split is refused at once (exit 4),
/// even when verifying would have found the input corrupt (exit 1), and only then is the input verified.
#[test]
fn an_existing_split_is_refused_before_the_input_is_verified() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("mixed.tpack");
    assert_ok(&run!("convert", fixture("mixed.gguf"), mid));
    // The splits an intact copy gives, which the corrupt one would be written as.
    let out = dir.path().join("split.gguf");
    assert_ok(&run!("convert", &mid, &out, "--max-shard-size", "0.5KB"));
    let first = dir.path().join("split-00001-of-00004.gguf");
    assert!(first.exists(), "{:?}", std::fs::read_dir(dir.path()).unwrap().collect::<Vec<_>>());
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "gguf") && path != first {
            std::fs::remove_file(path).unwrap();
        }
    }
    let mut bytes = std::fs::read(&mid).unwrap();
    let at = usize::try_from(Container::parse(&bytes).unwrap().entries().next().unwrap().offset()).unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(&mid, &bytes).unwrap();
    assert_fails(
        &run!("convert", &mid, &out, "--max-shard-size", "0.5KB"),
        4,
        &["split-00001-of-00004.gguf", "--force"],
    );
    std::fs::remove_file(&first).unwrap();
    assert_fails(
        &run!("convert", mid, out, "--max-shard-size", "0.5KB"),
        1,
        &["is corrupt", "not converted"],
    );
}

/// With `--max-shard-size`, a model that fits in one shard is written as OUT itself: an existing OUT is then
/// refused without `--force` and replaced with it, as without the flag (it used to be replaced silently).
#[test]
fn a_split_output_that_fits_in_one_file_does_not_replace_out_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("m.tpack");
    assert_ok(&run!("convert", fixture("model.gguf"), mid));
    let out = dir.path().join("out.gguf");
    std::fs::write(&out, b"mine").unwrap();
    assert_fails(&run!("convert", &mid, &out, "--max-shard-size", "10GB"), 4, &["out.gguf", "--force"]);
    assert_eq!(std::fs::read(&out).unwrap(), b"mine");
    assert_ok(&run!("convert", &mid, &out, "--max-shard-size", "10GB", "--force"));
    assert!(std::fs::read(&out).unwrap() == std::fs::read(fixture("model.gguf")).unwrap());
}
