//! TensorFlow checkpoints and SavedModel variables written by TensorFlow (`fixtures/tensorflow/
//! make_tensorflow.py`): each converts to a container whose every tensor is what
//! `tf.train.load_checkpoint(...).get_tensor` reads (hashed into `expected.json`), partitioned tensors put
//! together from their slices; `inspect` reads each by its directory, prefix or index file; damaged data
//! files, damaged indexes and hostile hand-made indexes are refused with words that say why.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};
use tpack::{Container, Dtype};

fn tf_fixture(name: &str) -> PathBuf {
    fixture("tensorflow").join(name)
}

fn expected_tf() -> Value {
    serde_json::from_slice(&std::fs::read(tf_fixture("expected.json")).unwrap()).unwrap()
}

/// TensorFlow's name for a tpack dtype, as `make_tensorflow.py` writes it into `expected.json`.
fn tf_type(d: Dtype) -> &'static str {
    match d.name().unwrap() {
        "F32" => "float32",
        "F16" => "float16",
        "BF16" => "bfloat16",
        "F64" => "float64",
        "I8" => "int8",
        "I16" => "int16",
        "I32" => "int32",
        "I64" => "int64",
        "U8" => "uint8",
        "U16" => "uint16",
        "U32" => "uint32",
        "U64" => "uint64",
        "BOOL" => "bool",
        "C64" => "complex64",
        other => panic!("no TensorFlow type for {other}"),
    }
}

/// What a container converted from a bundle holds, in the schema of `expected.json` (without "skipped").
fn described(container: &Path) -> Value {
    let bytes = std::fs::read(container).unwrap();
    let c = Container::parse(&bytes).unwrap();
    let tensors: BTreeMap<String, Value> = c
        .entries()
        .map(|e| {
            let v = json!({"dtype": tf_type(e.dtype()), "shape": e.shape().dims(), "sha256": sha256(e.payload())});
            (e.name().to_owned(), v)
        })
        .collect();
    json!(tensors)
}

/// Each fixture as a user names it: a SavedModel directory, a checkpoint prefix.
const BUNDLES: [(&str, &str); 3] =
    [("saved_model", "saved_model"), ("constants_only", "constants_only"), ("sharded", "sharded/ckpt")];

#[test]
fn every_bundle_converts_to_what_tensorflow_reads() {
    let expected = expected_tf();
    let dir = tempfile::tempdir().unwrap();
    for (name, input) in BUNDLES {
        let out = dir.path().join(format!("{name}.tpack"));
        let o = run!("convert", tf_fixture(input), &out);
        assert_ok(&o);
        assert_eq!(described(&out), expected[name]["tensors"], "{name}");
        // What is not a tensor of numbers is named in a note.
        for skipped in expected[name]["skipped"].as_array().unwrap() {
            assert!(stdout(&o).contains(skipped.as_str().unwrap()), "{name}: {}", stdout(&o));
        }
    }
    // Every dtype tpack shares with TensorFlow, a scalar, an empty tensor, a nested module.
    let tensors = expected["saved_model"]["tensors"].as_object().unwrap();
    assert_eq!(tensors.len(), 17);
    for key in [
        "step/.ATTRIBUTES/VARIABLE_VALUE",
        "empty/.ATTRIBUTES/VARIABLE_VALUE",
        "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE",
    ] {
        assert!(tensors.contains_key(key), "{key}");
    }
}

#[test]
fn a_saved_model_whose_weights_are_graph_constants_converts_empty_and_says_why() {
    // Its variables bundle holds no tensor: the note says that constants of the graph are not read, rather
    // than leaving an empty container unexplained. A checkpoint with no tensor is not a SavedModel: no such note.
    let dir = tempfile::tempdir().unwrap();
    let o = run!("convert", tf_fixture("constants_only"), dir.path().join("c.tpack"));
    assert_ok(&o);
    assert!(stdout(&o).contains("(0 tensors"), "{}", stdout(&o));
    assert!(stdout(&o).contains("constants of its graph (in saved_model.pb) are not read"), "{}", stdout(&o));
    let o = run!("convert", tf_fixture("saved_model"), dir.path().join("s.tpack"));
    assert_ok(&o);
    assert!(!stdout(&o).contains("constants of its graph"), "{}", stdout(&o));
}

