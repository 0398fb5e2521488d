//! Full structural validation (`Container::parse`) at 10^3 to 10^6 entries. Linear time shows as a flat time
//! per entry; the named baseline, measured in the same run, is one pass of `crc32` over the same
//! checksummed region — the least any validating reader must do.
//!
//! `cargo bench --bench parse`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tpack::write::{EntryDecl, StreamWriter, VecBookkeeping};
use tpack::{Container, Dtype};

fn container(entries: usize) -> Vec<u8> {
    let mut w = StreamWriter::new(Vec::new(), VecBookkeeping);
    let names: Vec<String> = (0..entries).map(|i| format!("blk.{}.ffn.w{}", i / 8, i % 8)).collect();
    for name in &names {
        w.declare(EntryDecl::new(name, Dtype::F32, &[2]).with_alignment(8)).unwrap();
    }
    for _ in 0..entries {
        w.write_entry(&[0; 8]).unwrap();
    }
    w.finish().unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    group.sample_size(10);
    for entries in [1_000usize, 10_000, 100_000, 1_000_000] {
        let bytes = container(entries);
        let c = Container::parse(&bytes).unwrap();
        let meta = c.header().sections[3];
        let region = (meta.offset.get() + meta.length.get()) as usize;
        group.throughput(Throughput::Elements(entries as u64));
        group.bench_with_input(
            BenchmarkId::new("baseline: crc32 of the checksummed region", entries),
            &bytes,
            |b, bytes| b.iter(|| tpack::checksum::crc32(&bytes[..region])),
        );
        group.bench_with_input(BenchmarkId::new("Container::parse", entries), &bytes, |b, bytes| {
            b.iter(|| Container::parse(bytes).unwrap().len())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
