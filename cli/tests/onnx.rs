//! ONNX models written by the `onnx` package (`fixtures/onnx/make_onnx.py`): each converts to a container
//! whose every tensor is what `onnx.numpy_helper.to_array` reads (hashed into `expected.json`), with the
//! model's fields as metadata; `inspect` reads each directly; external data outside the model's directory
//! or past its file, and nesting past the protobuf limit, are refused with words that say why.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};
use tpack::{Container, Dtype, MetaValue};

fn onnx_fixture(name: &str) -> PathBuf {
    fixture("onnx").join(name)
}

fn expected_onnx() -> Value {
    serde_json::from_slice(&std::fs::read(onnx_fixture("expected.json")).unwrap()).unwrap()
}

/// The ONNX data type name of a tpack dtype, as `make_onnx.py` writes it into `expected.json`.
fn onnx_type(d: Dtype) -> &'static str {
    match d.name().unwrap() {
        "F32" => "FLOAT",
        "F16" => "FLOAT16",
        "BF16" => "BFLOAT16",
        "F64" => "DOUBLE",
        "I8" => "INT8",
        "I16" => "INT16",
        "I32" => "INT32",
        "I64" => "INT64",
        "U8" => "UINT8",
        "U16" => "UINT16",
        "U32" => "UINT32",
        "U64" => "UINT64",
        "BOOL" => "BOOL",
        "C64" => "COMPLEX64",
        "F8E4M3" => "FLOAT8E4M3FN",
        "F8E4M3FNUZ" => "FLOAT8E4M3FNUZ",
        "F8E5M2" => "FLOAT8E5M2",
        other => panic!("no ONNX type for {other}"),
    }
}

fn meta_i64(c: &Container<'_>, key: &str) -> Option<i64> {
    match c.metadata().get(key)? {
        MetaValue::I64(v) => Some(v),
        other => panic!("{key}: {other:?}"),
    }
}

fn meta_string(c: &Container<'_>, key: &str) -> Option<String> {
    match c.metadata().get(key)? {
        MetaValue::String(v) => Some(v.to_owned()),
        other => panic!("{key}: {other:?}"),
    }
}

/// What a container converted from a model holds, in the schema of `expected.json`.
fn described(container: &Path, expected: &Value) -> Value {
    let bytes = std::fs::read(container).unwrap();
    let c = Container::parse(&bytes).unwrap();
    let tensors: BTreeMap<String, Value> = c
        .entries()
        .map(|e| {
            let v = json!({"data_type": onnx_type(e.dtype()), "shape": e.shape().dims(), "sha256": sha256(e.payload())});
            (e.name().to_owned(), v)
        })
        .collect();
    let props: BTreeMap<String, String> = expected["metadata"]["metadata_props"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| (k.clone(), meta_string(&c, &format!("onnx.metadata_props.{k}")).unwrap()))
        .collect();
    let opsets: BTreeMap<String, i64> = expected["metadata"]["opset_import"]
        .as_object()
        .unwrap()
        .keys()
        .map(|d| {
            let key = if d.is_empty() { "ai.onnx" } else { d.as_str() };
            (d.clone(), meta_i64(&c, &format!("onnx.opset.{key}")).unwrap())
        })
        .collect();
    let opset_keys = c.metadata().iter().filter(|(k, _)| k.starts_with("onnx.opset.")).count();
    assert_eq!(opset_keys, opsets.len(), "no opset beyond the model's");
    json!({
        "tensors": tensors,
        "metadata": {
            "producer_name": meta_string(&c, "onnx.producer_name").unwrap_or_default(),
            "producer_version": meta_string(&c, "onnx.producer_version").unwrap_or_default(),
            "domain": meta_string(&c, "onnx.domain").unwrap_or_default(),
            "ir_version": meta_i64(&c, "onnx.ir_version").unwrap_or_default(),
            "model_version": meta_i64(&c, "onnx.model_version").unwrap_or_default(),
            "opset_import": opsets,
            "metadata_props": props,
        },
    })
}

const MODELS: [&str; 3] = ["model.onnx", "external/model.onnx", "nested.onnx"];

