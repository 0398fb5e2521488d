//! `tpack convert` on files written by independent writers (PyPI `safetensors` and `gguf`), checked tensor by
//! tensor against what those libraries read back (`fixtures/expected.json`), and back again.

mod common;

use common::*;
use serde_json::{json, Value};
use tpack::{Container, Dtype, MetaValue};

/// safetensors dtype names → tpack dtype names, for the dtypes both have.
fn tpack_dtype_of_safetensors(name: &str) -> &'static str {
    match name {
        "F8_E4M3" => "F8E4M3",
        "F8_E5M2" => "F8E5M2",
        "F4" => "F4E2M1",
        "F8_E8M0" => "F8E8M0",
        "F8_E4M3FNUZ" => "F8E4M3FNUZ",
        "F8_E5M2FNUZ" => "F8E5M2FNUZ",
        other => Dtype::from_name(other).and_then(Dtype::name).unwrap_or_else(|| panic!("{other}")),
    }
}

/// Converts the safetensors fixture `name` and checks every tensor and metadata value against what PyPI
/// safetensors read from it (`expected.json`).
fn check_safetensors(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.tpack");
    assert_ok(&run!("convert", fixture(name), out));
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    c.verify().unwrap();
    let expected = expected();
    let tensors = expected[name]["tensors"].as_object().unwrap();
    assert_eq!(c.len(), tensors.len());
    for (name, t) in tensors {
        let e = c.get(name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(
            e.dtype().name().unwrap(),
            tpack_dtype_of_safetensors(t["dtype"].as_str().unwrap()),
            "{name}"
        );
        assert_eq!(json!(e.shape().dims()), t["shape"], "{name}");
        assert_eq!(e.byte_len(), t["nbytes"].as_u64().unwrap(), "{name}");
        assert_eq!(sha256(e.payload()), t["sha256"].as_str().unwrap(), "{name}");
    }
    for (key, value) in expected[name]["metadata"].as_object().unwrap() {
        assert_eq!(c.metadata().get(key), Some(MetaValue::String(value.as_str().unwrap())), "{key}");
    }
}

#[test]
fn safetensors_to_tpack_keeps_every_tensor_and_the_metadata() {
    check_safetensors("model.safetensors");
}

/// The safetensors dtypes that format 1.1 added (F4, F8_E8M0, the FNUZ FP8s, C64), as PyPI safetensors 0.8
/// writes them, convert to the tpack dtypes of the same bytes, and come back byte for byte.
#[test]
fn safetensors_dtypes_of_format_1_1_convert_both_ways() {
    check_safetensors("newdtypes.safetensors");
    let dir = tempfile::tempdir().unwrap();
    let (mid, back) = (dir.path().join("n.tpack"), dir.path().join("back.safetensors"));
    assert_ok(&run!("convert", fixture("newdtypes.safetensors"), mid));
    assert_ok(&run!("convert", mid, back));
    assert!(std::fs::read(&back).unwrap() == std::fs::read(fixture("newdtypes.safetensors")).unwrap());
}

/// F6_E2M3 and F6_E3M2, which PyPI safetensors 0.8 cannot write (its TensorSpec knows no float6 dtype): a
/// container holding them converts to a safetensors file that PyPI safetensors reads with the same dtype,
/// shape and bytes, and that converts back to the same entries.
#[test]
fn safetensors_f6_dtypes_are_written_as_pypi_safetensors_reads_them() {
    let mut b = tpack::write::Builder::new();
    let (a, c): (Vec<u8>, Vec<u8>) = ((0..6).collect(), (100..112).collect());
    b.push(tpack::write::NewEntry::new("f6.e2m3", Dtype::F6E2M3, &[2, 4], &a)).unwrap();
    b.push(tpack::write::NewEntry::new("f6.e3m2", Dtype::F6E3M2, &[8], &c[..6])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("f6.tpack");
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let (out, again) = (dir.path().join("f6.safetensors"), dir.path().join("again.tpack"));
    assert_ok(&run!("convert", input, out));
    assert_ok(&run!("convert", out, again));
    let bytes = std::fs::read(&again).unwrap();
    let back = Container::parse(&bytes).unwrap();
    for (name, dtype, dims, data) in
        [("f6.e2m3", Dtype::F6E2M3, &[2u64, 4][..], &a[..]), ("f6.e3m2", Dtype::F6E3M2, &[8], &c[..6])]
    {
        let e = back.get(name).unwrap();
        assert_eq!((e.dtype(), e.shape().dims(), e.payload()), (dtype, dims, data), "{name}");
    }
    let Some(py) = python() else { return };
    let read = python_readback(&py, &out);
    assert_eq!(read["tensors"]["f6.e2m3"]["dtype"], "F6_E2M3");
    assert_eq!(read["tensors"]["f6.e2m3"]["shape"], json!([2, 4]));
    assert_eq!(read["tensors"]["f6.e2m3"]["sha256"], sha256(&a));
    assert_eq!(read["tensors"]["f6.e3m2"]["dtype"], "F6_E3M2");
    assert_eq!(read["tensors"]["f6.e3m2"]["sha256"], sha256(&c[..6]));
}

fn check_gguf(fixture_name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.tpack");
    assert_ok(&run!("convert", fixture(fixture_name), out));
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    c.verify().unwrap();
    let expected = expected();
    let tensors = expected[fixture_name]["tensors"].as_object().unwrap();
    assert_eq!(c.len(), tensors.len());
    for (name, t) in tensors {
        let e = c.get(name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(e.dtype().name().unwrap(), t["ggml_type"].as_str().unwrap(), "{name}");
        // GGUF lists dimensions innermost first, tpack outermost first.
        let mut dims: Vec<u64> =
            t["shape_gguf"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
        dims.reverse();
        assert_eq!(e.shape().dims(), dims.as_slice(), "{name}");
        assert_eq!(e.byte_len(), t["nbytes"].as_u64().unwrap(), "{name}");
        // A big-endian file's elements arrive byte-swapped: the fixture records the hash of the swapped bytes.
        let want = t.get("sha256_le").unwrap_or(&t["sha256"]);
        assert_eq!(sha256(e.payload()), want.as_str().unwrap(), "{name}");
        assert_eq!(e.offset() % 64, 0, "{name}");
    }
    // Every key with its exact GGUF type and value, and the two records tpack keeps to rebuild the file.
    let metadata = expected[fixture_name]["metadata"].as_object().unwrap();
    let big_endian = expected[fixture_name]["endianness"] == "big";
    // A file with no tensors that ends at its tensor infos (the alignment is 32 in every such fixture).
    let unpadded =
        tensors.is_empty() && !std::fs::read(fixture(fixture_name)).unwrap().len().is_multiple_of(32);
    let records = 2 + usize::from(big_endian) + usize::from(unpadded);
    assert_eq!(c.metadata().iter().count(), metadata.len() + records);
    assert_eq!(c.metadata().get("gguf.big_endian"), big_endian.then_some(MetaValue::Bool(true)));
    assert_eq!(c.metadata().get("gguf.unpadded"), unpadded.then_some(MetaValue::Bool(true)));
    for (key, m) in metadata {
        let got = c.metadata().get(key).unwrap_or_else(|| panic!("metadata {key} missing"));
        assert_eq!(&as_gguf_py(&got), m, "{key}");
    }
    // The file's key order (serde_json's map here is sorted, so the order is read from the file itself).
    let Some(MetaValue::StringArray(order)) = c.metadata().get("gguf.key_order") else { panic!("key order") };
    let original = std::fs::read(fixture(fixture_name)).unwrap();
    let in_file: Vec<&str> = tpack_gguf::parse(&original).unwrap().metadata.iter().map(|(k, _)| *k).collect();
    assert_eq!(order.collect::<Vec<_>>(), in_file);
    let mut sorted = in_file.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, metadata.keys().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(c.metadata().get("gguf.version"), Some(MetaValue::U32(3)));
}

/// A tpack metadata value as readback.py prints the GGUF value it came from (its gguf-py type names).
fn as_gguf_py(v: &MetaValue<'_>) -> Value {
    let scalar = |t: &str, value: Value| json!({"type": t, "value": value});
    let array = |t: &str, value: Value| json!({"type": "ARRAY", "item_type": t, "value": value});
    match v {
        MetaValue::U8(x) => scalar("UINT8", json!(x)),
        MetaValue::I8(x) => scalar("INT8", json!(x)),
        MetaValue::U16(x) => scalar("UINT16", json!(x)),
        MetaValue::I16(x) => scalar("INT16", json!(x)),
        MetaValue::U32(x) => scalar("UINT32", json!(x)),
        MetaValue::I32(x) => scalar("INT32", json!(x)),
        MetaValue::F32(x) => scalar("FLOAT32", json!(f64::from(*x))),
        MetaValue::Bool(x) => scalar("BOOL", json!(x)),
        MetaValue::String(s) => scalar("STRING", json!(s)),
        MetaValue::U64(x) => scalar("UINT64", json!(x)),
        MetaValue::I64(x) => scalar("INT64", json!(x)),
        MetaValue::F64(x) => scalar("FLOAT64", json!(x)),
        other => {
            let (t, value) = items(other);
            array(t, value)
        }
    }
}

/// The gguf-py item type name and readback.py items of an array value.
fn items(v: &MetaValue<'_>) -> (&'static str, Value) {
    macro_rules! le {
        ($a:expr) => {
            json!($a.iter().map(|x| x.get()).collect::<Vec<_>>())
        };
    }
    match v {
        MetaValue::U8Array(a) => ("UINT8", json!(a)),
        MetaValue::I8Array(a) => ("INT8", json!(a)),
        MetaValue::U16Array(a) => ("UINT16", le!(a)),
        MetaValue::I16Array(a) => ("INT16", le!(a)),
        MetaValue::U32Array(a) => ("UINT32", le!(a)),
        MetaValue::I32Array(a) => ("INT32", le!(a)),
        MetaValue::F32Array(a) => {
            ("FLOAT32", json!(a.iter().map(|x| f64::from(x.get())).collect::<Vec<_>>()))
        }
        MetaValue::BoolArray(a) => ("BOOL", json!(a)),
        MetaValue::StringArray(s) => ("STRING", json!((*s).collect::<Vec<_>>())),
        MetaValue::U64Array(a) => ("UINT64", le!(a)),
        MetaValue::I64Array(a) => ("INT64", le!(a)),
        MetaValue::F64Array(a) => ("FLOAT64", le!(a)),
        MetaValue::ArrayArray(a) => (
            "ARRAY",
            Value::Array(
                (*a).map(|item| {
                    let (t, value) = items(&item);
                    json!({"item_type": t, "value": value})
                })
                .collect(),
            ),
        ),
        other => panic!("{other:?} is no GGUF array"),
    }
}

#[test]
fn gguf_to_tpack_keeps_quantized_tensors_and_typed_metadata() {
    check_gguf("model.gguf");
}

#[test]
fn gguf_with_custom_alignment_converts() {
    check_gguf("aligned64.gguf");
}

/// A tensor of every GGML type gguf-py writes (Q8_1 aside: see fixtures/README.md), every metadata type,
/// arrays of arrays, `general.alignment` 16 (payloads at tpack's 64).
#[test]
fn gguf_of_every_ggml_type_and_metadata_type_converts_exactly() {
    check_gguf("alltypes.gguf");
}

#[test]
fn gguf_with_a_mixed_quantization_converts() {
    check_gguf("mixed.gguf");
}

/// A vocabulary file as llama.cpp's converters write one (`--vocab-only`): no tensors, and no padding after
/// the metadata, which `gguf.unpadded` records.
#[test]
fn a_gguf_vocabulary_with_no_tensors_converts_and_records_that_it_is_unpadded() {
    check_gguf("vocab.gguf");
}

/// Arrays nested 9 levels deep, the innermost of values: 8 levels of `array[]` around a typed array, the most
/// a tpack value holds.
#[test]
fn gguf_arrays_nested_as_deep_as_tpack_holds_convert() {
    check_gguf("deep.gguf");
}

/// One level more than tpack holds: refused, saying why and what to do.
#[test]
fn gguf_arrays_nested_deeper_than_tpack_holds_are_refused_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.tpack");
    assert_fails(
        &run!("convert", fixture("toodeep.gguf"), out),
        3,
        &[
            "metadata \"test.nested.deepest\" nests arrays more than 9 levels deep",
            "at most 8 levels of array[] around arrays of values",
            "cannot be converted",
        ],
    );
    assert!(!out.exists());
}

/// gguf-py's big-endian writer: every number, tensor elements included, is big-endian. The conversion reads
/// the metadata right and byte-swaps each element, so the tpack payload is the little-endian tensor.
#[test]
fn big_endian_gguf_converts_to_little_endian_tensors() {
    check_gguf("bigendian.gguf");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("be.tpack");
    assert_ok(&run!("convert", fixture("bigendian.gguf"), out));
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    let w = c.get("w.f32").unwrap();
    let values: Vec<f32> =
        w.le::<tpack::zerocopy::little_endian::F32>().unwrap().iter().map(|v| v.get()).collect();
    assert!(values.iter().all(|v| v.is_finite() && v.abs() < 1e6), "{values:?}");
}

/// A quantized tensor in a big-endian GGUF has no defined byte order for its block scales: refused, by name.
#[test]
fn big_endian_gguf_with_a_quantized_tensor_is_refused() {
    // Flip the fixture's first tensor type to Q8_0 by hand is fiddly; build a minimal big-endian file instead.
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_be_bytes());
    bytes.extend(1u64.to_be_bytes()); // one tensor
    bytes.extend(0u64.to_be_bytes()); // no metadata
    bytes.extend(1u64.to_be_bytes());
    bytes.push(b'q');
    bytes.extend(1u32.to_be_bytes()); // n_dims
    bytes.extend(32u64.to_be_bytes()); // ne[0]
    bytes.extend(8u32.to_be_bytes()); // Q8_0
    bytes.extend(0u64.to_be_bytes()); // offset
    while !bytes.len().is_multiple_of(32) {
        bytes.push(0);
    }
    bytes.extend([0u8; 34]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("q.gguf");
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.path().join("q.tpack");
    assert_fails(&run!("convert", input, out), 3, &["tensor \"q\"", "Q8_0", "big-endian", "refused"]);
    assert!(!out.exists());
}

#[test]
fn tpack_to_safetensors_gives_back_what_the_python_library_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("model.tpack");
    let back = dir.path().join("back.safetensors");
    assert_ok(&run!("convert", fixture("model.safetensors"), mid));
    assert_ok(&run!("convert", mid, back));

    // The Rust safetensors crate reads the same tensors.
    let original = std::fs::read(fixture("model.safetensors")).unwrap();
    let converted = std::fs::read(&back).unwrap();
    let a = safetensors::SafeTensors::deserialize(&original).unwrap();
    let b = safetensors::SafeTensors::deserialize(&converted).unwrap();
    assert_eq!(a.len(), b.len());
    for (name, view) in a.iter() {
        let other = b.tensor(name).unwrap();
        assert_eq!(
            (view.dtype(), view.shape(), view.data()),
            (other.dtype(), other.shape(), other.data()),
            "{name}"
        );
    }

    // The PyPI library reads back exactly what it wrote in the first place.
    if let Some(py) = python() {
        let read = python_readback(&py, &back);
        let want = &expected()["model.safetensors"];
        assert_eq!(read["tensors"], want["tensors"]);
        assert_eq!(read["metadata"], want["metadata"]);
    }
}

#[test]
fn gguf_to_tpack_to_safetensors_reads_back_in_python() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("m.tpack");
    let back = dir.path().join("m.safetensors");
    assert_ok(&run!("convert", fixture("aligned64.gguf"), mid));
    // Q8_0 has no safetensors dtype: refused, naming the entry.
    let o = run!("convert", mid, back);
    assert_fails(&o, 3, &["b.q8_0", "Q8_0", "safetensors cannot store"]);
    assert!(!back.exists());
}

#[test]
fn corrupt_tpack_is_not_converted() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("m.tpack");
    let back = dir.path().join("m.safetensors");
    assert_ok(&run!("convert", fixture("model.safetensors"), mid));
    let mut bytes = std::fs::read(&mid).unwrap();
    let c = Container::parse(&bytes).unwrap();
    let at = c.get("embed.weight").unwrap().offset() as usize;
    bytes[at] ^= 1;
    std::fs::write(&mid, &bytes).unwrap();
    let o = run!("convert", mid, back);
    assert_fails(&o, 1, &["corrupt", "embed.weight", "R50"]);
    assert!(!back.exists());
}

