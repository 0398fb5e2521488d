//! Shard sets: Hugging Face sharded safetensors and llama.cpp split GGUF into one container, and a container
//! out to sharded safetensors, checked against what the PyPI libraries (`huggingface_hub`'s planner,
//! `safetensors`, gguf-py) wrote and read (`fixtures/make_shards.py`, `fixtures/expected_shards.json`). The
//! hostile sets are copies of the fixtures with one thing broken.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};
use tpack::{Container, MetaValue};

fn expected_sets() -> Value {
    serde_json::from_slice(&std::fs::read(fixture("expected_shards.json")).unwrap()).unwrap()
}

/// A copy of the fixture directory `name` in a new temporary directory, as `(tempdir, copy)`.
fn copy_set(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join(name);
    std::fs::create_dir(&copy).unwrap();
    for e in std::fs::read_dir(fixture(name)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
    }
    (dir, copy)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// Asserts the converted container at `out` holds exactly `want` (name → {sha256, nbytes, …}) in `order`.
fn assert_tensors(out: &Path, want: &Value, order: &Value) -> Vec<u8> {
    let bytes = std::fs::read(out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    c.verify().unwrap();
    let names: Vec<&str> = c.entries().map(|e| e.name()).collect();
    let order: Vec<&str> = order.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(names, order, "tensors in shard order");
    for (name, t) in want.as_object().unwrap() {
        let e = c.get(name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(sha256(e.payload()), t["sha256"].as_str().unwrap(), "{name}");
        assert_eq!(e.byte_len(), t["nbytes"].as_u64().unwrap(), "{name}");
        if let Some(shape) = t.get("shape") {
            assert_eq!(&json!(e.shape().dims()), shape, "{name}");
        } else {
            let mut dims: Vec<u64> =
                t["shape_gguf"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
            dims.reverse();
            assert_eq!(e.shape().dims(), dims.as_slice(), "{name}");
            assert_eq!(e.dtype().name().unwrap(), t["ggml_type"].as_str().unwrap(), "{name}");
        }
    }
    bytes
}

// ---------------------------------------------------------------------------------------------------------
// Shards in

#[test]
fn sharded_safetensors_become_one_container_with_every_tensor_as_safetensors_reads_it() {
    let want = &expected_sets()["sharded"];
    let dir = tempfile::tempdir().unwrap();
    // The index itself, and the directory that holds it.
    for (input, out) in [
        (fixture("sharded/model.safetensors.index.json"), dir.path().join("a.tpack")),
        (fixture("sharded"), dir.path().join("b.tpack")),
    ] {
        let report = assert_ok(&run!("convert", input, out));
        assert!(report.contains("4 safetensors shards, 11 tensors"), "{report}");
        assert!(report.contains("note: the index's metadata (tpack.fixture) is kept"), "{report}");
        let bytes = assert_tensors(&out, &want["tensors"], &want["order"]);
        let c = Container::parse(&bytes).unwrap();
        // Every shard's __metadata__ (the same in each) and the index's metadata but total_size.
        let meta: Vec<(&str, MetaValue<'_>)> = c.metadata().iter().collect();
        assert_eq!(
            meta,
            [("format", MetaValue::String("np")), ("tpack.fixture", MetaValue::String("sharded"))]
        );
    }
    // Every entry is at the default alignment, as from one safetensors file.
    let bytes = std::fs::read(dir.path().join("a.tpack")).unwrap();
    assert!(Container::parse(&bytes).unwrap().entries().all(|e| e.offset() % 64 == 0));
}

#[test]
fn split_gguf_becomes_one_container_with_every_tensor_as_gguf_py_reads_it() {
    for set in ["split", "split-meta"] {
        let want = &expected_sets()[set];
        let first = want["files"][0].as_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.tpack");
        let report = assert_ok(&run!("convert", fixture(&format!("{set}/{first}")), out));
        let n = want["files"].as_array().unwrap().len();
        assert!(report.contains(&format!("({n} GGUF shards, 7 tensors")), "{report}");
        let bytes = assert_tensors(&out, &want["tensors"], &want["order"]);
        let c = Container::parse(&bytes).unwrap();
        // The first split's metadata without the split keys, plus the record of the GGUF key order and
        // version; the later splits add nothing.
        let keys: Vec<&str> = c.metadata().iter().map(|(k, _)| k).collect();
        let mut expect: Vec<&str> = want["metadata"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| !k.starts_with("split."))
            .chain(["gguf.key_order", "gguf.version"])
            .collect();
        expect.sort_unstable();
        assert_eq!(keys, expect, "{set}");
        assert_eq!(c.metadata().get("general.name"), Some(MetaValue::String("tpack split fixture")));
        // The recorded key order is the first split's, without its split keys.
        let Some(MetaValue::StringArray(order)) = c.metadata().get("gguf.key_order") else { panic!("{set}") };
        let order: Vec<&str> = order.collect();
        assert!(!order.is_empty() && order.iter().all(|k| !k.starts_with("split.")), "{set}: {order:?}");
        assert!(c.entries().all(|e| e.offset() % 64 == 0));
    }
}

// ---------------------------------------------------------------------------------------------------------
// Shards out

/// The shard files (not the index) in `dir`, sorted.
fn shard_files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with(&format!("{prefix}-")) && n.ends_with(".safetensors")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn tpack_to_sharded_safetensors_is_laid_out_as_hugging_face_lays_it_out() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("model.tpack");
    assert_ok(&run!("convert", fixture("model.safetensors"), mid));
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("model.safetensors");
    let limit = 200u64;
    let report = assert_ok(&run!("convert", mid, out, "--max-shard-size", "200"));
    assert!(
        report.contains("safetensors shards") && report.contains("model.safetensors.index.json"),
        "{report}"
    );
    assert!(!out.exists(), "no unsharded file beside the shards");

    let shards = shard_files(&out_dir, "model");
    let n = shards.len();
    assert!(n >= 3, "{shards:?}");
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(
            s.file_name().unwrap().to_str().unwrap(),
            format!("model-{:05}-of-{n:05}.safetensors", i + 1)
        );
    }
    let index = read_json(&out_dir.join("model.safetensors.index.json"));
    let weight_map = index["weight_map"].as_object().unwrap();
    let keys: Vec<&String> = weight_map.keys().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "weight_map keys sorted");
    let text = std::fs::read_to_string(out_dir.join("model.safetensors.index.json")).unwrap();
    assert!(
        text.starts_with("{\n  \"metadata\": {\n    \"total_size\": ") && text.ends_with("}\n"),
        "{text}"
    );

    let want = &expected()["model.safetensors"];
    let mut total = 0u64;
    let mut seen = 0usize;
    for s in &shards {
        let bytes = std::fs::read(s).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        let size: usize = st.iter().map(|(_, v)| v.data().len()).sum();
        assert!(st.len() == 1 || size as u64 <= limit, "{} holds {size} bytes", s.display());
        let name = s.file_name().unwrap().to_str().unwrap();
        for (t, view) in st.iter() {
            assert_eq!(weight_map[t], json!(name), "{t}");
            assert_eq!(sha256(view.data()), want["tensors"][&t]["sha256"].as_str().unwrap(), "{t}");
            total += view.data().len() as u64;
            seen += 1;
        }
        let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
        let meta = meta.metadata().clone().unwrap();
        assert_eq!(json!(meta), want["metadata"], "every shard has the whole __metadata__");
    }
    assert_eq!(seen, weight_map.len());
    assert_eq!(seen, want["tensors"].as_object().unwrap().len());
    assert_eq!(index["metadata"]["total_size"], json!(total));

    // The PyPI library reads every shard and finds what it wrote in the first place.
    if let Some(py) = python() {
        let mut tensors = serde_json::Map::new();
        for s in &shards {
            let read = python_readback(&py, s);
            assert_eq!(read["metadata"], want["metadata"]);
            for (k, v) in read["tensors"].as_object().unwrap() {
                tensors.insert(k.clone(), v.clone());
            }
        }
        assert_eq!(Value::Object(tensors), want["tensors"]);
    }
}

#[test]
fn shards_to_tpack_to_shards_to_tpack_keeps_every_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.tpack");
    assert_ok(&run!("convert", fixture("sharded"), first));
    let out_dir = dir.path().join("again");
    std::fs::create_dir(&out_dir).unwrap();
    assert_ok(&run!("convert", first, out_dir.join("model.safetensors"), "--max-shard-size", "1KB"));
    let again = dir.path().join("again.tpack");
    assert_ok(&run!("convert", out_dir, again));
    let a = std::fs::read(&first).unwrap();
    let b = std::fs::read(&again).unwrap();
    let (a, b) = (Container::parse(&a).unwrap(), Container::parse(&b).unwrap());
    assert_eq!(a.len(), b.len());
    for e in a.entries() {
        let f = b.get(e.name()).unwrap();
        assert_eq!((e.dtype(), e.shape().dims(), e.payload()), (f.dtype(), f.shape().dims(), f.payload()));
    }
    // The same limit plans the same shards as huggingface_hub did for the fixture (limit 1000 bytes): the
    // container is in the fixture's shard order, and the planner sees the sizes in that order.
    assert_eq!(a.metadata().get("tpack.fixture"), b.metadata().get("tpack.fixture"));
}

#[test]
fn a_model_that_fits_in_one_shard_is_one_file_without_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("model.tpack");
    assert_ok(&run!("convert", fixture("model.safetensors"), mid));
    let sharded = dir.path().join("one.safetensors");
    let plain = dir.path().join("plain.safetensors");
    assert_ok(&run!("convert", mid, sharded, "--max-shard-size", "5GB"));
    assert_ok(&run!("convert", mid, plain));
    assert_eq!(std::fs::read(&sharded).unwrap(), std::fs::read(&plain).unwrap());
    assert!(!dir.path().join("one.safetensors.index.json").exists());
    assert!(shard_files(dir.path(), "one").is_empty());
}