#[test]
fn the_sharded_checkpoint_has_several_data_files_and_partitioned_tensors() {
    // What makes the fixture worth having: TensorFlow split it over four files, and cut a tensor into slices
    // (slice keys start with a 0 byte, OrderedCode's 0).
    let files = std::fs::read_dir(tf_fixture("sharded")).unwrap().count();
    assert!(files >= 4, "{files}");
    let index = std::fs::read(tf_fixture("sharded/ckpt.index")).unwrap();
    assert!(index.windows(3).any(|w| w == b"\x00\x01\x01"), "no slice key");
}

#[test]
fn inspect_reads_each_bundle_by_directory_prefix_or_index() {
    let expected = expected_tf();
    for (name, path) in [
        ("saved_model", "saved_model"),
        ("saved_model", "saved_model/variables"),
        ("saved_model", "saved_model/variables/variables.index"),
        ("saved_model", "saved_model/variables/variables"),
        ("sharded", "sharded/ckpt"),
        ("sharded", "sharded/ckpt.index"),
    ] {
        let json: Value =
            serde_json::from_str(&tpack_cli::run_inspect(&tf_fixture(path), None, true).unwrap()).unwrap();
        assert_eq!(json["format"], "TensorFlow checkpoint", "{path}");
        let listed: BTreeMap<&str, &Value> = json["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["name"].as_str().unwrap(), &e["shape"]))
            .collect();
        let tensors = expected[name]["tensors"].as_object().unwrap();
        assert_eq!(listed.len(), tensors.len(), "{path}");
        for (t, v) in tensors {
            assert_eq!(listed.get(t.as_str()).copied(), Some(&v["shape"]), "{path}: {t}");
        }
    }
}

#[test]
fn a_checkpoint_directory_is_read_at_its_latest_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(tf_fixture("sharded")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        dir.path().join("checkpoint"),
        "model_checkpoint_path: \"ckpt\"\nall_model_checkpoint_paths: \"ckpt\"\n",
    )
    .unwrap();
    let out = dir.path().join("out.tpack");
    assert_ok(&run!("convert", dir.path(), &out));
    assert_eq!(described(&out), expected_tf()["sharded"]["tensors"]);
}

#[test]
fn types_tpack_has_no_type_for_are_refused() {
    let expected = expected_tf();
    let dir = tempfile::tempdir().unwrap();
    for (name, words) in expected["unsupported"].as_object().unwrap() {
        let words: Vec<&str> = words.as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
        let out = dir.path().join("out.tpack");
        assert_fails(&run!("convert", tf_fixture(&format!("unsupported/{name}")), &out), 3, &words);
        assert!(!out.exists());
    }
}

/// A copy of the SavedModel's bundle in a fresh directory, `damage` applied to its files (by name).
fn damaged(dir: &Path, damage: impl Fn(&str, &mut Vec<u8>)) -> PathBuf {
    for f in std::fs::read_dir(tf_fixture("saved_model/variables")).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_str().unwrap().to_owned();
        let mut bytes = std::fs::read(&f).unwrap();
        damage(&name, &mut bytes);
        std::fs::write(dir.join(&name), bytes).unwrap();
    }
    dir.join("variables.index")
}

fn refused(index: &Path, words: &[&str]) {
    let out = index.with_file_name("out.tpack");
    assert_fails(&run!("convert", index, &out), 3, words);
    assert!(!out.exists());
}

#[test]
fn a_damaged_data_file_or_index_is_refused() {
    let data = "variables.data-00000-of-00001";
    // A flipped byte in a tensor: its CRC-32C.
    let dir = tempfile::tempdir().unwrap();
    refused(
        &damaged(dir.path(), |n, b| {
            if n == data {
                b[0] ^= 1
            }
        }),
        &["CRC-32C", "damaged"],
    );
    // A data file cut short.
    let dir = tempfile::tempdir().unwrap();
    refused(
        &damaged(dir.path(), |n, b| {
            if n == data {
                b.truncate(100)
            }
        }),
        &["past the end of data file 0"],
    );
    // A data file missing.
    let dir = tempfile::tempdir().unwrap();
    let index = damaged(dir.path(), |_, _| {});
    std::fs::remove_file(dir.path().join(data)).unwrap();
    refused(&index, &["data file that cannot be read", data]);
    // A flipped byte in the index's data block: the block's CRC-32C.
    let dir = tempfile::tempdir().unwrap();
    refused(
        &damaged(dir.path(), |n, b| {
            if n == "variables.index" {
                b[40] ^= 0x20
            }
        }),
        &["block at offset 0", "CRC-32C"],
    );
    // An index cut short is no SSTable, so no format the tool reads.
    let dir = tempfile::tempdir().unwrap();
    refused(
        &damaged(dir.path(), |n, b| {
            if n == "variables.index" {
                b.truncate(b.len() - 1)
            }
        }),
        &["not a tpack"],
    );
}

