//! A container past 4 GiB, written by both writers to a sink that keeps only its first megabyte and what lies
//! beyond 2^32: offsets above 2^32 work without a real 4 GiB file. Slow in a debug build, so it runs in
//! release: `cargo test --release --test large` (CI does).

// Memory maps, /proc and gigabyte files are outside what Miri interprets.
#![cfg(not(miri))]

use embedded_io::{ErrorKind, ErrorType, Seek, SeekFrom, Write};
use tpack::checksum::{crc32, header_crc};
use tpack::format::{Descriptor, Header};
use tpack::write::{EntryDecl, SeekWriter, StreamWriter, VecBookkeeping};
use tpack::zerocopy::FromBytes;
use tpack::Dtype;

const LOW: u64 = 1 << 20;
const HIGH: u64 = 1 << 32;
const BIG: u64 = (1 << 32) + 1000;

/// Remembers bytes below `LOW` and from `HIGH` on; counts the rest.
#[derive(Default)]
struct SparseSink {
    position: u64,
    len: u64,
    low: Vec<u8>,
    high: Vec<u8>,
}

impl SparseSink {
    fn put(keep: &mut Vec<u8>, at: u64, byte: u8) {
        let at = at as usize;
        if keep.len() <= at {
            keep.resize(at + 1, 0);
        }
        keep[at] = byte;
    }
}

impl ErrorType for SparseSink {
    type Error = ErrorKind;
}

impl Write for SparseSink {
    fn write(&mut self, data: &[u8]) -> Result<usize, ErrorKind> {
        let start = self.position;
        let end = start + data.len() as u64;
        if start < LOW {
            for (i, &b) in data.iter().enumerate().take((LOW - start) as usize) {
                Self::put(&mut self.low, start + i as u64, b);
            }
        }
        if end > HIGH {
            let skip = HIGH.saturating_sub(start) as usize;
            for (i, &b) in data.iter().enumerate().skip(skip) {
                Self::put(&mut self.high, start + i as u64 - HIGH, b);
            }
        }
        self.position = end;
        self.len = self.len.max(end);
        Ok(data.len())
    }
    fn flush(&mut self) -> Result<(), ErrorKind> {
        Ok(())
    }
}

impl Seek for SparseSink {
    fn seek(&mut self, pos: SeekFrom) -> Result<u64, ErrorKind> {
        // The seekable writer asks where it stands (`Current(0)`) and seeks to absolute positions.
        match pos {
            SeekFrom::Start(p) => self.position = p,
            SeekFrom::Current(0) => {}
            _ => return Err(ErrorKind::Unsupported),
        }
        Ok(self.position)
    }
}

struct NoSeek(SparseSink);
impl ErrorType for NoSeek {
    type Error = ErrorKind;
}
impl Write for NoSeek {
    fn write(&mut self, data: &[u8]) -> Result<usize, ErrorKind> {
        self.0.write(data)
    }
    fn flush(&mut self) -> Result<(), ErrorKind> {
        Ok(())
    }
}

const TAIL: &[u8] = b"this payload starts past 4 GiB";

fn feed<E: core::fmt::Debug>(mut write: impl FnMut(&[u8]) -> Result<(), E>) {
    let chunk = vec![0x5au8; 1 << 20];
    let mut left = BIG;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        write(&chunk[..n]).unwrap();
        left -= n as u64;
    }
}

fn check(sink: &SparseSink) {
    let header = Header::ref_from_prefix(&sink.low).unwrap().0;
    assert_eq!(header.total_len.get(), sink.len);
    assert!(sink.len > HIGH);
    let table = header.sections[0].offset.get() as usize;
    let second = Descriptor::read_from_prefix(&sink.low[table + 104..]).unwrap().0;
    let offset = second.offset.get();
    assert!(offset > HIGH, "second payload at {offset}");
    assert_eq!(offset % 4096, 0);
    let meta_end = (header.sections[3].offset.get() + header.sections[3].length.get()) as usize;
    assert_eq!(header_crc(&sink.low[..meta_end]), header.header_crc.get());
    let at = (offset - HIGH) as usize;
    assert_eq!(&sink.high[at..at + TAIL.len()], TAIL);
    let trailer = (header.sections[5].offset.get() - HIGH) as usize;
    let stored = u32::from_le_bytes(sink.high[trailer + 4..trailer + 8].try_into().unwrap());
    assert_eq!(stored, crc32(TAIL));
    let own = u32::from_le_bytes(sink.high[trailer + 8..trailer + 12].try_into().unwrap());
    assert_eq!(own, crc32(&sink.high[trailer..trailer + 8]));
}

#[test]
#[cfg_attr(debug_assertions, ignore = "CRCs 4 GiB: run with --release")]
fn offsets_past_4_gib_work_with_both_writers() {
    let mut seek = SeekWriter::new(SparseSink::default(), VecBookkeeping);
    seek.declare(EntryDecl::open_ended("big", Dtype::RAW)).unwrap();
    seek.declare(EntryDecl::new("tail", Dtype::U8, &[TAIL.len() as u64]).with_alignment(4096)).unwrap();
    feed(|c| seek.write(c));
    seek.end_entry().unwrap();
    seek.write_entry(TAIL).unwrap();
    let seek = seek.finish().unwrap();
    check(&seek);

    let mut pipe = StreamWriter::new(NoSeek(SparseSink::default()), VecBookkeeping);
    pipe.declare(EntryDecl::new("big", Dtype::RAW, &[BIG])).unwrap();
    pipe.declare(EntryDecl::new("tail", Dtype::U8, &[TAIL.len() as u64]).with_alignment(4096)).unwrap();
    feed(|c| pipe.write(c));
    pipe.end_entry().unwrap();
    pipe.write_entry(TAIL).unwrap();
    let pipe = pipe.finish().unwrap().0;
    check(&pipe);
    assert_eq!(seek.low, pipe.low, "identical prefixes");
    assert_eq!(seek.high, pipe.high, "identical tails");
}