#[test]
fn existing_shards_are_kept_without_force_and_replaced_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("model.tpack");
    assert_ok(&run!("convert", fixture("model.safetensors"), mid));
    let out = dir.path().join("m.safetensors");
    assert_ok(&run!("convert", mid, out, "--max-shard-size", "200"));
    let shards = shard_files(dir.path(), "m");
    let before: Vec<Vec<u8>> = shards.iter().map(|s| std::fs::read(s).unwrap()).collect();
    let o = run!("convert", mid, out, "--max-shard-size", "200");
    let name = shards[0].display().to_string();
    assert_fails(&o, 4, &[&name, "already exists", "--force"]);
    // An unsharded file of OUT's name is replaced by the shards with --force (loaders would prefer it).
    std::fs::write(&out, b"stale").unwrap();
    let report = assert_ok(&run!("convert", mid, out, "--max-shard-size", "200", "--force"));
    assert!(report.contains("removed") && !out.exists(), "{report}");
    let after: Vec<Vec<u8>> = shards.iter().map(|s| std::fs::read(s).unwrap()).collect();
    assert_eq!(before, after);
    let stray: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".tpack-"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

#[test]
fn max_shard_size_is_refused_for_tpack_output_and_must_be_a_size() {
    let dir = tempfile::tempdir().unwrap();
    let o =
        run!("convert", fixture("model.safetensors"), dir.path().join("m.tpack"), "--max-shard-size", "1GB");
    assert_fails(
        &o,
        3,
        &["--max-shard-size applies to safetensors and GGUF output", "tpack output is written as one file"],
    );
    let o = run!("convert", fixture("sharded"), dir.path().join("m.tpack"), "--max-shard-size", "1GB");
    assert_fails(&o, 3, &["--max-shard-size applies to safetensors and GGUF output"]);
    let o =
        run!("convert", fixture("model.safetensors"), dir.path().join("m.tpack"), "--max-shard-size", "5XB");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("\"5XB\" is not a size"), "{}", stderr(&o));
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