#[test]
fn existing_output_is_kept_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.tpack");
    std::fs::write(&out, b"precious").unwrap();
    let o = run!("convert", fixture("model.safetensors"), out);
    assert_fails(&o, 4, &["already exists", "--force"]);
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    assert_ok(&run!("convert", fixture("model.safetensors"), out, "--force"));
    Container::parse(&std::fs::read(&out).unwrap()).unwrap();
}

/// A safetensors header that names a tensor (or a metadata key) twice: the `safetensors` crate and Python's
/// `safe_open` silently keep the last; tpack refuses the ambiguity, as its own format does (R21).
#[test]
fn safetensors_with_a_repeated_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, header) in [
        (
            "tensor",
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
        ),
        ("meta", r#"{"__metadata__":{"k":"v","k":"w"},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#),
    ] {
        let mut h = header.as_bytes().to_vec();
        while h.len() % 8 != 0 {
            h.push(b' ');
        }
        let mut bytes = (h.len() as u64).to_le_bytes().to_vec();
        bytes.extend(&h);
        bytes.extend([1, 2]);
        // The crate itself accepts it: the check is ours.
        assert!(safetensors::SafeTensors::deserialize(&bytes).is_ok());
        let input = dir.path().join(format!("{name}.safetensors"));
        std::fs::write(&input, &bytes).unwrap();
        let out = dir.path().join(format!("{name}.tpack"));
        assert_fails(&run!("convert", input, out), 3, &["not a valid safetensors file", "appears twice"]);
        assert!(!out.exists());
    }
}

