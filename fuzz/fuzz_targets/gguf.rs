//! Arbitrary bytes through the GGUF parser: never a panic, and a file that parses keeps its promises: every
//! tensor's data lies inside the input at its aligned offset past the data section's start, with exactly the
//! size its shape and type give; no two tensors overlap; keys and names are unique and nonempty; arrays nest
//! no deeper than the limit.
#![no_main]

use std::collections::HashSet;
use std::hint::black_box;

use libfuzzer_sys::fuzz_target;
use tpack_gguf::{self as gguf, GgmlType, GgufArray, GgufTensor, GgufValue, MAX_ARRAY_DEPTH, MAX_DIMS};

/// The byte size of `t`, computed apart from the parser, in u128: 0 if any dimension is, else the product,
/// which must not overflow (the parser refuses more than `i64::MAX` elements).
fn expected_size(t: &GgufTensor<'_>) -> u128 {
    let (block, size) = (u128::from(t.ggml_type.block_size()), u128::from(t.ggml_type.type_size()));
    let ne0 = u128::from(t.dims[0]);
    assert_eq!(ne0 % block, 0, "{}: a row is not a whole number of blocks", t.name);
    if t.dims.contains(&0) {
        return 0;
    }
    let elements = t.dims.iter().fold(1u128, |n, &d| n.checked_mul(u128::from(d)).expect("element count"));
    assert!(elements <= i64::MAX as u128, "{}: more than i64::MAX elements", t.name);
    t.dims[1..].iter().fold(ne0 / block * size, |n, &d| n * u128::from(d))
}

/// Reads every element of `a`: exactly `len()` of them, all of its element type; returns its nesting depth
/// (1 for an array of scalars).
fn touch_array(a: &GgufArray<'_>) -> usize {
    let mut count = 0usize;
    let mut depth = 1;
    for item in a.iter() {
        count += 1;
        match &item {
            GgufValue::Array(inner) => {
                assert_eq!(a.element_type_name(), "array");
                depth = depth.max(1 + touch_array(inner));
            }
            other => {
                assert_eq!(other.type_name(), a.element_type_name());
                black_box(format!("{other:?}"));
            }
        }
    }
    assert_eq!(count, a.len(), "the elements read are the count declared");
    black_box((a.is_empty(), a.iter().len()));
    depth
}

fn touch_value(v: &GgufValue<'_>) {
    black_box(v.type_name());
    match v {
        GgufValue::String(s) => drop(black_box(s.chars().count())),
        GgufValue::Array(a) => assert!(touch_array(a) <= MAX_ARRAY_DEPTH, "arrays nest too deeply"),
        other => drop(black_box(format!("{other:?}"))),
    }
}

fuzz_target!(|data: &[u8]| {
    let file = match gguf::parse(data) {
        Ok(file) => file,
        Err(e) => {
            // Every error has a message.
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    assert!(matches!(file.version, 2 | 3));
    assert!(file.alignment.is_power_of_two());
    assert_eq!(file.data_offset % file.alignment, 0);

    let mut keys = HashSet::new();
    for (key, value) in &file.metadata {
        assert!(!key.is_empty() && keys.insert(*key), "key {key:?} empty or repeated");
        assert!(file.get(key).is_some());
        touch_value(value);
    }

    let input = data.as_ptr_range();
    let mut names = HashSet::new();
    let mut spans = Vec::new();
    for t in &file.tensors {
        assert!(!t.name.is_empty() && names.insert(t.name), "tensor {:?} empty or repeated", t.name);
        assert!((1..=MAX_DIMS as usize).contains(&t.dims.len()));
        assert_eq!(GgmlType::from_code(t.ggml_type.code()), Some(t.ggml_type));
        let at = t.data.as_ptr_range();
        assert!(input.start <= at.start && at.end <= input.end, "{}: data outside the input", t.name);
        // Empty slices may point anywhere; non-empty ones are where the tensor says.
        if !t.data.is_empty() {
            assert_eq!(
                at.start as usize - input.start as usize,
                t.offset as usize,
                "{}: data not at offset",
                t.name
            );
            spans.push((t.offset, t.offset + t.data.len() as u64));
        }
        assert!(t.offset >= file.data_offset && (t.offset - file.data_offset) % file.alignment == 0);
        assert_eq!(t.data.len() as u128, expected_size(t), "{}: wrong data size", t.name);
        black_box((t.n_elements(), t.data.iter().fold(0u8, |a, &b| a ^ b)));
    }
    spans.sort_unstable();
    assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "tensors overlap");
});
