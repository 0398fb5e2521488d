//! Unit tests: one per rule, each on hand-written bytes from a tiny little-endian GGUF encoder. The files
//! that gguf-py wrote are tested in `tests/fixtures.rs`.

use std::borrow::ToOwned;
use std::format;
use std::string::ToString;
use std::vec;
use std::vec::Vec;

use crate::format::{
    T_ARRAY, T_BOOL, T_F32, T_F64, T_I16, T_I32, T_I64, T_I8, T_STRING, T_U16, T_U32, T_U64, T_U8,
};
use crate::*;

// A tiny little-endian GGUF encoder: each helper returns the encoded bytes of one item.

fn string(s: &[u8]) -> Vec<u8> {
    let mut out = (s.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(s);
    out
}

/// A metadata pair: key, value type code, encoded value.
fn kv(key: &str, code: u32, value: &[u8]) -> Vec<u8> {
    let mut out = string(key.as_bytes());
    out.extend_from_slice(&code.to_le_bytes());
    out.extend_from_slice(value);
    out
}

/// An encoded array value (without the leading ARRAY type code): element type, count, elements.
fn array(code: u32, count: u64, elements: &[u8]) -> Vec<u8> {
    let mut out = code.to_le_bytes().to_vec();
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(elements);
    out
}

fn tensor_info(name: &str, dims: &[u64], code: u32, offset: u64) -> Vec<u8> {
    let mut out = string(name.as_bytes());
    out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
    for d in dims {
        out.extend_from_slice(&d.to_le_bytes());
    }
    out.extend_from_slice(&code.to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    out
}

fn header(version: u32, tensors: u64, kvs: u64) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&tensors.to_le_bytes());
    out.extend_from_slice(&kvs.to_le_bytes());
    out
}

/// A version-3 file: header, `kvs`, `infos`, zero padding to `alignment`, `data`.
fn file(kvs: &[Vec<u8>], infos: &[Vec<u8>], alignment: usize, data: &[u8]) -> Vec<u8> {
    let mut out = header(3, infos.len() as u64, kvs.len() as u64);
    kvs.iter().chain(infos).for_each(|item| out.extend_from_slice(item));
    out.resize(out.len().next_multiple_of(alignment), 0);
    out.extend_from_slice(data);
    out
}

/// A file with one F32 tensor `t` of 4 elements and the given metadata.
fn with_meta(kvs: &[Vec<u8>]) -> Vec<u8> {
    file(kvs, &[tensor_info("t", &[4], 0, 0)], 32, &[0; 16])
}

/// A file with no metadata and the given tensor infos, and `data_len` bytes of data.
fn with_tensors(infos: &[Vec<u8>], data_len: usize) -> Vec<u8> {
    file(&[], infos, 32, &vec![0; data_len])
}