// ---------------------------------------------------------------------------------------------------------
// Hostile Hugging Face shard sets

const INDEX: &str = "model.safetensors.index.json";
const SHARD_1: &str = "model-00001-of-00004.safetensors";
const SHARD_2: &str = "model-00002-of-00004.safetensors";

/// Converts the set in `dir` (given as its directory) and asserts the refusal, with nothing written.
#[track_caller]
fn refused(dir: &Path, code: i32, words: &[&str]) -> String {
    let out = dir.parent().unwrap().join("out.tpack");
    let e = assert_fails(&run!("convert", dir, out), code, words);
    assert!(!out.exists());
    e
}

/// Rewrites the index in `dir` with `edit`.
fn edit_index(dir: &Path, edit: impl FnOnce(&mut Value)) {
    let mut index = read_json(&dir.join(INDEX));
    edit(&mut index);
    write_json(&dir.join(INDEX), &index);
}

/// A safetensors file with the tensors of `from` (a fixture shard) plus `extra` raw F32 tensors, written by
/// the `safetensors` crate.
fn shard_with(from: &Path, extra: &[(&str, Vec<u8>)], metadata: Option<(&str, &str)>) -> Vec<u8> {
    let bytes = std::fs::read(from).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut views: Vec<(String, safetensors::tensor::TensorView<'_>)> =
        st.iter().map(|(n, v)| (n.to_owned(), v)).collect();
    for (name, data) in extra {
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![data.len() / 4], data)
            .unwrap();
        views.push(((*name).to_owned(), view));
    }
    let meta = metadata.map(|(k, v)| std::collections::HashMap::from([(k.to_owned(), v.to_owned())]));
    safetensors::serialize(views, meta).unwrap()
}