/// An entry named `__metadata__` would collide with safetensors' metadata map (a repeated key, or a tensor read
/// as the map): refused before anything is written, naming the entry.
#[test]
fn an_entry_named_like_the_safetensors_metadata_is_refused() {
    for with_metadata in [false, true] {
        let mut b = tpack::write::Builder::new();
        b.push(tpack::write::NewEntry::new("w", Dtype::U8, &[1], &[1])).unwrap();
        b.push(tpack::write::NewEntry::new("__metadata__", Dtype::U8, &[2], &[1, 2])).unwrap();
        if with_metadata {
            b.metadata("k", MetaValue::String("v")).unwrap();
        }
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("m.tpack");
        std::fs::write(&input, b.finish().unwrap()).unwrap();
        let out = dir.path().join("m.safetensors");
        assert_fails(&run!("convert", input, out), 3, &["m.tpack", "entry \"__metadata__\"", "safetensors"]);
        assert!(!out.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing else is left behind");
    }
}

/// The `safetensors` crate writes `__metadata__` from a HashMap, in a different order in every process; the
/// output here is the same every time, its keys sorted.
#[test]
fn tpack_to_safetensors_is_deterministic() {
    let mut b = tpack::write::Builder::new();
    b.push(tpack::write::NewEntry::new("w", Dtype::F32, &[1], &1f32.to_le_bytes())).unwrap();
    let keys: Vec<String> = (0..16).map(|i| format!("key.{:02}", (i * 7) % 16)).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    let values: Vec<String> = keys.iter().map(|k| k.replace("key", "value")).collect();
    let mut pairs: Vec<(&String, &String)> = keys.iter().zip(&values).collect();
    pairs.sort();
    for (k, v) in &pairs {
        b.metadata(k, MetaValue::String(v)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.tpack");
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let mut outputs = Vec::new();
    for i in 0..3 {
        let out = dir.path().join(format!("m{i}.safetensors"));
        assert_ok(&run!("convert", input, out));
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert!(outputs.iter().all(|o| *o == outputs[0]), "the outputs differ");
    let n = u64::from_le_bytes(outputs[0][..8].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&outputs[0][8..8 + n]).unwrap();
    let positions: Vec<usize> = sorted.iter().map(|k| header.find(&format!("\"{k}\"")).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "keys not sorted: {header}");
}

/// The Python library's file (its `__metadata__` in sorted order, see fixtures/README.md) comes back byte for
/// byte: the same tensor order, header and padding as the `safetensors` writer gives.
#[test]
fn safetensors_to_tpack_to_safetensors_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let mid = dir.path().join("m.tpack");
    let back = dir.path().join("back.safetensors");
    assert_ok(&run!("convert", fixture("model.safetensors"), mid));
    assert_ok(&run!("convert", mid, back));
    assert!(std::fs::read(&back).unwrap() == std::fs::read(fixture("model.safetensors")).unwrap());
}

/// `convert X X --force` would replace its own input (mapped while it is read): refused, whichever path
/// names the input — the same one, another spelling, a symlink or a hard link.
#[test]
fn convert_never_replaces_its_own_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.safetensors");
    std::fs::copy(fixture("model.safetensors"), &input).unwrap();
    let original = std::fs::read(&input).unwrap();
    let respelled = dir.path().join(".").join("m.safetensors");
    let symlink = dir.path().join("link.tpack");
    let hardlink = dir.path().join("hard.tpack");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&input, &symlink).unwrap();
    #[cfg(windows)]
    std::os::windows::fs::symlink_file(&input, &symlink).unwrap();
    std::fs::hard_link(&input, &hardlink).unwrap();
    for (output, to) in [(&input, "tpack"), (&respelled, "tpack"), (&symlink, "tpack"), (&hardlink, "tpack")]
    {
        for force in [false, true] {
            let mut args =
                vec!["convert".into(), input.clone().into_os_string(), output.clone().into_os_string()];
            args.extend(["--to".into(), to.into()]);
            if force {
                args.push("--force".into());
            }
            let o = tpack(args);
            assert_fails(&o, 4, &["is the input file itself", "give the output another name"]);
            assert_eq!(std::fs::read(&input).unwrap(), original, "{}", output.display());
        }
    }
}

/// An output that is a directory is refused at once, before any work, with or without --force.
#[test]
fn an_output_directory_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.tpack");
    std::fs::create_dir(&out).unwrap();
    for force in [&[][..], &["--force"]] {
        let mut args =
            vec!["convert".into(), fixture("model.safetensors").into_os_string(), out.clone().into()];
        args.extend(force.iter().map(Into::into));
        let err = assert_fails(&tpack(args), 4, &["out.tpack is a directory", "give the output file's name"]);
        assert!(!err.contains("already exists"), "{err}");
    }
    assert!(out.is_dir());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing was written next to it");
}

