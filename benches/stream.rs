//! The push decoder (`tpack::stream::Decoder`) against the reader, on the same 1 GiB container in memory, in
//! one run: the decoder fed 4 KiB chunks (a network or flash transfer), against `Container::parse` +
//! `verify` of the whole bytes in one slice — the same verdict, the least a validating reader does.
//!
//! `cargo bench --bench stream`; `python3 benches/report.py` turns the numbers into BENCHMARKS.md.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tpack::checksum::Crc32;
use tpack::stream::{Decoder, Event};
use tpack::write::{EntryDecl, StreamWriter, VecBookkeeping};
use tpack::{Container, Dtype};

/// The container: 1 GiB in a few large entries, like a model's weight matrices.
const TOTAL: usize = 1 << 30;
const ENTRIES: usize = 8;
/// The size of each piece fed to the decoder.
const CHUNK: usize = 4096;

fn container() -> Vec<u8> {
    let payload: Vec<u8> =
        (0..TOTAL / ENTRIES).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3]).collect();
    let names: Vec<String> = (0..ENTRIES).map(|i| format!("blocks.{i}.weight")).collect();
    let mut w = StreamWriter::new(Vec::with_capacity(TOTAL + (1 << 20)), VecBookkeeping);
    for name in &names {
        w.declare(EntryDecl::new(name, Dtype::U8, &[payload.len() as u64]).with_alignment(64)).unwrap();
    }
    for _ in 0..ENTRIES {
        w.write_entry(&payload).unwrap();
    }
    w.finish().unwrap()
}

/// Decodes `bytes` in `CHUNK`-byte pieces; the payload bytes seen, so that nothing is optimized away.
fn decode(bytes: &[u8], buffer: &mut [u8]) -> u64 {
    let mut decoder = Decoder::new(buffer);
    let mut seen = 0u64;
    for chunk in bytes.chunks(CHUNK) {
        let mut rest = chunk;
        while let (used, Some(event)) = decoder.decode(rest).unwrap() {
            rest = &rest[used..];
            if let Event::Payload { bytes, .. } = event {
                seen += black_box(bytes).len() as u64;
            }
        }
    }
    decoder.finish().unwrap();
    seen
}

/// The CRC-32 of `bytes`, fed in `CHUNK`-byte pieces and resumed from a `u32` each time, as the decoder does.
fn crc_in_pieces(bytes: &[u8]) -> u32 {
    bytes.chunks(CHUNK).fold(0, |crc, piece| {
        let mut c = Crc32::resume(crc);
        c.update(piece);
        c.finish()
    })
}

fn bench(c: &mut Criterion) {
    let bytes = container();
    let mut buffer = vec![0u8; Decoder::buffer_needed(&bytes).unwrap() as usize];
    assert_eq!(decode(&bytes, &mut buffer), (TOTAL / ENTRIES * ENTRIES) as u64);

    let mut group = c.benchmark_group("stream");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function(BenchmarkId::new("baseline: parse + verify", "1 GiB"), |b| {
        b.iter(|| Container::parse(black_box(&bytes)).unwrap().verify().unwrap())
    });
    // The floor under the decoder: the same CRC-32 (crc32fast) over the same bytes, resumed per 4 KiB piece.
    group.bench_function(BenchmarkId::new("crc32 alone, 4 KiB pieces", "1 GiB"), |b| {
        b.iter(|| crc_in_pieces(black_box(&bytes)))
    });
    group.bench_function(BenchmarkId::new("tpack Decoder, 4 KiB chunks", "1 GiB"), |b| {
        b.iter(|| decode(black_box(&bytes), &mut buffer))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
