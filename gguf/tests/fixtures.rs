//! The GGUF files that the PyPI `gguf` package wrote (`cli/tests/fixtures/*.gguf`), parsed and compared with
//! what that package's own reader reads back from them (`cli/tests/fixtures/expected.json`): byte order,
//! every metadata key with its type and value, every tensor with its type, shape, size and bytes.

use std::path::PathBuf;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tpack_gguf::{parse, GgmlType, GgufArray, GgufValue};

/// The shared fixtures live with the CLI tests, which compare the converted files against them too.
fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn expected(name: &str) -> Value {
    let all: Value = serde_json::from_slice(&read("expected.json")).unwrap();
    all[name].clone()
}

/// gguf-py's name of a value type: the gguf.md name in capitals (`UINT32`, `FLOAT32`).
fn py_type(gguf_md_name: &str) -> String {
    gguf_md_name.to_uppercase()
}

/// A float32 as gguf-py's JSON has it: the exact value of the float32 (0.1 → 0.10000000149011612).
fn f32_json(v: f32) -> Value {
    json!(f64::from(v))
}

fn array_json(a: &GgufArray<'_>) -> Value {
    Value::Array(
        a.iter()
            .map(|item| match item {
                GgufValue::F32(x) => f32_json(x),
                GgufValue::Array(_) => panic!("gguf-py flattens arrays of arrays, so no fixture has one"),
                other => scalar_json(&other),
            })
            .collect(),
    )
}

/// A scalar as `readback.py` has it.
fn scalar_json(v: &GgufValue<'_>) -> Value {
    match v {
        GgufValue::U8(x) => json!(x),
        GgufValue::I8(x) => json!(x),
        GgufValue::U16(x) => json!(x),
        GgufValue::I16(x) => json!(x),
        GgufValue::U32(x) => json!(x),
        GgufValue::I32(x) => json!(x),
        GgufValue::F32(x) => f32_json(*x),
        GgufValue::Bool(x) => json!(x),
        GgufValue::String(s) => json!(s),
        GgufValue::U64(x) => json!(x),
        GgufValue::I64(x) => json!(x),
        GgufValue::F64(x) => json!(x),
        GgufValue::Array(a) => array_json(a),
    }
}

/// A metadata value in the shape of `readback.py`'s output.
fn value_json(v: &GgufValue<'_>) -> Value {
    match v {
        GgufValue::Array(a) => {
            json!({"type": "ARRAY", "item_type": py_type(a.element_type_name()), "value": array_json(a)})
        }
        other => json!({"type": py_type(v.type_name()), "value": scalar_json(other)}),
    }
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Parses fixture `name` and checks it against what gguf-py read back.
fn check(name: &str) {
    let bytes = read(name);
    let file = parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let want = expected(name);
    let endianness = if file.big_endian { "big" } else { "little" };
    assert_eq!(json!(endianness), want["endianness"], "{name}");
    assert_eq!(file.version, 3, "{name}: GGUFWriter writes version 3");

    let metadata = want["metadata"].as_object().unwrap();
    assert_eq!(file.metadata.len(), metadata.len(), "{name}: metadata count");
    for (key, value) in &file.metadata {
        assert_eq!(value_json(value), metadata[*key], "{name}: metadata {key}");
    }

    let tensors = want["tensors"].as_object().unwrap();
    assert_eq!(file.tensors.len(), tensors.len(), "{name}: tensor count");
    for t in &file.tensors {
        let w = &tensors[t.name];
        assert_eq!(json!(t.ggml_type.name()), w["ggml_type"], "{name}: {}", t.name);
        assert_eq!(json!(t.dims), w["shape_gguf"], "{name}: {}", t.name);
        assert_eq!(json!(t.data.len()), w["nbytes"], "{name}: {}", t.name);
        assert_eq!(json!(sha256(t.data)), w["sha256"], "{name}: {} (bytes as stored)", t.name);
        assert_eq!(t.ggml_type.tensor_size(&t.dims), Some(t.data.len() as u64), "{name}: {}", t.name);
        assert_eq!((t.offset - file.data_offset) % file.alignment, 0, "{name}: {}", t.name);
    }
}

#[test]
fn model_gguf_reads_as_gguf_py_reads_it() {
    check("model.gguf");
    let bytes = read("model.gguf");
    let file = parse(&bytes).unwrap();
    assert_eq!(file.alignment, tpack_gguf::DEFAULT_ALIGNMENT, "no general.alignment: the default");
    let types: Vec<GgmlType> = file.tensors.iter().map(|t| t.ggml_type).collect();
    assert!(
        types.contains(&GgmlType::Q8_0) && types.contains(&GgmlType::Q4_0) && types.contains(&GgmlType::BF16)
    );
}

#[test]
fn custom_alignment_is_read_from_general_alignment() {
    check("aligned64.gguf");
    let bytes = read("aligned64.gguf");
    let file = parse(&bytes).unwrap();
    assert_eq!(file.alignment, 64);
    assert_eq!(file.get(tpack_gguf::ALIGNMENT_KEY), Some(&GgufValue::U32(64)));
    assert_eq!(file.data_offset % 64, 0);
}

/// Numbers of a big-endian file read right; tensor data stays as stored (big-endian), and byte-swapping its
/// elements gives what gguf-py reads back as the little-endian bytes.
#[test]
fn big_endian_file_reads_as_gguf_py_reads_it() {
    check("bigendian.gguf");
    let bytes = read("bigendian.gguf");
    let file = parse(&bytes).unwrap();
    assert!(file.big_endian);
    assert_eq!(file.get("test.uint32"), Some(&GgufValue::U32(305_419_896)));
    assert_eq!(file.get("test.int64"), Some(&GgufValue::I64(-81_985_529_216_486_895)));
    assert_eq!(file.get("test.float32"), Some(&GgufValue::F32(-1.5)));
    let Some(GgufValue::Array(ints)) = file.get("test.array.int32") else { panic!("test.array.int32") };
    let ints: Vec<GgufValue<'_>> = ints.iter().collect();
    assert_eq!(ints, [GgufValue::I32(1), GgufValue::I32(-2), GgufValue::I32(16_909_060)]);
    let tensors = expected("bigendian.gguf")["tensors"].clone();
    for t in &file.tensors {
        let width = usize::try_from(t.ggml_type.type_size()).unwrap();
        let mut swapped = t.data.to_vec();
        swapped.chunks_mut(width).for_each(<[u8]>::reverse);
        assert_eq!(json!(sha256(&swapped)), tensors[t.name]["sha256_le"], "{}", t.name);
    }
}

/// Every proper prefix of a real file is refused, never accepted as a smaller file.
#[test]
fn every_prefix_of_a_fixture_is_refused() {
    let bytes = read("aligned64.gguf");
    // GGUFWriter pads after the last tensor; the file is complete once the last tensor's data is.
    let end = parse(&bytes).unwrap().tensors.iter().map(|t| t.offset as usize + t.data.len()).max().unwrap();
    for len in 0..end {
        assert!(parse(&bytes[..len]).is_err(), "a prefix of {len} bytes parses");
    }
}