// Hand-made indexes: TensorFlow does not write these, so they are built here, with the table format's own
// rules (LevelDB's `table_format.md`) and the protobuf wire format.

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A protobuf field: `tag` (number and wire type together) then `body` (a varint's value, or a length-delimited
/// run).
fn field_varint(number: u64, v: u64, out: &mut Vec<u8>) {
    varint(number << 3, out);
    varint(v, out);
}

fn field_bytes(number: u64, body: &[u8], out: &mut Vec<u8>) {
    varint((number << 3) | 2, out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// A `BundleEntryProto`: a float32 tensor of shape `dims` at `offset`, `size` bytes, with `crc`.
fn entry(dims: &[u64], offset: u64, size: u64, crc: u32) -> Vec<u8> {
    let mut shape = Vec::new();
    for &d in dims {
        let mut dim = Vec::new();
        field_varint(1, d, &mut dim);
        field_bytes(2, &dim, &mut shape);
    }
    let mut e = Vec::new();
    field_varint(1, 1, &mut e);
    field_bytes(2, &shape, &mut e);
    field_varint(4, offset, &mut e);
    field_varint(5, size, &mut e);
    e.push((6 << 3) | 5);
    e.extend_from_slice(&crc.to_le_bytes());
    e
}

fn masked_crc32c(bytes: &[u8]) -> u32 {
    // CRC-32C (Castagnoli), bit by bit: independent of the reader's crate.
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0x82f6_3b78 } else { crc >> 1 };
        }
    }
    (!crc).rotate_right(15).wrapping_add(0xa282_ead8)
}

