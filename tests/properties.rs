//! Property tests: random valid containers round-trip through the builder and the reader; random damage
//! never panics; placement in memory never changes the result; the two encoders agree byte for byte.

mod support;

use proptest::prelude::*;
use support::entry::EntrySpec;
use support::raw::{Raw, RawEntry, RawMeta};
use tpack::format::Packing;
use tpack::write::Builder;
use tpack::zerocopy::little_endian::{F32, U16, U32, U64};
use tpack::{ArrayArray, Container, Dtype, MetaType, MetaValue, StringArray};

/// Proptest cases: many natively, a handful under Miri, which interprets every instruction.
fn cases() -> u32 {
    if cfg!(miri) {
        2
    } else {
        256
    }
}

/// Memory offsets to place a container at: all of 0..64 natively; under Miri, aligned, odd, aligned to 4 but
/// not 8, and the far end (the F32 views checked below are aligned at 0 and 4 only).
fn shifts() -> Vec<usize> {
    if cfg!(miri) {
        vec![0, 1, 4, 63]
    } else {
        (0..64).collect()
    }
}

#[derive(Clone, Debug)]
enum MetaModel {
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    String(String),
    Bytes(Vec<u8>),
    U64s(Vec<u64>),
    Strings(Vec<String>),
    // Format 1.1: a pool scalar of each width, fixed-width arrays, bool[] and array[].
    U8(u8),
    I16(i16),
    U32(u32),
    /// An f32 by its bits, NaN payloads included.
    F32(u32),
    U16s(Vec<u16>),
    F32s(Vec<u32>),
    Bools(Vec<bool>),
    /// An `array[]` of `u32[]` items.
    Nested(Vec<Vec<u32>>),
}

