//! `OwnedMetaValue`: every value a container holds survives the trip into an owned value and back, bit for
//! bit, and what a writer would refuse is refused when the value is made, with the rule it would break.

use std::path::Path;

use tpack::{Container, MetaType, MetaValue, OwnedMetaValue, Rule, StringArray};

use tpack::write::Builder;

fn valid_vectors() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors/valid");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    // Under Miri (slow), every fourth vector.
    let stride = if cfg!(miri) { 4 } else { 1 };
    files
        .into_iter()
        .step_by(stride)
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(p).unwrap()))
        .collect()
}

/// Every metadata value of every valid vector: owned, viewed again, equal to the original; written back
/// from the owned values, the same metadata section.
#[test]
fn every_value_of_every_vector_round_trips() {
    let mut values = 0;
    for (name, bytes) in valid_vectors() {
        let container = Container::parse(&bytes).unwrap();
        let mut builder = Builder::new();
        let mut owned = Vec::new();
        for (key, value) in container.metadata().iter() {
            if let MetaValue::Unknown { .. } = value {
                // A newer minor's type: a writer refuses it, and so does the owned value.
                assert_eq!(OwnedMetaValue::try_from(value).unwrap_err().rule(), Rule::MetaUnknownType);
                continue;
            }
            let copy = OwnedMetaValue::try_from(value).unwrap_or_else(|e| panic!("{name}: {key}: {e}"));
            assert_eq!(copy.value_type(), value.value_type(), "{name}: {key}");
            // By bits, so NaNs compare too: the view re-owned is the same owned value.
            assert_eq!(OwnedMetaValue::try_from(copy.as_value()).unwrap(), copy, "{name}: {key}");
            if !matches!(value, MetaValue::F64(v) if v.is_nan()) && !has_nan(value) {
                assert_eq!(copy.as_value(), value, "{name}: {key}");
            }
            owned.push((key.to_owned(), copy));
            values += 1;
        }
        for (key, value) in &owned {
            // The signed attributes are the signing writer's own: a plain writer refuses them (R54).
            if key.starts_with("tpack.sig.") {
                let refused = builder.metadata(key, value.as_value()).unwrap_err();
                assert!(
                    matches!(refused, tpack::write::WriteError::Format(e) if e.rule() == Rule::SignedFlag)
                );
                builder = Builder::new();
                for (key, value) in owned.iter().filter(|(k, _)| !k.starts_with("tpack.sig.")) {
                    builder.metadata(key, value.as_value()).unwrap();
                }
                break;
            }
            builder.metadata(key, value.as_value()).unwrap();
        }
        let rewritten = builder.finish().unwrap();
        let again = Container::parse(&rewritten).unwrap();
        let original: Vec<_> = container
            .metadata()
            .iter()
            .filter(|(k, _)| !k.starts_with("tpack.sig."))
            .filter_map(|(k, v)| Some((k, OwnedMetaValue::try_from(v).ok()?)))
            .collect();
        let copied: Vec<_> =
            again.metadata().iter().map(|(k, v)| (k, OwnedMetaValue::try_from(v).unwrap())).collect();
        assert_eq!(original, copied, "{name}");
    }
    assert!(values > 20, "only {values} values: the vectors were not found");
}

fn has_nan(value: MetaValue<'_>) -> bool {
    match value {
        MetaValue::F32(v) => v.is_nan(),
        MetaValue::F64Array(a) => a.iter().any(|v| v.get().is_nan()),
        MetaValue::F32Array(a) => a.iter().any(|v| v.get().is_nan()),
        MetaValue::ArrayArray(items) => items.into_iter().any(has_nan),
        _ => false,
    }
}