fn err(bytes: &[u8]) -> GgufError {
    parse(bytes).expect_err("the file should be refused")
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn alignment_kv(a: u32) -> Vec<u8> {
    kv(ALIGNMENT_KEY, T_U32, &a.to_le_bytes())
}

/// Every metadata type, arrays of several kinds, four tensor types out of order, alignment 64.
fn everything() -> Vec<u8> {
    let strings = cat(&[&string(b"a"), &string("é€".as_bytes()), &string(b"")]);
    let inner_u32 = array(T_U32, 2, &cat(&[&7u32.to_le_bytes(), &8u32.to_le_bytes()]));
    let inner_str = array(T_STRING, 1, &string(b"x"));
    let kvs = [
        kv("u8", T_U8, &[200]),
        kv("i8", T_I8, &(-5i8).to_le_bytes()),
        kv("u16", T_U16, &65000u16.to_le_bytes()),
        kv("i16", T_I16, &(-300i16).to_le_bytes()),
        kv("u32", T_U32, &4_000_000_000u32.to_le_bytes()),
        kv("i32", T_I32, &(-70_000i32).to_le_bytes()),
        kv("f32", T_F32, &1.5f32.to_le_bytes()),
        kv("bool", T_BOOL, &[1]),
        kv("string", T_STRING, &string("hé".as_bytes())),
        kv("u64", T_U64, &u64::MAX.to_le_bytes()),
        kv("i64", T_I64, &i64::MIN.to_le_bytes()),
        kv("f64", T_F64, &(-2.25f64).to_le_bytes()),
        alignment_kv(64),
        kv("arr.u8", T_ARRAY, &array(T_U8, 3, &[1, 2, 3])),
        kv("arr.i8", T_ARRAY, &array(T_I8, 2, &[0xff, 1])),
        kv("arr.u16", T_ARRAY, &array(T_U16, 1, &513u16.to_le_bytes())),
        kv("arr.i16", T_ARRAY, &array(T_I16, 1, &(-2i16).to_le_bytes())),
        kv("arr.u32", T_ARRAY, &array(T_U32, 1, &9u32.to_le_bytes())),
        kv("arr.i32", T_ARRAY, &array(T_I32, 1, &(-9i32).to_le_bytes())),
        kv("arr.f32", T_ARRAY, &array(T_F32, 1, &0.5f32.to_le_bytes())),
        kv("arr.bool", T_ARRAY, &array(T_BOOL, 3, &[0, 1, 0])),
        kv("arr.string", T_ARRAY, &array(T_STRING, 3, &strings)),
        kv("arr.u64", T_ARRAY, &array(T_U64, 1, &10u64.to_le_bytes())),
        kv("arr.i64", T_ARRAY, &array(T_I64, 1, &(-10i64).to_le_bytes())),
        kv("arr.f64", T_ARRAY, &array(T_F64, 1, &0.25f64.to_le_bytes())),
        kv("arr.empty", T_ARRAY, &array(T_U32, 0, &[])),
        kv("arr.nested", T_ARRAY, &array(T_ARRAY, 2, &cat(&[&inner_u32, &inner_str]))),
    ];
    // Data section (alignment 64): q8 at 0 (2 rows × 34 = 68 bytes), f32 at 128 (8 × 4 = 32),
    // q4 at 192 (18), f16 at 256 (3 × 2 = 6). The file ends with the last tensor.
    let infos = [
        tensor_info("f32", &[4, 2], GgmlType::F32.code(), 128),
        tensor_info("f16", &[3], GgmlType::F16.code(), 256),
        tensor_info("q8", &[32, 2], GgmlType::Q8_0.code(), 0),
        tensor_info("q4", &[32], GgmlType::Q4_0.code(), 192),
    ];
    let data: Vec<u8> = (0..262u32).map(|i| i as u8).collect();
    file(&kvs, &infos, 64, &data)
}

#[test]
fn parses_every_metadata_type_array_and_tensor() {
    let bytes = everything();
    let g = parse(&bytes).unwrap();
    assert_eq!((g.version, g.alignment, g.metadata.len(), g.tensors.len()), (3, 64, 27, 4));
    assert_eq!(g.data_offset % 64, 0);
    assert_eq!(g.data_offset as usize, bytes.len() - 262);
    let scalars = [
        ("u8", GgufValue::U8(200)),
        ("i8", GgufValue::I8(-5)),
        ("u16", GgufValue::U16(65000)),
        ("i16", GgufValue::I16(-300)),
        ("u32", GgufValue::U32(4_000_000_000)),
        ("i32", GgufValue::I32(-70_000)),
        ("f32", GgufValue::F32(1.5)),
        ("bool", GgufValue::Bool(true)),
        ("string", GgufValue::String("hé")),
        ("u64", GgufValue::U64(u64::MAX)),
        ("i64", GgufValue::I64(i64::MIN)),
        ("f64", GgufValue::F64(-2.25)),
        (ALIGNMENT_KEY, GgufValue::U32(64)),
    ];
    for (key, value) in &scalars {
        assert_eq!(g.get(key), Some(value), "{key}");
    }
    // Each array as its elements read back, in the order stored.
    let arrays = [
        ("arr.u8", "uint8[U8(1), U8(2), U8(3)]"),
        ("arr.i8", "int8[I8(-1), I8(1)]"),
        ("arr.u16", "uint16[U16(513)]"),
        ("arr.i16", "int16[I16(-2)]"),
        ("arr.u32", "uint32[U32(9)]"),
        ("arr.i32", "int32[I32(-9)]"),
        ("arr.f32", "float32[F32(0.5)]"),
        ("arr.bool", "bool[Bool(false), Bool(true), Bool(false)]"),
        ("arr.string", r#"string[String("a"), String("é€"), String("")]"#),
        ("arr.u64", "uint64[U64(10)]"),
        ("arr.i64", "int64[I64(-10)]"),
        ("arr.f64", "float64[F64(0.25)]"),
        ("arr.empty", "uint32[]"),
        ("arr.nested", r#"array[Array(uint32[U32(7), U32(8)]), Array(string[String("x")])]"#),
    ];
    for (key, want) in arrays {
        let Some(GgufValue::Array(array)) = g.get(key) else { panic!("{key}") };
        assert_eq!(format!("{array:?}"), want, "{key}");
        assert_eq!(array.iter().len(), array.len(), "{key}");
    }
    // File order is kept.
    assert_eq!(g.metadata[0].0, "u8");
    assert_eq!(g.metadata[26].0, "arr.nested");

    let start = g.data_offset;
    let expect = [
        ("f32", vec![4, 2], GgmlType::F32, 128, 32),
        ("f16", vec![3], GgmlType::F16, 256, 6),
        ("q8", vec![32, 2], GgmlType::Q8_0, 0, 68),
        ("q4", vec![32], GgmlType::Q4_0, 192, 18),
    ];
    for (t, (name, dims, ty, rel, len)) in g.tensors.iter().zip(expect) {
        assert_eq!(
            (t.name, &t.dims, t.ggml_type, t.offset, t.data.len()),
            (name, &dims, ty, start + rel, len)
        );
        let at = t.offset as usize;
        assert_eq!(t.data, &bytes[at..at + len]);
    }
    assert_eq!(g.tensor("q4").unwrap().n_elements(), 32);
    assert_eq!(g.tensor("f32").unwrap().n_elements(), 8);
}

#[test]
fn default_alignment_and_version_2() {
    let mut bytes = with_meta(&[kv("general.name", T_STRING, &string(b"tiny"))]);
    bytes[4] = 2;
    let g = parse(&bytes).unwrap();
    assert_eq!((g.version, g.alignment), (2, 32));
    assert_eq!(g.data_offset as usize, bytes.len() - 16);
    assert_eq!(g.tensors[0].offset, g.data_offset);
}

#[test]
fn no_tensors_needs_no_padding() {
    let bytes = cat(&[&header(3, 0, 1), &kv("a", T_U8, &[1])]);
    let g = parse(&bytes).unwrap();
    assert!(g.tensors.is_empty());
    assert_eq!(g.data_offset, (bytes.len() as u64).next_multiple_of(32));
    assert!(parse(&header(3, 0, 0)).unwrap().metadata.is_empty());
}

#[test]
fn zero_sized_tensors_and_trailing_bytes_are_accepted() {
    let bytes = with_tensors(
        &[
            tensor_info("empty", &[0, 5], 0, 32),
            tensor_info("also.empty", &[4, 0, 1u64 << 62], 0, 32),
            tensor_info("full", &[8], 0, 0),
        ],
        40,
    );
    let g = parse(&bytes).unwrap();
    assert!(g.tensors[0].data.is_empty() && g.tensors[1].data.is_empty());
    assert_eq!(g.tensors[2].data.len(), 32);
}

#[test]
fn every_proper_prefix_is_refused() {
    let bytes = everything();
    for len in 0..bytes.len() {
        match parse(&bytes[..len]) {
            Err(GgufError::Truncated { .. } | GgufError::TensorOutOfBounds { .. } | GgufError::BadMagic) => {}
            other => panic!("prefix of {len} bytes: {other:?}"),
        }
    }
    assert_eq!(err(b""), GgufError::BadMagic);
    assert_eq!(err(b"GG"), GgufError::Truncated { what: "magic", offset: 0 });
    assert_eq!(err(b"GGUF\x03\0\0\0\0"), GgufError::Truncated { what: "header", offset: 8 });
}

#[test]
fn refuses_bad_magic_and_versions() {
    let mut bytes = with_meta(&[]);
    bytes[..4].copy_from_slice(b"GGML");
    assert_eq!(err(&bytes), GgufError::BadMagic);
    for v in [0u32, 1, 4, 0x0100_0000, 0xffff_ffff] {
        let mut bytes = with_meta(&[]);
        bytes[4..8].copy_from_slice(&v.to_le_bytes());
        assert_eq!(err(&bytes), GgufError::UnsupportedVersion(v), "{v}");
    }
}

#[test]
fn reads_big_endian_headers() {
    for v in [2u32, 3] {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&v.to_be_bytes());
        bytes.extend_from_slice(&0u64.to_be_bytes());
        bytes.extend_from_slice(&0u64.to_be_bytes());
        let file = parse(&bytes).unwrap();
        assert!(file.big_endian);
        assert_eq!(file.version, v);
        // A big-endian count is read as such: 1 tensor declared, none present.
        bytes[8..16].copy_from_slice(&1u64.to_be_bytes());
        assert!(matches!(err(&bytes), GgufError::Truncated { .. }));
    }
}

#[test]
fn huge_counts_fail_fast_as_truncation() {
    let huge = 1u64 << 60;
    let t = std::time::Instant::now();
    assert!(matches!(err(&header(3, huge, 0)), GgufError::Truncated { what: "tensor name", .. }));
    assert!(matches!(err(&header(3, 0, huge)), GgufError::Truncated { what: "metadata key", .. }));
    assert!(matches!(err(&header(3, u64::MAX, u64::MAX)), GgufError::Truncated { .. }));
    for code in [T_U8, T_BOOL, T_U64, T_STRING, T_ARRAY] {
        for count in [huge, u64::MAX, 1 << 20] {
            let bytes = with_meta(&[kv("a", T_ARRAY, &array(code, count, &[0; 64]))]);
            assert_eq!(
                err(&bytes),
                GgufError::Truncated { what: "array", offset: 24 + 9 + 4 },
                "{code} × {count}"
            );
        }
    }
    // A string length past the end, and one beyond usize.
    for len in [1000u64, u64::MAX] {
        let bytes = cat(&[&header(3, 0, 1), &len.to_le_bytes(), b"abc"]);
        assert_eq!(err(&bytes), GgufError::Truncated { what: "metadata key", offset: 24 });
    }
    assert!(t.elapsed() < std::time::Duration::from_secs(1));
}

#[test]
fn refuses_invalid_utf8() {
    let bad = b"a\xffb";
    let key = cat(&[&header(3, 0, 1), &string(bad), &T_U8.to_le_bytes(), &[0]]);
    assert_eq!(err(&key), GgufError::InvalidUtf8 { what: "metadata key", offset: 24 });
    let value = with_meta(&[kv("k", T_STRING, &string(bad))]);
    assert_eq!(err(&value), GgufError::InvalidUtf8 { what: "string value", offset: 24 + 9 + 4 });
    let in_array = with_meta(&[kv("k", T_ARRAY, &array(T_STRING, 2, &cat(&[&string(b"ok"), &string(bad)])))]);
    assert_eq!(
        err(&in_array),
        GgufError::InvalidUtf8 { what: "string in an array", offset: 24 + 9 + 4 + 12 + 10 }
    );
    let name = cat(&[&header(3, 1, 0), &string(bad), &1u32.to_le_bytes(), &4u64.to_le_bytes()]);
    assert_eq!(err(&name), GgufError::InvalidUtf8 { what: "tensor name", offset: 24 });
}

#[test]
fn refuses_bad_keys() {
    assert_eq!(err(&with_meta(&[kv("", T_U8, &[0])])), GgufError::EmptyKey { offset: 24 });
    let dup = with_meta(&[kv("a", T_U8, &[0]), kv("b", T_U8, &[0]), kv("a", T_U16, &[0, 0])]);
    assert_eq!(err(&dup), GgufError::DuplicateKey("a".into()));
}

#[test]
fn refuses_unknown_value_types() {
    for code in [13u32, 99, u32::MAX] {
        let scalar = with_meta(&[kv("k", code, &[0; 8])]);
        assert_eq!(err(&scalar), GgufError::UnknownValueType { key: "k".into(), code });
        let elements = with_meta(&[kv("k", T_ARRAY, &array(code, 1, &[0; 8]))]);
        assert_eq!(err(&elements), GgufError::UnknownValueType { key: "k".into(), code });
    }
}

#[test]
fn refuses_bools_other_than_0_and_1() {
    let scalar = with_meta(&[kv("b", T_BOOL, &[2])]);
    assert_eq!(err(&scalar), GgufError::InvalidBool { key: "b".into(), value: 2 });
    let elements = with_meta(&[kv("b", T_ARRAY, &array(T_BOOL, 3, &[1, 0, 255]))]);
    assert_eq!(err(&elements), GgufError::InvalidBool { key: "b".into(), value: 255 });
}

/// An array nested `depth` levels deep, the innermost holding one u8.
fn nested(depth: usize) -> Vec<u8> {
    let mut value = array(T_U8, 1, &[5]);
    for _ in 1..depth {
        value = array(T_ARRAY, 1, &value);
    }
    value
}

#[test]
fn limits_array_nesting() {
    let ok = with_meta(&[kv("n", T_ARRAY, &nested(MAX_ARRAY_DEPTH))]);
    let mut expect = "uint8[U8(5)]".to_owned();
    for _ in 1..MAX_ARRAY_DEPTH {
        expect = format!("array[Array({expect})]");
    }
    let Some(GgufValue::Array(got)) = parse(&ok).unwrap().get("n").cloned() else { panic!() };
    assert_eq!(format!("{got:?}"), expect);
    let deep = with_meta(&[kv("n", T_ARRAY, &nested(MAX_ARRAY_DEPTH + 1))]);
    assert_eq!(err(&deep), GgufError::ArrayTooDeep { key: "n".into() });
}

#[test]
fn checks_general_alignment() {
    for a in [1u32, 8, 64, 4096] {
        let bytes = file(&[alignment_kv(a)], &[tensor_info("t", &[1], 0, 0)], a as usize, &[0; 4]);
        let g = parse(&bytes).unwrap();
        assert_eq!((g.alignment, g.data_offset % u64::from(a)), (u64::from(a), 0));
    }
    // The largest alignment: fine without tensors, and the padding is missing with one.
    let empty = cat(&[&header(3, 0, 1), &alignment_kv(1 << 31)]);
    assert_eq!(parse(&empty).unwrap().data_offset, 1 << 31);
    let one = cat(&[&header(3, 1, 1), &alignment_kv(1 << 31), &tensor_info("t", &[1], 0, 0), &[0; 64]]);
    assert!(matches!(err(&one), GgufError::Truncated { what: "padding before the tensor data", .. }));
    for a in [0u32, 3, 48, u32::MAX] {
        assert_eq!(err(&with_meta(&[alignment_kv(a)])), GgufError::BadAlignment(a));
    }
    let as_u64 = with_meta(&[kv(ALIGNMENT_KEY, T_U64, &32u64.to_le_bytes())]);
    assert_eq!(err(&as_u64), GgufError::AlignmentType { found: "uint64" });
    let as_array = with_meta(&[kv(ALIGNMENT_KEY, T_ARRAY, &array(T_U32, 1, &32u32.to_le_bytes()))]);
    assert_eq!(err(&as_array), GgufError::AlignmentType { found: "array" });
}

#[test]
fn refuses_bad_tensor_names() {
    assert_eq!(
        err(&with_tensors(&[tensor_info("", &[1], 0, 0)], 4)),
        GgufError::EmptyTensorName { index: 0 }
    );
    let dup = with_tensors(&[tensor_info("a", &[1], 0, 0), tensor_info("a", &[1], 0, 32)], 36);
    assert_eq!(err(&dup), GgufError::DuplicateTensor("a".into()));
}

#[test]
fn refuses_bad_dimension_counts() {
    for dims in [&[][..], &[1, 1, 1, 1, 1]] {
        let bytes = with_tensors(&[tensor_info("t", dims, 0, 0)], 4);
        assert_eq!(err(&bytes), GgufError::BadDims { tensor: "t".into(), n_dims: dims.len() as u32 });
    }
    let four = with_tensors(&[tensor_info("t", &[1, 2, 3, 4], 0, 0)], 96);
    assert_eq!(parse(&four).unwrap().tensors[0].data.len(), 96);
}

#[test]
fn refuses_unknown_and_removed_tensor_types() {
    for code in [42u32, 99, u32::MAX] {
        let bytes = with_tensors(&[tensor_info("blk.0.attn_q.weight", &[32], code, 0)], 128);
        let e = err(&bytes);
        assert_eq!(e, GgufError::UnknownTensorType { tensor: "blk.0.attn_q.weight".into(), code });
        if code == 99 {
            assert_eq!(
                e.to_string(),
                "tensor \"blk.0.attn_q.weight\" has type code 99, which is not a GGML type"
            );
        }
    }
    let removed = with_tensors(&[tensor_info("t", &[32], 31, 0)], 128);
    assert_eq!(
        err(&removed),
        GgufError::RemovedTensorType { tensor: "t".into(), code: 31, name: "Q4_0_4_4" }
    );
}

#[test]
fn refuses_rows_that_are_not_whole_blocks() {
    let bytes = with_tensors(&[tensor_info("t", &[33, 2], GgmlType::Q8_0.code(), 0)], 136);
    let e = err(&bytes);
    assert_eq!(e, GgufError::RowNotBlockMultiple { tensor: "t".into(), ggml_type: GgmlType::Q8_0, ne0: 33 });
    assert_eq!(
        e.to_string(),
        "tensor \"t\" has rows of 33 elements, which is not a multiple of the Q8_0 block size 32"
    );
}

#[test]
fn refuses_overflowing_shapes() {
    let shapes: [(&[u64], GgmlType); 4] = [
        (&[1 << 63], GgmlType::I8),                       // beyond i64
        (&[1 << 32, 1 << 31], GgmlType::I8),              // 2^63 elements
        (&[1 << 62], GgmlType::F32),                      // 2^64 bytes
        (&[1 << 40, 1 << 40, 1 << 40, 0], GgmlType::F32), // ok: zero elements
    ];
    for (dims, ty) in shapes {
        let bytes = with_tensors(&[tensor_info("t", dims, ty.code(), 0)], 0);
        if dims.contains(&0) {
            assert!(parse(&bytes).is_ok());
        } else {
            assert_eq!(err(&bytes), GgufError::TensorTooLarge { tensor: "t".into() }, "{dims:?}");
        }
    }
}

#[test]
fn refuses_misplaced_tensors() {
    let misaligned = with_tensors(&[tensor_info("t", &[1], 0, 4)], 8);
    assert_eq!(
        err(&misaligned),
        GgufError::MisalignedTensor { tensor: "t".into(), offset: 4, alignment: 32 }
    );
    let past_end = with_tensors(&[tensor_info("t", &[2], 0, 0)], 7);
    let data_offset = (past_end.len() - 7) as u64;
    let e = err(&past_end);
    assert_eq!(
        e,
        GgufError::TensorOutOfBounds {
            tensor: "t".into(),
            offset: 0,
            size: 8,
            data_offset,
            file_len: past_end.len() as u64
        }
    );
    let far = with_tensors(&[tensor_info("t", &[1], 0, u64::MAX - 31)], 4);
    assert!(matches!(err(&far), GgufError::TensorOutOfBounds { .. }));
    let overlap = with_tensors(
        &[tensor_info("a", &[16], 0, 0), tensor_info("b", &[8], 0, 64), tensor_info("c", &[8], 0, 32)],
        96,
    );
    assert_eq!(err(&overlap), GgufError::OverlappingTensors { first: "a".into(), second: "c".into() });
    let same = with_tensors(&[tensor_info("a", &[1], 0, 0), tensor_info("b", &[1], 0, 0)], 4);
    assert!(matches!(err(&same), GgufError::OverlappingTensors { .. }));
    // Padding before the data section must be there when tensors are.
    let mut no_padding = with_tensors(&[tensor_info("t", &[0], 0, 0)], 0);
    no_padding.truncate(24 + 8 + 1 + 4 + 8 + 4 + 8);
    assert_eq!(err(&no_padding), GgufError::Truncated { what: "padding before the tensor data", offset: 57 });
}

#[test]
fn ggml_type_table() {
    let mut codes = std::collections::HashSet::new();
    let mut names = std::collections::HashSet::new();
    for &t in GgmlType::ALL {
        assert_eq!(GgmlType::from_code(t.code()), Some(t));
        assert!(codes.insert(t.code()) && names.insert(t.name()));
        assert!(t.block_size() >= 1 && t.type_size() >= 1);
        assert_eq!(GgmlType::removed_name(t.code()), None);
    }
    assert_eq!(GgmlType::ALL.len(), 34);
    // A few sizes spelled out (gguf-py GGML_QUANT_SIZES).
    let known = [
        (GgmlType::Q4_K, 256, 144),
        (GgmlType::Q6_K, 256, 210),
        (GgmlType::Q8_K, 256, 292),
        (GgmlType::IQ4_XS, 256, 136),
        (GgmlType::IQ1_M, 256, 56),
        (GgmlType::TQ1_0, 256, 54),
        (GgmlType::BF16, 1, 2),
    ];
    for (t, block, size) in known {
        assert_eq!((t.block_size(), t.type_size()), (block, size), "{t}");
    }
    assert_eq!(GgmlType::Q8_0.tensor_size(&[64, 3]), Some(2 * 34 * 3));
    assert_eq!(GgmlType::Q8_0.tensor_size(&[65, 3]), None);
    assert_eq!(GgmlType::F32.tensor_size(&[]), None);
}

#[test]
fn messages_are_single_lowercase_sentences() {
    let all = [
        GgufError::BadMagic,
        GgufError::UnsupportedVersion(1),
        GgufError::Truncated { what: "tensor name", offset: 7 },
        GgufError::InvalidUtf8 { what: "metadata key", offset: 7 },
        GgufError::EmptyKey { offset: 7 },
        GgufError::DuplicateKey("k".into()),
        GgufError::UnknownValueType { key: "k".into(), code: 13 },
        GgufError::InvalidBool { key: "k".into(), value: 2 },
        GgufError::ArrayTooDeep { key: "k".into() },
        GgufError::AlignmentType { found: "string" },
        GgufError::BadAlignment(3),
        GgufError::EmptyTensorName { index: 1 },
        GgufError::DuplicateTensor("t".into()),
        GgufError::BadDims { tensor: "t".into(), n_dims: 5 },
        GgufError::UnknownTensorType { tensor: "t".into(), code: 99 },
        GgufError::RemovedTensorType { tensor: "t".into(), code: 31, name: "Q4_0_4_4" },
        GgufError::RowNotBlockMultiple { tensor: "t".into(), ggml_type: GgmlType::Q4_K, ne0: 3 },
        GgufError::TensorTooLarge { tensor: "t".into() },
        GgufError::MisalignedTensor { tensor: "t".into(), offset: 4, alignment: 32 },
        GgufError::TensorOutOfBounds {
            tensor: "t".into(),
            offset: 0,
            size: 8,
            data_offset: 64,
            file_len: 70,
        },
        GgufError::OverlappingTensors { first: "a".into(), second: "b".into() },
    ];
    for e in all {
        let m = e.to_string();
        let first = m.chars().next().unwrap();
        assert!(!first.is_uppercase() && !m.ends_with('.') && !m.contains('\n'), "{m}");
    }
}

/// A million empty arrays in one value are parsed without a copy and read back one by one, each a view of
/// its own 12 bytes.
#[test]
fn a_million_nested_arrays_are_views_read_in_order() {
    let mut items = Vec::new();
    for i in 0..1_000_000u32 {
        // Every thousandth item holds one u8, so the order can be seen.
        if i % 1000 == 0 {
            items.extend(array(T_U8, 1, &[(i / 1000 % 256) as u8]));
        } else {
            items.extend(array(T_U8, 0, &[]));
        }
    }
    let bytes = with_meta(&[kv("many", T_ARRAY, &array(T_ARRAY, 1_000_000, &items))]);
    let file = parse(&bytes).unwrap();
    let Some(GgufValue::Array(many)) = file.get("many") else { panic!() };
    assert_eq!((many.len(), many.element_type_name()), (1_000_000, "array"));
    let mut seen = 0usize;
    for (i, item) in many.iter().enumerate() {
        let GgufValue::Array(inner) = item else { panic!("{i}") };
        let want: Vec<GgufValue<'_>> =
            if i % 1000 == 0 { vec![GgufValue::U8((i / 1000 % 256) as u8)] } else { vec![] };
        assert_eq!(inner.iter().collect::<Vec<_>>(), want, "{i}");
        seen += 1;
    }
    assert_eq!(seen, 1_000_000);
}