impl MetaModel {
    /// The value's bytes in the pool (spec §7.1), for a pool type of format 1.1.
    fn pool_bytes(&self) -> Vec<u8> {
        let le32 = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        match self {
            MetaModel::U8(v) => vec![*v],
            MetaModel::I16(v) => v.to_le_bytes().to_vec(),
            MetaModel::U32(v) | MetaModel::F32(v) => v.to_le_bytes().to_vec(),
            MetaModel::U16s(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            MetaModel::F32s(v) => le32(v),
            MetaModel::Bools(v) => v.iter().map(|&b| u8::from(b)).collect(),
            MetaModel::Nested(items) => items
                .iter()
                .flat_map(|item| {
                    let body = le32(item);
                    let mut out = vec![MetaType::U32_ARRAY.code(), 0, 0, 0];
                    out.extend((body.len() as u32).to_le_bytes());
                    out.extend(body);
                    out
                })
                .collect(),
            other => unreachable!("{other:?} is not a 1.1 pool type"),
        }
    }

    fn meta_type(&self) -> MetaType {
        match self {
            MetaModel::U8(_) => MetaType::U8,
            MetaModel::I16(_) => MetaType::I16,
            MetaModel::U32(_) => MetaType::U32,
            MetaModel::F32(_) => MetaType::F32,
            MetaModel::U16s(_) => MetaType::U16_ARRAY,
            MetaModel::F32s(_) => MetaType::F32_ARRAY,
            MetaModel::Bools(_) => MetaType::BOOL_ARRAY,
            MetaModel::Nested(_) => MetaType::ARRAY_ARRAY,
            other => unreachable!("{other:?} is not a 1.1 pool type"),
        }
    }
}

fn length_of(dtype: Dtype, shape: &[u64]) -> u64 {
    let count: u64 = shape.iter().product();
    match dtype.packing().unwrap() {
        Packing::Element(size) => count * size,
        Packing::Block { block_elems, block_bytes } => count / block_elems * block_bytes,
        Packing::Bytes => count,
    }
}

fn entry_strategy() -> impl Strategy<Value = EntrySpec> {
    let dtypes: Vec<Dtype> =
        Dtype::ALL.iter().copied().filter(|d| *d != Dtype::CONTAINER && *d != Dtype::SIGNATURE).collect();
    (
        "[a-zA-Z0-9._/é-]{1,12}",
        proptest::sample::select(dtypes),
        proptest::collection::vec(0u64..5, 0..=8),
        0u32..=8,
        proptest::option::of(0u64..1 << 40),
        any::<u64>(),
    )
        .prop_map(|(name, dtype, mut shape, align_log2, target, seed)| {
            match dtype.packing().unwrap() {
                Packing::Block { block_elems, .. } => {
                    if shape.is_empty() {
                        shape.push(1);
                    }
                    *shape.last_mut().unwrap() *= block_elems;
                }
                Packing::Bytes => shape.truncate(1),
                Packing::Element(_) => {}
            }
            if dtype.packing() == Some(Packing::Bytes) && shape.is_empty() {
                shape.push(3);
            }
            let len = length_of(dtype, &shape) as usize;
            let data = (0..len).map(|i| (seed >> (i % 8 * 8)) as u8 ^ i as u8).collect();
            EntrySpec { name, dtype, shape, alignment: 1 << align_log2, target, data }
        })
}

fn meta_strategy() -> impl Strategy<Value = MetaModel> {
    prop_oneof![
        any::<u64>().prop_map(MetaModel::U64),
        any::<i64>().prop_map(MetaModel::I64),
        any::<f64>().prop_map(MetaModel::F64),
        any::<bool>().prop_map(MetaModel::Bool),
        ".{0,10}".prop_map(MetaModel::String),
        proptest::collection::vec(any::<u8>(), 0..10).prop_map(MetaModel::Bytes),
        proptest::collection::vec(any::<u64>(), 0..5).prop_map(MetaModel::U64s),
        proptest::collection::vec(".{0,4}", 0..5).prop_map(MetaModel::Strings),
        any::<u8>().prop_map(MetaModel::U8),
        any::<i16>().prop_map(MetaModel::I16),
        any::<u32>().prop_map(MetaModel::U32),
        any::<u32>().prop_map(MetaModel::F32),
        proptest::collection::vec(any::<u16>(), 0..5).prop_map(MetaModel::U16s),
        proptest::collection::vec(any::<u32>(), 0..5).prop_map(MetaModel::F32s),
        proptest::collection::vec(any::<bool>(), 0..5).prop_map(MetaModel::Bools),
        proptest::collection::vec(proptest::collection::vec(any::<u32>(), 0..3), 0..3)
            .prop_map(MetaModel::Nested),
    ]
}

fn container_strategy() -> impl Strategy<Value = (Vec<EntrySpec>, Vec<(String, MetaModel)>)> {
    (
        proptest::collection::vec(entry_strategy(), 0..8),
        proptest::collection::btree_map("[a-z.]{1,8}", meta_strategy(), 0..6),
    )
        .prop_map(|(mut entries, meta)| {
            // Unique names: a random stem plus the position.
            for (i, e) in entries.iter_mut().enumerate() {
                e.name = format!("{}#{i}", e.name);
            }
            (entries, meta.into_iter().collect())
        })
}

fn build(entries: &[EntrySpec], meta: &[(String, MetaModel)]) -> Vec<u8> {
    let mut b = Builder::new();
    for e in entries {
        b.push(e.decl().with_data(&e.data)).unwrap();
    }
    for (key, value) in meta {
        let strings: Vec<&str>;
        let words: Vec<U64>;
        let halves: Vec<U16>;
        let floats: Vec<F32>;
        let arrays: Vec<Vec<U32>>;
        let items: Vec<MetaValue<'_>>;
        let value = match value {
            MetaModel::U64(v) => MetaValue::U64(*v),
            MetaModel::I64(v) => MetaValue::I64(*v),
            MetaModel::F64(v) => MetaValue::F64(*v),
            MetaModel::Bool(v) => MetaValue::Bool(*v),
            MetaModel::String(s) => MetaValue::String(s),
            MetaModel::Bytes(v) => MetaValue::Bytes(v),
            MetaModel::U64s(v) => {
                words = v.iter().map(|&x| U64::new(x)).collect();
                MetaValue::U64Array(&words)
            }
            MetaModel::Strings(v) => {
                strings = v.iter().map(String::as_str).collect();
                MetaValue::StringArray(StringArray::new(&strings))
            }
            MetaModel::U8(v) => MetaValue::U8(*v),
            MetaModel::I16(v) => MetaValue::I16(*v),
            MetaModel::U32(v) => MetaValue::U32(*v),
            MetaModel::F32(v) => MetaValue::F32(f32::from_bits(*v)),
            MetaModel::U16s(v) => {
                halves = v.iter().map(|&x| U16::new(x)).collect();
                MetaValue::U16Array(&halves)
            }
            MetaModel::F32s(v) => {
                floats = v.iter().map(|&x| F32::from_bytes(x.to_le_bytes())).collect();
                MetaValue::F32Array(&floats)
            }
            MetaModel::Bools(v) => MetaValue::BoolArray(v),
            MetaModel::Nested(v) => {
                arrays = v.iter().map(|a| a.iter().map(|&x| U32::new(x)).collect()).collect();
                items = arrays.iter().map(|a| MetaValue::U32Array(a)).collect();
                MetaValue::ArrayArray(ArrayArray::new(&items))
            }
        };
        b.metadata(key, value).unwrap();
    }
    b.finish().unwrap()
}

fn check_matches(c: &Container<'_>, entries: &[EntrySpec], meta: &[(String, MetaModel)]) {
    assert_eq!(c.len(), entries.len());
    for (e, m) in c.entries().zip(entries) {
        assert_eq!(e.name(), m.name);
        assert_eq!(e.dtype(), m.dtype);
        assert_eq!(e.shape().dims(), m.shape);
        assert_eq!(e.alignment(), m.alignment);
        assert_eq!(e.target(), m.target);
        assert_eq!(e.payload(), m.data);
        assert_eq!(e.offset() % u64::from(m.alignment), 0);
        assert_eq!(c.get(&m.name).unwrap().position(), e.position());
        e.verify().unwrap();
    }
    assert_eq!(c.metadata().len(), meta.len());
    for (key, m) in meta {
        let got = c.metadata().get(key).unwrap();
        match (m, got) {
            (MetaModel::U64(a), MetaValue::U64(b)) => assert_eq!(*a, b),
            (MetaModel::I64(a), MetaValue::I64(b)) => assert_eq!(*a, b),
            (MetaModel::F64(a), MetaValue::F64(b)) => assert_eq!(a.to_bits(), b.to_bits()),
            (MetaModel::Bool(a), MetaValue::Bool(b)) => assert_eq!(*a, b),
            (MetaModel::String(a), MetaValue::String(b)) => assert_eq!(a, b),
            (MetaModel::Bytes(a), MetaValue::Bytes(b)) => assert_eq!(a, b),
            (MetaModel::U64s(a), MetaValue::U64Array(b)) => {
                assert_eq!(*a, b.iter().map(|v| v.get()).collect::<Vec<_>>())
            }
            (MetaModel::Strings(a), MetaValue::StringArray(b)) => {
                assert_eq!(*a, b.collect::<Vec<_>>())
            }
            (MetaModel::U8(a), MetaValue::U8(b)) => assert_eq!(*a, b),
            (MetaModel::I16(a), MetaValue::I16(b)) => assert_eq!(*a, b),
            (MetaModel::U32(a), MetaValue::U32(b)) => assert_eq!(*a, b),
            (MetaModel::F32(a), MetaValue::F32(b)) => assert_eq!(*a, b.to_bits()),
            (MetaModel::U16s(a), MetaValue::U16Array(b)) => {
                assert_eq!(*a, b.iter().map(|v| v.get()).collect::<Vec<_>>())
            }
            (MetaModel::F32s(a), MetaValue::F32Array(b)) => {
                assert_eq!(*a, b.iter().map(|v| v.get().to_bits()).collect::<Vec<_>>())
            }
            (MetaModel::Bools(a), MetaValue::BoolArray(b)) => assert_eq!(a.as_slice(), b),
            (MetaModel::Nested(a), MetaValue::ArrayArray(b)) => {
                let got: Vec<Vec<u32>> = b
                    .map(|item| match item {
                        MetaValue::U32Array(x) => x.iter().map(|v| v.get()).collect(),
                        other => panic!("{key}: an array[] item came back as {other:?}"),
                    })
                    .collect();
                assert_eq!(*a, got);
            }
            (m, got) => panic!("{key}: {m:?} came back as {got:?}"),
        }
    }
}

/// Calls every accessor: none may panic, whatever the container.
fn touch_everything(c: &Container<'_>) {
    let _ = c.verify();
    for e in c.entries() {
        let _ = (e.name(), e.dtype(), e.shape().elements(), e.alignment(), e.target(), e.range());
        let _ = (e.payload().len(), e.checksum(), e.verify());
        let _ = e.le::<tpack::zerocopy::little_endian::F32>();
        let _ = e.native::<f32>();
        if let Some(n) = e.nested() {
            touch_everything(&n);
        }
        assert!(c.get(e.name()).is_some());
    }
    for (k, v) in c.metadata() {
        if let MetaValue::StringArray(items) = v {
            items.for_each(drop);
        }
        assert!(c.metadata().get(k).is_some());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn built_containers_parse_back_to_their_model((entries, meta) in container_strategy()) {
        let bytes = build(&entries, &meta);
        let c = Container::parse(&bytes).unwrap();
        check_matches(&c, &entries, &meta);
    }

    #[test]
    fn the_lenient_encoder_and_the_builder_agree((entries, meta) in container_strategy()) {
        let raw = Raw {
            entries: entries.iter().map(|e| {
                let mut r = RawEntry::new(&e.name, e.dtype, &e.shape, e.data.clone()).align(e.alignment);
                if let Some(t) = e.target { r = r.target(t); }
                r
            }).collect(),
            meta: meta.iter().map(|(k, m)| match m {
                MetaModel::U64(v) => RawMeta::inline(k, MetaType::U64, *v),
                MetaModel::I64(v) => RawMeta::inline(k, MetaType::I64, *v as u64),
                MetaModel::F64(v) => RawMeta::inline(k, MetaType::F64, v.to_bits()),
                MetaModel::Bool(v) => RawMeta::inline(k, MetaType::BOOL, u64::from(*v)),
                MetaModel::String(s) => RawMeta::pooled(k, MetaType::STRING, s.as_bytes().to_vec()),
                MetaModel::Bytes(b) => RawMeta::pooled(k, MetaType::BYTES, b.clone()),
                MetaModel::U64s(a) => RawMeta::pooled(k, MetaType::U64_ARRAY, support::raw::words(a, |v| v)),
                MetaModel::Strings(a) => {
                    let items: Vec<&[u8]> = a.iter().map(|s| s.as_bytes()).collect();
                    RawMeta::pooled(k, MetaType::STRING_ARRAY, support::raw::string_array(&items))
                }
                m => RawMeta::pooled(k, m.meta_type(), m.pool_bytes()),
            }).collect(),
            ..Raw::default()
        }
        .canonical();
        prop_assert_eq!(raw.encode(), build(&entries, &meta));
    }

    #[test]
    fn damage_never_panics(
        (entries, meta) in container_strategy(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = build(&entries, &meta);
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        if let Ok(c) = Container::parse(&bytes) {
            touch_everything(&c);
        }
    }

    #[test]
    fn bit_flips_in_the_checksummed_region_are_rejected(
        (entries, meta) in container_strategy(),
        at in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let mut bytes = build(&entries, &meta);
        let c = Container::parse(&bytes).unwrap();
        let region = c.header().sections[3].offset.get() + c.header().sections[3].length.get();
        let i = at.index(region as usize);
        bytes[i] ^= 1 << bit;
        prop_assert!(Container::parse(&bytes).and_then(|c| c.verify()).is_err());
    }

    #[test]
    fn placement_in_memory_changes_nothing((entries, meta) in container_strategy()) {
        let bytes = build(&entries, &meta);
        let reference = support::json::decode(&Container::parse(&bytes).unwrap());
        let mut buffer = vec![0u8; bytes.len() + 64];
        for shift in shifts() {
            buffer[shift..shift + bytes.len()].copy_from_slice(&bytes);
            let c = Container::parse(&buffer[shift..shift + bytes.len()]).unwrap();
            prop_assert_eq!(&support::json::decode(&c), &reference);
            for e in c.entries() {
                // Little-endian views work at any address; native views only where aligned.
                if e.dtype() == Dtype::F32 {
                    prop_assert!(e.le::<tpack::zerocopy::little_endian::F32>().is_some());
                    let aligned = e.payload().as_ptr().align_offset(4) == 0;
                    prop_assert_eq!(e.native::<f32>().is_some(), aligned && cfg!(target_endian = "little"));
                }
            }
        }
    }
}