#[test]
fn every_model_converts_to_what_onnx_reads() {
    let expected = expected_onnx();
    let dir = tempfile::tempdir().unwrap();
    for name in MODELS {
        let out = dir.path().join(format!("{}.tpack", name.replace('/', "_")));
        assert_ok(&run!("convert", onnx_fixture(name), &out));
        assert_eq!(described(&out, &expected[name]), expected[name], "{name}");
    }
    // Every typed field and raw_data are there, and a subgraph of a subgraph.
    let tensors = expected["model.onnx"]["tensors"].as_object().unwrap();
    for name in [
        "typed_float16",
        "typed_uint32",
        "typed_complex64",
        "raw_bfloat16",
        "If_7/then_branch/then_if/then_branch/then_t_init",
    ] {
        assert!(tensors.contains_key(name), "{name}");
    }
}

#[test]
fn inspect_reads_each_model_directly() {
    let expected = expected_onnx();
    for name in MODELS {
        let json: Value =
            serde_json::from_str(&tpack_cli::run_inspect(&onnx_fixture(name), None, true).unwrap()).unwrap();
        assert_eq!(json["format"], "ONNX");
        let listed: BTreeMap<&str, &Value> = json["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["name"].as_str().unwrap(), &e["shape"]))
            .collect();
        let tensors = expected[name]["tensors"].as_object().unwrap();
        assert_eq!(listed.len(), tensors.len(), "{name}");
        for (t, v) in tensors {
            assert_eq!(listed.get(t.as_str()).copied(), Some(&v["shape"]), "{name}: {t}");
        }
    }
}

#[test]
fn external_data_outside_the_directory_or_past_its_file_is_refused() {
    let expected = expected_onnx();
    let hostile = expected["hostile"].as_object().unwrap();
    assert!(hostile.len() >= 5, "{hostile:?}");
    let dir = tempfile::tempdir().unwrap();
    for (name, words) in hostile {
        let words: Vec<&str> = words.as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
        let out = dir.path().join("out.tpack");
        assert_fails(&run!("convert", onnx_fixture(name), &out), 3, &words);
        assert!(!out.exists(), "{name}");
        assert_fails(&run!("inspect", onnx_fixture(name)), 3, &words);
    }
}

/// A copy of the external-data model in a fresh directory, its `weights.bin` a symbolic link to `target`.
#[cfg(unix)]
fn linked_model(dir: &Path, target: &Path) -> PathBuf {
    let model = dir.join("model.onnx");
    std::fs::copy(onnx_fixture("external/model.onnx"), &model).unwrap();
    std::os::unix::fs::symlink(target, dir.join("weights.bin")).unwrap();
    model
}

#[cfg(unix)]
#[test]
fn a_symlink_leading_out_of_the_directory_is_refused_and_one_inside_is_followed() {
    let root = tempfile::tempdir().unwrap();
    let weights = root.path().join("weights-outside.bin");
    std::fs::copy(onnx_fixture("external/weights.bin"), &weights).unwrap();
    let inner = root.path().join("model");
    std::fs::create_dir(&inner).unwrap();
    let model = linked_model(&inner, &weights);
    let out = root.path().join("out.tpack");
    assert_fails(
        &run!("convert", &model, &out),
        3,
        &["\"weights.bin\"", "symbolic link", "outside the model's directory"],
    );
    // The same bytes through a link that stays inside are read.
    let inside = root.path().join("inside");
    std::fs::create_dir(&inside).unwrap();
    std::fs::copy(onnx_fixture("external/weights.bin"), inside.join("real.bin")).unwrap();
    let model = linked_model(&inside, Path::new("real.bin"));
    assert_ok(&run!("convert", &model, &out));
    let expected = expected_onnx();
    assert_eq!(described(&out, &expected["external/model.onnx"]), expected["external/model.onnx"]);
}

/// A protobuf length-delimited field `number` holding `body`.
fn field(number: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![number << 3 | 2];
    let mut n = body.len();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    }
    out.extend(body);
    out
}