#[test]
fn a_missing_shard_is_named() {
    let (_t, dir) = copy_set("sharded");
    std::fs::remove_file(dir.join(SHARD_2)).unwrap();
    refused(
        &dir,
        4,
        &[
            INDEX,
            "maps 1 tensors (such as \"model.layers.1.mlp.up_proj.weight\") to",
            SHARD_2,
            "does not exist",
            "incomplete",
        ],
    );
}

#[test]
fn a_tensor_in_two_shards_is_named_with_both() {
    let (_t, dir) = copy_set("sharded");
    let bytes = std::fs::read(dir.join(SHARD_1)).unwrap();
    let embed = safetensors::SafeTensors::deserialize(&bytes)
        .unwrap()
        .tensor("model.embed_tokens.weight")
        .unwrap()
        .data()
        .to_vec();
    let twice =
        shard_with(&dir.join(SHARD_2), &[("model.embed_tokens.weight", embed)], Some(("format", "np")));
    std::fs::write(dir.join(SHARD_2), twice).unwrap();
    refused(
        &dir,
        3,
        &["tensor \"model.embed_tokens.weight\" is in two shards", SHARD_1, SHARD_2, "the index maps it to"],
    );
}

#[test]
fn an_index_naming_a_file_outside_its_directory_is_refused() {
    for target in ["../model-00001-of-00004.safetensors", "/etc/passwd", "sub/model.safetensors"] {
        let (_t, dir) = copy_set("sharded");
        edit_index(&dir, |i| i["weight_map"]["model.norm.weight"] = json!(target));
        let e = refused(
            &dir,
            3,
            &["is not a valid sharded safetensors index", "\"model.norm.weight\"", "not a plain file name"],
        );
        assert!(e.contains(&format!("{target:?}")), "{e}");
    }
}