#[test]
fn native_values_become_their_types() {
    let cases: Vec<(OwnedMetaValue, MetaValue<'_>)> = vec![
        (7u64.into(), MetaValue::U64(7)),
        ((-7i64).into(), MetaValue::I64(-7)),
        (1.5f64.into(), MetaValue::F64(1.5)),
        (true.into(), MetaValue::Bool(true)),
        (7u8.into(), MetaValue::U8(7)),
        ((-7i8).into(), MetaValue::I8(-7)),
        (700u16.into(), MetaValue::U16(700)),
        ((-700i16).into(), MetaValue::I16(-700)),
        (70_000u32.into(), MetaValue::U32(70_000)),
        ((-70_000i32).into(), MetaValue::I32(-70_000)),
        (0.25f32.into(), MetaValue::F32(0.25)),
        ("hé".into(), MetaValue::String("hé")),
        (OwnedMetaValue::bytes(vec![1, 2]), MetaValue::Bytes(&[1, 2])),
        (OwnedMetaValue::u8_array(vec![1, 2]), MetaValue::U8Array(&[1, 2])),
        (vec![true, false].into(), MetaValue::BoolArray(&[true, false])),
        (
            OwnedMetaValue::string_array(["a", ""]).unwrap(),
            MetaValue::StringArray(StringArray::new(&["a", ""])),
        ),
    ];
    for (owned, expected) in cases {
        assert_eq!(owned.as_value(), expected);
        assert_eq!(owned.value_type(), expected.value_type());
        assert_eq!(OwnedMetaValue::try_from(expected).unwrap(), owned);
    }
    let f32s = OwnedMetaValue::from(&[1.0f32, -2.0][..]);
    let MetaValue::F32Array(items) = f32s.as_value() else { panic!("{f32s:?}") };
    assert_eq!(items.iter().map(|v| v.get()).collect::<Vec<_>>(), [1.0, -2.0]);
    let i8s = OwnedMetaValue::from(vec![-1i8, 2]);
    assert_eq!(i8s.as_value(), MetaValue::I8Array(&[-1, 2]));
}

#[test]
fn nan_bits_are_kept() {
    let signalling = f32::from_bits(0x7f80_0001);
    let value = OwnedMetaValue::from(signalling);
    let MetaValue::F32(back) = value.as_value() else { panic!() };
    assert_eq!(back.to_bits(), 0x7f80_0001);
    assert_eq!(value, OwnedMetaValue::from(signalling));
    assert_ne!(OwnedMetaValue::from(0.0f64), OwnedMetaValue::from(-0.0f64));
}

/// Nesting to the limit and one past it: 8 levels of `array[]` are a value, 9 are refused with R47.
#[test]
fn array_nesting_is_limited_to_eight_levels() {
    let mut value = OwnedMetaValue::from(&[1u32][..]);
    for level in 1..=8 {
        value = OwnedMetaValue::array_array([value]).unwrap_or_else(|e| panic!("level {level}: {e}"));
    }
    let err = OwnedMetaValue::array_array([value.clone()]).unwrap_err();
    assert_eq!(err.rule(), Rule::MetaValueShape);
    // The eight-level value is written and read back as it is.
    let mut builder = Builder::new();
    builder.metadata("deep", value.as_value()).unwrap();
    let bytes = builder.finish().unwrap();
    let container = Container::parse(&bytes).unwrap();
    assert_eq!(OwnedMetaValue::try_from(container.metadata().get("deep").unwrap()).unwrap(), value);
}

#[test]
fn what_a_writer_refuses_is_refused_with_its_rule() {
    assert_eq!(
        OwnedMetaValue::array_array([OwnedMetaValue::from(1u64)]).unwrap_err().rule(),
        Rule::MetaValueShape
    );
    let scalar_item = [MetaValue::U32(1)];
    let caller_made = MetaValue::ArrayArray(tpack::ArrayArray::new(&scalar_item));
    assert_eq!(OwnedMetaValue::try_from(caller_made).unwrap_err().rule(), Rule::MetaValueShape);
    let unknown = MetaValue::Unknown { code: 99, bytes: &[] };
    assert_eq!(OwnedMetaValue::try_from(unknown).unwrap_err().rule(), Rule::MetaUnknownType);
    assert_eq!(
        OwnedMetaValue::from_encoded(MetaType::U64, vec![0; 8]).unwrap_err().rule(),
        Rule::MetaUnknownType
    );
    assert_eq!(
        OwnedMetaValue::from_encoded(MetaType::from_code(99), vec![]).unwrap_err().rule(),
        Rule::MetaUnknownType
    );
    assert_eq!(
        OwnedMetaValue::from_encoded(MetaType::STRING_ARRAY, vec![2, 0, 0]).unwrap_err().rule(),
        Rule::MetaValueShape
    );
    assert_eq!(
        OwnedMetaValue::from_encoded(MetaType::BOOL_ARRAY, vec![0, 2]).unwrap_err().rule(),
        Rule::MetaBool
    );
    assert_eq!(
        OwnedMetaValue::from_encoded(MetaType::STRING, vec![0xff]).unwrap_err().rule(),
        Rule::MetaUtf8
    );
    let ok = OwnedMetaValue::from_encoded(MetaType::STRING_ARRAY, vec![1, 0, 0, 0, b'x']).unwrap();
    assert_eq!(ok, OwnedMetaValue::string_array(["x"]).unwrap());
    let bools = OwnedMetaValue::from_encoded(MetaType::BOOL_ARRAY, vec![1, 0]).unwrap();
    assert_eq!(bools, OwnedMetaValue::from(vec![true, false]));
}
