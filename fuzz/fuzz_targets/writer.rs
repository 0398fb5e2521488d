//! Random call sequences on both writers over a sink that may fail at any byte: no panic; after any error the
//! output never parses as valid; a sequence that finishes cleanly gives a valid container.
#![no_main]

use embedded_io::{ErrorKind, ErrorType, Seek, SeekFrom, Write};
use libfuzzer_sys::fuzz_target;
use tpack::write::{EntryDecl, FixedBookkeeping, SeekWriter, StreamWriter, WriteError};
use tpack::{Container, MetaValue};
use tpack_fuzz::EntryModel;

#[derive(Default)]
struct Sink {
    bytes: Vec<u8>,
    position: usize,
    fail_at: Option<usize>,
    written: usize,
}

impl ErrorType for Sink {
    type Error = ErrorKind;
}

impl Write for Sink {
    fn write(&mut self, data: &[u8]) -> Result<usize, ErrorKind> {
        if data.is_empty() {
            return Ok(0);
        }
        let room = self.fail_at.map_or(usize::MAX, |k| k.saturating_sub(self.written));
        if room == 0 {
            return Err(ErrorKind::Other);
        }
        let n = data.len().min(room);
        if self.bytes.len() < self.position + n {
            self.bytes.resize(self.position + n, 0);
        }
        self.bytes[self.position..self.position + n].copy_from_slice(&data[..n]);
        self.position += n;
        self.written += n;
        Ok(n)
    }
    fn flush(&mut self) -> Result<(), ErrorKind> {
        Ok(())
    }
}

impl Seek for Sink {
    fn seek(&mut self, pos: SeekFrom) -> Result<u64, ErrorKind> {
        // The seekable writer asks where it stands (`Current(0)`) and seeks to absolute positions.
        match pos {
            SeekFrom::Start(p) => self.position = p as usize,
            SeekFrom::Current(0) => {}
            _ => return Err(ErrorKind::Unsupported),
        }
        Ok(self.position as u64)
    }
}

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
    let mut sink = Sink { fail_at: input.fail_at.map(usize::from), ..Sink::default() };
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
