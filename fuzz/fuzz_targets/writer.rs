//! Random call sequences on both writers over a sink that may fail at any byte: no panic; after any error the
//! output never parses as valid; a sequence that finishes cleanly gives a valid container.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpack::write::{EntryDecl, FixedBookkeeping, SeekWriter, StreamWriter, WriteError};
use tpack::{Container, MetaValue};
use tpack_fuzz::EntryModel;

// The integration tests' in-memory sink, which can be told to fail at any byte.
#[path = "../../tests/support/sinks.rs"]
mod sinks;
use sinks::MemSink;

#[derive(arbitrary::Arbitrary, Debug)]
enum Call {
    Declare(EntryModel),
    DeclareOpenEnded(String, u8),
    Meta(String, u64),
    Write(u16),
    EndEntry,
}

#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    seekable: bool,
    fail_at: Option<u16>,
    calls: Vec<Call>,
}

macro_rules! drive {
    ($w:expr, $calls:expr) => {{
        let mut failed = false;
        let mut shapes: Vec<Vec<u64>> = Vec::new();
        for call in $calls {
            let result = match call {
                Call::Declare(e) => {
                    shapes.push(e.shape_and_len().0);
                    let mut d = EntryDecl::new(&e.name, e.dtype(), shapes.last().unwrap())
                        .with_alignment(e.alignment());
                    d.target = e.target;
                    $w.declare(d)
                }
                Call::DeclareOpenEnded(name, a) => {
                    $w.declare(EntryDecl::open_ended(name, tpack::Dtype::RAW).with_alignment(1 << (a % 17)))
                }
                Call::Meta(k, v) => $w.metadata(k, MetaValue::U64(*v)),
                Call::Write(n) => $w.write(&vec![0xa5; usize::from(*n % 300)]),
                Call::EndEntry => $w.end_entry(),
            };
            if let Err(e) = result {
                failed = true;
                // Once failed, always failed.
                assert_eq!($w.end_entry(), Err(WriteError::Poisoned), "after {e:?}");
            }
        }
        failed
    }};
}

fuzz_target!(|input: Input| {
    let mut sink = MemSink { fail_at: input.fail_at.map(usize::from), ..MemSink::default() };
    let (failed, finished) = if input.seekable {
        let mut w = SeekWriter::new(&mut sink, FixedBookkeeping::<8, 256>);
        let failed = drive!(w, &input.calls);
        (failed, w.finish().is_ok())
    } else {
        let mut w = StreamWriter::new(&mut sink, FixedBookkeeping::<8, 256>);
        let failed = drive!(w, &input.calls);
        (failed, w.finish().is_ok())
    };
    let valid = Container::parse(&sink.bytes).and_then(|c| c.verify()).is_ok();
    if failed || !finished {
        assert!(!valid, "a failed writer left a valid container");
    } else {
        assert!(valid, "a writer that finished cleanly left an invalid container");
    }
});