/// A model whose graph nests `levels` `If` nodes, each in the `then_branch` of the one above.
fn nested(levels: usize) -> Vec<u8> {
    let mut graph = Vec::new();
    for _ in 0..levels {
        // GraphProto.node (1) → NodeProto { op_type (4): "If", attribute (5) } → AttributeProto { name (1), g (6) }.
        let attribute = [field(1, b"then_branch"), field(6, &graph)].concat();
        let node = [field(4, b"If"), field(5, &attribute)].concat();
        graph = field(1, &node);
    }
    [&b"\x08\x08"[..], &field(7, &graph)].concat()
}

#[test]
fn nesting_past_the_protobuf_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.onnx");
    std::fs::write(&deep, nested(40)).unwrap();
    assert_fails(
        &run!("convert", &deep, dir.path().join("o.tpack")),
        3,
        &["not a valid ONNX model", "recursion limit"],
    );
    // 30 levels (91 messages) are within it, and have no tensors.
    let fine = dir.path().join("fine.onnx");
    std::fs::write(&fine, nested(30)).unwrap();
    let report = assert_ok(&run!("convert", &fine, dir.path().join("f.tpack")));
    assert!(report.contains("0 tensors"), "{report}");
}

/// The Python with the `onnx` package: `$TPACK_ONNX_PYTHON`, else `$TPACK_PYTHON` or `python3` if it has it.
/// Without one the check is skipped with a note, unless `TPACK_REQUIRE_PYTHON=1` (CI, which installs `onnx`).
fn onnx_python() -> Option<PathBuf> {
    let candidates =
        ["TPACK_ONNX_PYTHON", "TPACK_PYTHON"].iter().filter_map(std::env::var_os).map(PathBuf::from);
    let found = candidates.chain([PathBuf::from("python3")]).find(|p| {
        std::process::Command::new(p)
            .args(["-c", "import onnx, ml_dtypes"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        if std::env::var("TPACK_REQUIRE_PYTHON").is_ok_and(|v| v == "1") {
            panic!("TPACK_REQUIRE_PYTHON=1 but no Python with onnx and ml_dtypes was found");
        }
        eprintln!("note: no Python with onnx and ml_dtypes; skipping the onnx.load read-back");
    }
    found
}

#[test]
fn tpack_to_onnx_external_data_is_read_back_equal_by_onnx_load_and_by_tpack() {
    let expected = expected_onnx();
    let dir = tempfile::tempdir().unwrap();
    for name in MODELS {
        let stem = name.replace('/', "_").replace(".onnx", "");
        let mid = dir.path().join(format!("{stem}.tpack"));
        let back = dir.path().join(format!("{stem}.back.onnx"));
        assert_ok(&run!("convert", onnx_fixture(name), &mid));
        let report = assert_ok(&run!("convert", &mid, &back));
        assert!(report.contains(&format!("{stem}.back.onnx.data")), "{report}");
        // Every tensor is an initializer now, under the name it had in tpack: the same tensors and fields.
        let again = dir.path().join(format!("{stem}.again.tpack"));
        assert_ok(&run!("convert", &back, &again));
        assert_eq!(described(&again, &expected[name]), expected[name], "{name}");
        if let Some(py) = onnx_python() {
            let out = std::process::Command::new(&py)
                .arg(onnx_fixture("make_onnx.py"))
                .arg(&back)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "onnx.load refused {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let read: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(read[back.file_name().unwrap().to_str().unwrap()], expected[name], "{name}");
        }
    }
}

#[test]
fn what_onnx_cannot_hold_is_refused_before_any_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("q.tpack");
    let mut b = tpack::write::Builder::new();
    b.push(tpack::write::NewEntry::new("w", Dtype::F32, &[2], &[0; 8])).unwrap();
    b.push(tpack::write::NewEntry::new("q", Dtype::Q8_0, &[32], &[0; 34])).unwrap();
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let out = dir.path().join("q.onnx");
    assert_fails(&run!("convert", &input, &out), 3, &["entry \"q\"", "Q8_0", "ONNX has no tensor type"]);
    assert!(!out.exists() && !dir.path().join("q.onnx.data").exists());
}
