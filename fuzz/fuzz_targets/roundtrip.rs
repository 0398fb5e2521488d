//! Arbitrary entries and metadata through the one-pass writer, in chunks of any size, and back through the
//! reader: what comes out is what went in. (That both writer modes give the same bytes is checked by
//! tests/writer.rs at every chunking, and on every golden vector by tests/vectors.rs.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpack::write::{EntryDecl, StreamWriter, VecBookkeeping, WriteError};
use tpack::{Container, OwnedMetaValue};
use tpack_fuzz::{EntryModel, MetaModel};

#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    entries: Vec<EntryModel>,
    meta: Vec<(String, MetaModel)>,
    chunk: u8,
}

fuzz_target!(|input: Input| {
    // The values the fuzzer described validly (most encodings it draws are not).
    let meta: Vec<(&str, OwnedMetaValue)> =
        input.meta.iter().filter_map(|(k, m)| Some((k.as_str(), m.value()?))).collect();
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
    for (k, v) in &meta {
        if w.metadata(k, v.as_value()).is_err() {
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
    for (k, v) in &meta {
        let got = c.metadata().get(k).expect("every key is found");
        // Compared as owned values: by type and bits, so a NaN equals itself.
        assert!(OwnedMetaValue::try_from(got).is_ok_and(|got| got == *v), "{k}: {got:?}");
    }
});