#[test]
fn a_shard_that_is_a_symlink_elsewhere_is_followed_as_in_the_hugging_face_cache() {
    let (t, dir) = copy_set("sharded");
    let blobs = t.path().join("blobs");
    std::fs::create_dir(&blobs).unwrap();
    std::fs::rename(dir.join(SHARD_1), blobs.join("abc123")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("../blobs/abc123", dir.join(SHARD_1)).unwrap();
    #[cfg(windows)]
    std::os::windows::fs::symlink_file("../blobs/abc123", dir.join(SHARD_1)).unwrap();
    assert_ok(&run!("convert", dir, t.path().join("out.tpack")));
}

#[test]
fn a_tensor_missing_from_its_shard_is_named() {
    let (_t, dir) = copy_set("sharded");
    edit_index(&dir, |i| i["weight_map"]["ghost.weight"] = json!(SHARD_2));
    refused(&dir, 3, &["the index maps tensor \"ghost.weight\" to", SHARD_2, "has no tensor of that name"]);
}

#[test]
fn a_tensor_the_index_does_not_name_is_named() {
    let (_t, dir) = copy_set("sharded");
    edit_index(&dir, |i| {
        i["weight_map"].as_object_mut().unwrap().remove("model.norm.weight");
    });
    refused(&dir, 3, &["holds tensor \"model.norm.weight\", which the index does not name"]);
}

#[test]
fn a_tensor_in_another_shard_than_the_index_says_is_named() {
    let (_t, dir) = copy_set("sharded");
    edit_index(&dir, |i| i["weight_map"]["model.norm.weight"] = json!(SHARD_1));
    refused(&dir, 3, &["holds tensor \"model.norm.weight\", but the index maps it to", SHARD_1]);
}

/// `metadata.total_size` is read by no loader (transformers reads the weight_map only); tools that strip
/// tensors leave it stale and some writers omit it. A stale, missing or unreadable one is a note, and the
/// model converts exactly as with a right one; a missing tensor or shard is still refused (tests above).
#[test]
fn a_stale_missing_or_unreadable_total_size_is_a_note_not_a_refusal() {
    let want = &expected_sets()["sharded"];
    for (case, edit, note) in [
        ("stale", json!(3587), "total_size is 3587 bytes, but the shards' tensors hold 3588 bytes"),
        ("missing", Value::Null, "total_size is missing;"),
        ("unreadable", json!("3588"), "total_size is \"3588\", not a byte count;"),
    ] {
        let (_t, dir) = copy_set("sharded");
        edit_index(&dir, |i| {
            let metadata = i["metadata"].as_object_mut().unwrap();
            match edit {
                Value::Null => drop(metadata.remove("total_size")),
                other => drop(metadata.insert("total_size".into(), other)),
            }
        });
        let out = dir.parent().unwrap().join("out.tpack");
        let report = assert_ok(&run!("convert", dir, out));
        assert!(report.contains(&format!("note: the index's metadata.{note}")), "{case}: {report}");
        assert_tensors(&out, &want["tensors"], &want["order"]);
    }
}

#[test]
fn a_shard_that_is_not_a_valid_safetensors_file_is_named() {
    let (_t, dir) = copy_set("sharded");
    std::fs::write(dir.join(SHARD_2), b"GGUF\x03\0\0\0").unwrap();
    refused(&dir, 3, &[SHARD_2, "is not a safetensors file (it is a GGUF file)"]);
    let bytes = std::fs::read(fixture(&format!("sharded/{SHARD_2}"))).unwrap();
    std::fs::write(dir.join(SHARD_2), &bytes[..bytes.len() - 10]).unwrap();
    refused(&dir, 3, &[SHARD_2, "truncated safetensors file"]);
    std::fs::write(dir.join(SHARD_2), b"").unwrap();
    refused(&dir, 3, &[SHARD_2, "(it is empty)"]);
}

#[test]
fn shards_that_disagree_on_metadata_are_refused() {
    let (_t, dir) = copy_set("sharded");
    std::fs::write(dir.join(SHARD_2), shard_with(&dir.join(SHARD_2), &[], Some(("format", "pt")))).unwrap();
    refused(&dir, 3, &["metadata \"format\" has one value in", SHARD_1, SHARD_2]);
}

#[test]
fn an_invalid_index_is_refused_in_words() {
    let (_t, dir) = copy_set("sharded");
    std::fs::write(dir.join(INDEX), r#"{"weight_map": {"a": "x", "a": "y"}}"#).unwrap();
    refused(&dir, 3, &["is not a valid sharded safetensors index: it is ambiguous"]);
    std::fs::write(dir.join(INDEX), "{").unwrap();
    refused(&dir, 3, &["is not a valid sharded safetensors index: it is not JSON"]);
}

#[test]
fn a_directory_needs_exactly_one_index() {
    let (_t, dir) = copy_set("sharded");
    std::fs::copy(dir.join(INDEX), dir.join("other.safetensors.index.json")).unwrap();
    refused(&dir, 3, &["holds 2 sharded safetensors indexes", INDEX, "other.safetensors.index.json"]);
    let empty = tempfile::tempdir().unwrap();
    let sub = empty.path().join("d");
    std::fs::create_dir(&sub).unwrap();
    refused(
        &sub,
        3,
        &["is a directory with no sharded model index (*.safetensors.index.json or *.bin.index.json)"],
    );
    std::fs::copy(fixture("model.safetensors"), sub.join("model.safetensors")).unwrap();
    refused(&sub, 3, &["no sharded model index", "(to convert one file, name it: ", "model.safetensors)"]);
}

#[test]
fn convert_never_writes_over_one_of_the_shards() {
    let (_t, dir) = copy_set("sharded");
    let before = std::fs::read(dir.join(SHARD_1)).unwrap();
    let o = run!("convert", dir, dir.join(SHARD_1), "--to", "tpack", "--force");
    assert_fails(&o, 4, &["is the input file itself"]);
    assert_eq!(std::fs::read(dir.join(SHARD_1)).unwrap(), before);
}

// ---------------------------------------------------------------------------------------------------------
// Hostile split GGUF sets

const SPLIT_1: &str = "model-00001-of-00003.gguf";
const SPLIT_2: &str = "model-00002-of-00003.gguf";
const SPLIT_3: &str = "model-00003-of-00003.gguf";

#[track_caller]
fn split_refused(input: &Path, code: i32, words: &[&str]) -> String {
    let out = input.parent().unwrap().join("out.tpack");
    let e = assert_fails(&run!("convert", input, out), code, words);
    assert!(!out.exists());
    e
}

/// Overwrites the integer value of metadata `key` in the GGUF file `path` with `value` (little-endian, of
/// the width it has: the bytes after the key's name and its 4-byte type).
fn patch_key(path: &Path, key: &str, value: &[u8]) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes.windows(key.len()).position(|w| w == key.as_bytes()).unwrap() + key.len() + 4;
    bytes[at..at + value.len()].copy_from_slice(value);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_missing_split_is_named() {
    let (_t, dir) = copy_set("split");
    std::fs::remove_file(dir.join(SPLIT_3)).unwrap();
    split_refused(&dir.join(SPLIT_1), 4, &["is split 1 of 3, but split 3", SPLIT_3, "does not exist"]);
}

#[test]
fn a_later_split_points_to_the_first() {
    let (_t, dir) = copy_set("split");
    split_refused(
        &dir.join(SPLIT_2),
        3,
        &["is split 2 of 3 of a split GGUF model", "convert its first split", SPLIT_1],
    );
}

#[test]
fn a_first_split_named_otherwise_cannot_find_the_others() {
    let (_t, dir) = copy_set("split");
    std::fs::rename(dir.join(SPLIT_1), dir.join("model.gguf")).unwrap();
    split_refused(
        &dir.join("model.gguf"),
        3,
        &["is the first of 3 splits", "does not end in -00001-of-00003.gguf"],
    );
}

#[test]
fn inconsistent_split_keys_are_named() {
    let (_t, dir) = copy_set("split");
    patch_key(&dir.join(SPLIT_3), "split.no", &1u16.to_le_bytes());
    split_refused(&dir.join(SPLIT_1), 3, &[SPLIT_3, "its split.no is 1, but by its name it is split 3 of 3"]);

    let (_t, dir) = copy_set("split");
    patch_key(&dir.join(SPLIT_2), "split.count", &4u16.to_le_bytes());
    split_refused(&dir.join(SPLIT_1), 3, &[SPLIT_2, "its split.count is 4, not 3"]);

    let (_t, dir) = copy_set("split");
    patch_key(&dir.join(SPLIT_2), "split.tensors.count", &8i32.to_le_bytes());
    split_refused(&dir.join(SPLIT_1), 3, &[SPLIT_2, "its split.tensors.count is 8, not 7"]);

    let (_t, dir) = copy_set("split");
    for s in [SPLIT_1, SPLIT_2, SPLIT_3] {
        patch_key(&dir.join(s), "split.tensors.count", &8i32.to_le_bytes());
    }
    split_refused(&dir.join(SPLIT_1), 3, &["its split.tensors.count is 8, but its 3 splits hold 7 tensors"]);
}

#[test]
fn a_tensor_in_two_splits_is_named_with_both() {
    let (_t, dir) = copy_set("split");
    let path = dir.join(SPLIT_2);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(12).position(|w| w == b"blk.1.attn_q").unwrap();
    bytes[at + 4] = b'0';
    std::fs::write(&path, bytes).unwrap();
    split_refused(
        &dir.join(SPLIT_1),
        3,
        &["tensor \"blk.0.attn_q.weight\" is in two shards", SPLIT_1, SPLIT_2],
    );
}

#[test]
fn a_split_that_is_not_gguf_is_named() {
    let (_t, dir) = copy_set("split");
    std::fs::write(dir.join(SPLIT_2), b"not a model").unwrap();
    split_refused(&dir.join(SPLIT_1), 3, &[SPLIT_2, "split 2 of 3 is not a GGUF file"]);
    let bytes = std::fs::read(fixture(&format!("split/{SPLIT_2}"))).unwrap();
    std::fs::write(dir.join(SPLIT_2), &bytes[..100]).unwrap();
    split_refused(&dir.join(SPLIT_1), 3, &[SPLIT_2, "is not a valid GGUF file"]);
}