/// A pair of formats no conversion connects is said at once: not "already exists; pass --force" first.
#[test]
fn an_unsupported_conversion_is_said_before_the_existing_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.safetensors");
    std::fs::write(&out, b"precious").unwrap();
    let err = assert_fails(
        &run!("convert", fixture("model.gguf"), out),
        3,
        &["cannot convert", "from GGUF to safetensors", "supported are"],
    );
    assert!(!err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
}

/// An output in a directory that does not exist is named before any work, with what to do.
#[test]
fn a_missing_output_directory_is_named_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("no/such/m.tpack");
    assert_fails(
        &run!("convert", fixture("model.safetensors"), out),
        4,
        &["the directory", "no/such does not exist", "mkdir -p", "create it first"],
    );
    assert!(!dir.path().join("no").exists());
}

/// Runs `script` with the PyPI `gguf` package (`out` bound to the file to write); `None` without Python.
fn gguf_py(dir: &std::path::Path, name: &str, script: &str) -> Option<std::path::PathBuf> {
    let py = python()?;
    let out = dir.join(name);
    let program = format!("import sys\nimport numpy as np\nimport gguf\nout = sys.argv[1]\n{script}");
    let o = std::process::Command::new(py).args(["-c", &program]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(out)
}

/// A GGUF alignment above tpack's largest (65536) cannot be kept: refused, saying so, never capped silently.
#[test]
fn gguf_alignment_above_tpacks_largest_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let write = |alignment: u32| {
        gguf_py(
            dir.path(),
            &format!("a{alignment}.gguf"),
            &format!(
                "w = gguf.GGUFWriter(out, arch='llama')\n\
                 w.add_custom_alignment({alignment})\n\
                 w.add_tensor('w', np.arange(4, dtype=np.float32))\n\
                 w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()\n"
            ),
        )
    };
    let Some(big) = write(131072) else { return };
    let out = dir.path().join("big.tpack");
    assert_fails(
        &run!("convert", big, out),
        3,
        &["a131072.gguf", "general.alignment is 131072", "65536", "rewrite the GGUF file"],
    );
    assert!(!out.exists());
    // The largest tpack stores is kept as it is.
    let largest = write(65536).unwrap();
    let out = dir.path().join("largest.tpack");
    assert_ok(&run!("convert", largest, out));
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    assert_eq!(c.get("w").unwrap().alignment(), 65536);
    assert_eq!(c.metadata().get("general.alignment"), Some(MetaValue::U32(65536)));
}

