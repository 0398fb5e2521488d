//! Arbitrary entries and metadata through the one-pass writer, in chunks of any size, and back through the
//! reader: what comes out is what went in. (That both writer modes give the same bytes is checked by
//! tests/writer.rs at every chunking, and on every golden vector by tests/vectors.rs.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpack::write::{EntryDecl, StreamWriter, VecBookkeeping, WriteError};
use tpack::zerocopy::little_endian::{F64, I64, U64};
use tpack::{Container, MetaValue, StringArray};
use tpack_fuzz::{EntryModel, MetaModel};

#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    entries: Vec<EntryModel>,
    meta: Vec<(String, MetaModel)>,
    chunk: u8,
}

/// What a `MetaModel` lends the writer: its arrays as the little-endian elements `MetaValue` holds.
#[derive(Default)]
struct Lent<'a> {
    strs: Vec<&'a str>,
    u64s: Vec<U64>,
    i64s: Vec<I64>,
    f64s: Vec<F64>,
}

fn lend(m: &MetaModel) -> Lent<'_> {
    match m {
        MetaModel::Strings(a) => Lent { strs: a.iter().map(String::as_str).collect(), ..Lent::default() },
        MetaModel::U64s(a) => Lent { u64s: a.iter().map(|&v| U64::new(v)).collect(), ..Lent::default() },
        MetaModel::I64s(a) => Lent { i64s: a.iter().map(|&v| I64::new(v)).collect(), ..Lent::default() },
        MetaModel::F64s(a) => Lent { f64s: a.iter().map(|&v| F64::new(v)).collect(), ..Lent::default() },
        _ => Lent::default(),
    }
}

fn value<'a>(m: &'a MetaModel, lent: &'a Lent<'a>) -> MetaValue<'a> {
    match m {
        MetaModel::U64(v) => MetaValue::U64(*v),
        MetaModel::I64(v) => MetaValue::I64(*v),
        MetaModel::F64(v) => MetaValue::F64(*v),
        MetaModel::Bool(v) => MetaValue::Bool(*v),
        MetaModel::String(s) => MetaValue::String(s),
        MetaModel::Bytes(b) => MetaValue::Bytes(b),
        MetaModel::U64s(_) => MetaValue::U64Array(&lent.u64s),
        MetaModel::I64s(_) => MetaValue::I64Array(&lent.i64s),
        MetaModel::F64s(_) => MetaValue::F64Array(&lent.f64s),
        MetaModel::Strings(_) => MetaValue::StringArray(StringArray::new(&lent.strs)),
    }
}

fn same(m: &MetaModel, v: MetaValue<'_>) -> bool {
    match (m, v) {
        (MetaModel::U64(a), MetaValue::U64(b)) => *a == b,
        (MetaModel::I64(a), MetaValue::I64(b)) => *a == b,
        (MetaModel::F64(a), MetaValue::F64(b)) => a.to_bits() == b.to_bits(),
        (MetaModel::Bool(a), MetaValue::Bool(b)) => *a == b,
        (MetaModel::String(a), MetaValue::String(b)) => a == b,
        (MetaModel::Bytes(a), MetaValue::Bytes(b)) => a == b,
        (MetaModel::U64s(a), MetaValue::U64Array(b)) => a.iter().copied().eq(b.iter().map(|v| v.get())),
        (MetaModel::I64s(a), MetaValue::I64Array(b)) => a.iter().copied().eq(b.iter().map(|v| v.get())),
        (MetaModel::F64s(a), MetaValue::F64Array(b)) => {
            a.iter().map(|v| v.to_bits()).eq(b.iter().map(|v| v.get().to_bits()))
        }
        (MetaModel::Strings(a), MetaValue::StringArray(b)) => a.iter().map(String::as_str).eq(b),
        _ => false,
    }
}

fuzz_target!(|input: Input| {
    let lent: Vec<Lent<'_>> = input.meta.iter().map(|(_, m)| lend(m)).collect();
    let mut w = StreamWriter::new(Vec::new(), VecBookkeeping);
    let mut payloads = Vec::new();
    let mut shapes = Vec::new();
    for e in &input.entries {
        let (shape, len) = e.shape_and_len();
        shapes.push(shape);
        payloads.push(e.payload(len));
    }
    for (e, shape) in input.entries.iter().zip(&shapes) {
        let mut d = EntryDecl::new(&e.name, e.dtype(), shape).with_alignment(e.alignment());
        d.target = e.target;
        if let Err(err) = w.declare(d) {
            // Only names outside 1..=1024 bytes and overflowing targets are refused.
            assert!(matches!(err, WriteError::Format(_)), "{err:?}");
            return;
        }
    }
    for ((k, m), lent) in input.meta.iter().zip(&lent) {
        if w.metadata(k, value(m, lent)).is_err() {
            return;
        }
    }
    let step = usize::from(input.chunk).max(1);
    for p in &payloads {
        for piece in p.chunks(step) {
            if w.write(piece).is_err() {
                return; // duplicate names or keys
            }
        }
        if w.end_entry().is_err() {
            return;
        }
    }
    let Ok(bytes) = w.finish() else { return };
    let c = Container::parse(&bytes).expect("the writer's output parses");
    c.verify().expect("and verifies");
    assert_eq!(c.len(), input.entries.len());
    for ((got, e), (shape, payload)) in c.entries().zip(&input.entries).zip(shapes.iter().zip(&payloads)) {
        assert_eq!(got.name(), e.name);
        assert_eq!(got.dtype(), e.dtype());
        assert_eq!(got.shape().dims(), &shape[..]);
        assert_eq!(got.alignment(), e.alignment());
        assert_eq!(got.target(), e.target);
        assert_eq!(got.payload(), &payload[..]);
    }
    for (k, m) in &input.meta {
        assert!(same(m, c.metadata().get(k).expect("every key is found")), "{k}");
    }
});
