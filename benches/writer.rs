//! Writer throughput: 1 GiB of payload in 1 MiB chunks to a file through `SeekWriter`, against the named
//! baseline `std::io::copy` of the same bytes to the same kind of file, in the same run.
//!
//! `cargo bench --bench writer`; the ratio is the baseline's time over the writer's (1.0 = as fast as a copy).

use std::fs::File;
use std::io::{self, BufWriter, Read};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use embedded_io_adapters::std::FromStd;
use tpack::write::{EntryDecl, SeekWriter, VecBookkeeping};
use tpack::Dtype;

const TOTAL: usize = 1 << 30;
const CHUNK: usize = 1 << 20;
const ENTRIES: usize = 16;

fn chunk() -> Vec<u8> {
    (0..CHUNK).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3]).collect()
}

/// Yields `TOTAL` bytes made of `chunk` repeated: what the writer is fed, as a `Read` for `io::copy`.
struct Repeat<'a> {
    chunk: &'a [u8],
    left: usize,
    at: usize,
}

impl Read for Repeat<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.left).min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at = (self.at + n) % self.chunk.len();
        self.left -= n;
        Ok(n)
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    let data = chunk();
    let mut group = c.benchmark_group("write 1 GiB in 1 MiB chunks to a file");
    group.throughput(Throughput::Bytes(TOTAL as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(20));

    group.bench_function("baseline: std::io::copy", |b| {
        b.iter(|| {
            let mut file = BufWriter::with_capacity(256 * 1024, File::create(&path).unwrap());
            let mut source = Repeat { chunk: &data, left: TOTAL, at: 0 };
            io::copy(&mut source, &mut file).unwrap();
            file.into_inner().unwrap();
        })
    });

    group.bench_function("tpack SeekWriter", |b| {
        b.iter(|| {
            let file = BufWriter::with_capacity(256 * 1024, File::create(&path).unwrap());
            let mut w = SeekWriter::new(FromStd::new(file), VecBookkeeping);
            let per_entry = (TOTAL / ENTRIES) as u64;
            let names: Vec<String> = (0..ENTRIES).map(|i| format!("layer{i}.weight")).collect();
            for name in &names {
                w.declare(EntryDecl::new(name, Dtype::U8, &[per_entry])).unwrap();
            }
            for _ in 0..ENTRIES {
                for _ in 0..TOTAL / ENTRIES / CHUNK {
                    w.write(&data).unwrap();
                }
                w.end_entry().unwrap();
            }
            w.finish().unwrap();
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