/// FLOAT32 metadata is kept as f32, every bit: NaN payloads kept, signalling NaNs not quieted. gguf-py
/// writes the file with placeholder values (its writer packs Python floats, which cannot hold a signalling
/// NaN); the test then puts the bit patterns in place of the placeholders' bytes, and checks them in the tpack
/// file and in the GGUF written back from it.
#[test]
fn gguf_float32_metadata_keeps_every_bit() {
    let cases: [u32; 12] = [
        0x7f80_0001, // signalling NaN, payload 1
        0xff80_0001,
        0x7fbf_ffff,
        0x7fc0_0000,
        0x7f80_0000,
        0xff80_0000,
        0x0000_0000,
        0x8000_0000,
        0x0000_0001,
        0x807f_ffff,
        0x3f80_0000,
        0x7f7f_ffff,
    ];
    // Placeholders 1001.0, 1002.0, …: exact in f32, and far from every bit pattern above.
    let placeholders: Vec<f32> = (0..cases.len()).map(|i| 1001.0 + i as f32).collect();
    let list: Vec<String> = placeholders.iter().map(|p| format!("{p:.1}")).collect();
    let dir = tempfile::tempdir().unwrap();
    let Some(path) = gguf_py(
        dir.path(),
        "nan.gguf",
        &format!(
            "w = gguf.GGUFWriter(out, arch='llama')\n\
             w.add_float32('test.snan', 999.0)\n\
             w.add_array('test.f32s', [{}])\n\
             w.add_tensor('w', np.arange(4, dtype=np.float32))\n\
             w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()\n",
            list.join(", ")
        ),
    ) else {
        return;
    };
    let mut bytes = std::fs::read(&path).unwrap();
    let replace = |bytes: &mut Vec<u8>, from: &[u8], to: &[u8]| {
        let at: Vec<usize> =
            (0..=bytes.len() - from.len()).filter(|&i| bytes[i..].starts_with(from)).collect();
        assert_eq!(at.len(), 1, "placeholder {from:02x?} found {} times", at.len());
        bytes[at[0]..at[0] + to.len()].copy_from_slice(to);
    };
    let from: Vec<u8> = placeholders.iter().flat_map(|p| p.to_le_bytes()).collect();
    let to: Vec<u8> = cases.iter().flat_map(|b| b.to_le_bytes()).collect();
    replace(&mut bytes, &from, &to);
    replace(&mut bytes, &999f32.to_le_bytes(), &0x7f80_0001u32.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();

    let out = dir.path().join("nan.tpack");
    assert_ok(&run!("convert", path, out));
    let converted = std::fs::read(&out).unwrap();
    let c = Container::parse(&converted).unwrap();
    let Some(MetaValue::F32(snan)) = c.metadata().get("test.snan") else { panic!("test.snan") };
    assert_eq!(snan.to_bits(), 0x7f80_0001, "{:08x}", snan.to_bits());
    let Some(MetaValue::F32Array(all)) = c.metadata().get("test.f32s") else { panic!("test.f32s") };
    let got: Vec<u32> = all.iter().map(|v| v.get().to_bits()).collect();
    assert_eq!(got, cases, "{got:08x?}");
    // And back: the very bytes, signalling NaNs included.
    let back = dir.path().join("back.gguf");
    assert_ok(&run!("convert", out, back));
    assert!(std::fs::read(&back).unwrap() == bytes, "the GGUF written back differs");
}