/// A block of `records` (key, value), each with `shared` bytes of the previous key, and its trailer.
fn block(records: &[(usize, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut b = Vec::new();
    for (shared, key, value) in records {
        varint(*shared as u64, &mut b);
        varint((key.len() - shared) as u64, &mut b);
        varint(value.len() as u64, &mut b);
        b.extend_from_slice(&key[*shared..]);
        b.extend_from_slice(value);
    }
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    b.push(0);
    let crc = masked_crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// An index file: the header record (one data file), then `records`, in one data block.
fn index(records: &[(usize, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut header = Vec::new();
    field_varint(1, 1, &mut header);
    let mut all = vec![(0, Vec::new(), header)];
    all.extend_from_slice(records);
    let data = block(&all);
    let data_len = (data.len() - 5) as u64;
    let mut handle = Vec::new();
    varint(0, &mut handle);
    varint(data_len, &mut handle);
    let last = all.last().unwrap().1.clone();
    table(&data, &block(&[(0, last, handle)]))
}

/// A table file: `data` (one data block, with its trailer), then `index_block`, then the footer.
fn table(data: &[u8], index_block: &[u8]) -> Vec<u8> {
    let mut file = data.to_vec();
    let index_at = file.len() as u64;
    file.extend_from_slice(index_block);
    let mut footer = Vec::new();
    varint(index_at, &mut footer); // metaindex: unused, any handle
    varint(0, &mut footer);
    varint(index_at, &mut footer);
    varint((index_block.len() - 5) as u64, &mut footer);
    footer.resize(40, 0);
    footer.extend_from_slice(&0xdb47_7524_8b80_fb57_u64.to_le_bytes());
    file.extend_from_slice(&footer);
    file
}

/// Writes `index` and a data file of `data` as `<dir>/b.index`, `<dir>/b.data-00000-of-00001`.
fn bundle(dir: &Path, index: &[u8], data: &[u8]) -> PathBuf {
    std::fs::write(dir.join("b.data-00000-of-00001"), data).unwrap();
    std::fs::write(dir.join("b.index"), index).unwrap();
    dir.join("b.index")
}

#[test]
fn a_hand_made_index_converts_as_the_reader_promises() {
    // The builder itself is sound: a two-tensor bundle converts.
    let data: Vec<u8> = (0..32).collect();
    let idx = index(&[
        (0, b"a".to_vec(), entry(&[4], 0, 16, masked_crc32c(&data[..16]))),
        (0, b"b".to_vec(), entry(&[2, 2], 16, 16, masked_crc32c(&data[16..]))),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.tpack");
    assert_ok(&run!("convert", bundle(dir.path(), &idx, &data), &out));
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    assert_eq!(c.get("b").unwrap().payload(), &data[16..]);
}

#[test]
fn hostile_indexes_are_refused_in_bounded_work() {
    let dir = tempfile::tempdir().unwrap();
    let data = vec![7u8; 1 << 16];
    let crc = masked_crc32c(&data);
    // Many tensors over the same bytes: without a bound, each would be checked (and kept) again.
    let many: Vec<_> = (0..1000u32)
        .map(|i| (0, format!("t{i:04}").into_bytes(), entry(&[1 << 14], 0, 1 << 16, crc)))
        .collect();
    refused(&bundle(dir.path(), &index(&many), &data), &["bytes another tensor uses too"]);
    // Keys out of order.
    let crc8 = masked_crc32c(&data[..8]);
    let swapped = [(0, b"b".to_vec(), entry(&[2], 0, 8, crc8)), (0, b"a".to_vec(), entry(&[2], 0, 8, crc8))];
    refused(&bundle(dir.path(), &index(&swapped), &data), &["out of order"]);
    // A key sharing more bytes than the previous key has.
    let bad_share =
        [(0, b"a".to_vec(), entry(&[2], 0, 8, crc8)), (5, b"abcdefg".to_vec(), entry(&[2], 8, 8, crc8))];
    refused(&bundle(dir.path(), &index(&bad_share), &data), &["shares 5 bytes with a key of 1"]);
    // A key longer than the reader takes.
    let long = [(0, vec![b'k'; 5000], entry(&[2], 0, 8, crc8))];
    refused(&bundle(dir.path(), &index(&long), &data), &["a key of 5000 bytes"]);
    // A shape past what the bytes hold, a negative dimension.
    let short = [(0, b"a".to_vec(), entry(&[1 << 40], 0, 8, crc8))];
    refused(&bundle(dir.path(), &index(&short), &data), &["stored in 8 bytes where its shape"]);
    let negative = [(0, b"a".to_vec(), entry(&[u64::MAX], 0, 8, crc8))];
    refused(&bundle(dir.path(), &index(&negative), &data), &["has the dimension -1"]);
    // A tensor past the data file's end, and in a data file the bundle does not have.
    let past = [(0, b"a".to_vec(), entry(&[4], (1 << 16) - 8, 16, crc8))];
    refused(&bundle(dir.path(), &index(&past), &data), &["past the end of data file 0"]);
    let mut other_shard = entry(&[2], 0, 8, crc8);
    field_varint(3, 5, &mut other_shard);
    refused(
        &bundle(dir.path(), &index(&[(0, b"a".to_vec(), other_shard)]), &data),
        &["data file 5", "has 1"],
    );
    // A partitioned tensor whose slice is missing: no slice record is looked for but by its exact key.
    let mut sliced = entry(&[4], 0, 0, 0);
    let mut extent = Vec::new();
    field_varint(1, 0, &mut extent);
    field_varint(2, 4, &mut extent);
    let mut slice = Vec::new();
    field_bytes(1, &extent, &mut slice);
    field_bytes(7, &slice, &mut sliced);
    refused(&bundle(dir.path(), &index(&[(0, b"a".to_vec(), sliced)]), &data), &["slice", "is missing"]);
    // Not a bundle: an SSTable without the header record.
    let data_block = block(&[(0, b"x".to_vec(), Vec::new())]);
    let mut handle = Vec::new();
    varint(0, &mut handle);
    varint((data_block.len() - 5) as u64, &mut handle);
    let no_header = table(&data_block, &block(&[(0, b"x".to_vec(), handle)]));
    // It does not start with the empty key, so it is no format the tool reads.
    refused(&bundle(dir.path(), &no_header, &data), &["not a tpack"]);
}
