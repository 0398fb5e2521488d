//! tpack against safetensors, the format to beat, on the same tensors (names, dtypes, shapes), in one run:
//!
//! - `open`: open + full structural validation (`Container::parse`) against `SafeTensors::deserialize`, at 10,
//!   1,000 and 100,000 tensors whose header dominates the file (64-byte payloads).
//! - `lookup`: a lookup by name against safetensors' `tensor()` (a hash map), at 1,000 and 100,000 tensors,
//!   over 1,024 pseudo-random names: `Container::get` (binary search over the stored name index, no memory)
//!   and `NameIndex::get` (a hash table built once; its build cost is in `open`).
//! - `verify`: full checksum verification (`Container::verify`) of a 1 GiB container against the named
//!   baseline, a plain read pass over the same bytes (an XOR fold of every 8-byte word).
//!
//! `cargo bench --bench compare`; `python3 benches/report.py` turns the numbers into BENCHMARKS.md.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use safetensors::tensor::{Dtype as StDtype, TensorView};
use safetensors::SafeTensors;
use tpack::write::{EntryDecl, StreamWriter, VecBookkeeping};
use tpack::{Container, Dtype, NameIndex};

const SUFFIXES: [&str; 9] = [
    "self_attn.q_proj.weight",
    "self_attn.k_proj.weight",
    "self_attn.v_proj.weight",
    "self_attn.o_proj.weight",
    "mlp.gate_proj.weight",
    "mlp.up_proj.weight",
    "mlp.down_proj.weight",
    "input_layernorm.weight",
    "post_attention_layernorm.weight",
];

/// `n` tensors named like a Hugging Face Llama checkpoint, alternating BF16 [8, 4] and F32 [4, 4]: 64 bytes
/// each, so the header dominates.
struct Model {
    names: Vec<String>,
}

impl Model {
    fn new(n: usize) -> Self {
        Self { names: (0..n).map(|i| format!("model.layers.{}.{}", i / 9, SUFFIXES[i % 9])).collect() }
    }

    fn spec(i: usize) -> (Dtype, StDtype, [u64; 2]) {
        if i.is_multiple_of(2) {
            (Dtype::BF16, StDtype::BF16, [8, 4])
        } else {
            (Dtype::F32, StDtype::F32, [4, 4])
        }
    }

    fn tpack(&self) -> Vec<u8> {
        let mut w = StreamWriter::new(Vec::new(), VecBookkeeping);
        let shapes: Vec<[u64; 2]> = (0..self.names.len()).map(|i| Self::spec(i).2).collect();
        for (i, name) in self.names.iter().enumerate() {
            w.declare(EntryDecl::new(name, Self::spec(i).0, &shapes[i])).unwrap();
        }
        for _ in &self.names {
            w.write_entry(&[7; 64]).unwrap();
        }
        w.finish().unwrap()
    }

    fn safetensors(&self) -> Vec<u8> {
        let data = [7u8; 64];
        let views: Vec<(String, TensorView<'_>)> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let (_, dtype, [a, b]) = Self::spec(i);
                (name.clone(), TensorView::new(dtype, vec![a as usize, b as usize], &data).unwrap())
            })
            .collect();
        safetensors::serialize(views, None).unwrap()
    }

    /// 1,024 names of the model, pseudo-randomly chosen.
    fn queries(&self) -> Vec<&str> {
        let mut x = 0x9e37_79b9_u64;
        (0..1024)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                self.names[(x >> 33) as usize % self.names.len()].as_str()
            })
            .collect()
    }
}

fn open(c: &mut Criterion) {
    let mut group = c.benchmark_group("open");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for n in [10usize, 1_000, 100_000] {
        let model = Model::new(n);
        let st = model.safetensors();
        let tp = model.tpack();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("safetensors deserialize", n), &st, |b, bytes| {
            b.iter(|| SafeTensors::deserialize(black_box(bytes)).unwrap().len())
        });
        group.bench_with_input(BenchmarkId::new("tpack parse", n), &tp, |b, bytes| {
            b.iter(|| Container::parse(black_box(bytes)).unwrap().len())
        });
        group.bench_with_input(BenchmarkId::new("tpack parse + NameIndex::new", n), &tp, |b, bytes| {
            b.iter(|| NameIndex::new(&Container::parse(black_box(bytes)).unwrap()).container().len())
        });
    }
    group.finish();
}

fn lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("lookup");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for n in [1_000usize, 100_000] {
        let model = Model::new(n);
        let st_bytes = model.safetensors();
        let tp_bytes = model.tpack();
        let st = SafeTensors::deserialize(&st_bytes).unwrap();
        let tp = Container::parse(&tp_bytes).unwrap();
        let queries = model.queries();
        group.throughput(Throughput::Elements(queries.len() as u64));
        group.bench_with_input(BenchmarkId::new("safetensors tensor()", n), &queries, |b, q| {
            b.iter(|| q.iter().map(|name| st.tensor(black_box(name)).unwrap().data().len()).sum::<usize>())
        });
        group.bench_with_input(BenchmarkId::new("tpack get()", n), &queries, |b, q| {
            b.iter(|| q.iter().map(|name| tp.get(black_box(name)).unwrap().payload().len()).sum::<usize>())
        });
        let index = NameIndex::new(&tp);
        group.bench_with_input(BenchmarkId::new("tpack NameIndex::get()", n), &queries, |b, q| {
            b.iter(|| q.iter().map(|name| index.get(black_box(name)).unwrap().payload().len()).sum::<usize>())
        });
    }
    group.finish();
}

/// The baseline: reads every byte once, as fast as the memory system allows (the fold vectorizes).
fn read_pass(bytes: &[u8]) -> u64 {
    bytes.chunks_exact(8).fold(0u64, |acc, w| acc ^ u64::from_le_bytes(w.try_into().unwrap()))
}

fn verify(c: &mut Criterion) {
    const TOTAL: usize = 1 << 30;
    const ENTRIES: usize = 64;
    let chunk: Vec<u8> =
        (0..TOTAL / ENTRIES).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3]).collect();
    let names: Vec<String> = (0..ENTRIES).map(|i| format!("blocks.{i}.weight")).collect();
    let mut w = StreamWriter::new(Vec::with_capacity(TOTAL + (1 << 20)), VecBookkeeping);
    for name in &names {
        w.declare(EntryDecl::new(name, Dtype::U8, &[chunk.len() as u64])).unwrap();
    }
    for _ in 0..ENTRIES {
        w.write_entry(&chunk).unwrap();
    }
    let bytes = w.finish().unwrap();
    drop(chunk);
    let container = Container::parse(&bytes).unwrap();

    let mut group = c.benchmark_group("verify");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function(BenchmarkId::new("baseline: read pass", "1 GiB"), |b| {
        b.iter(|| read_pass(black_box(&bytes)))
    });
    group.bench_function(BenchmarkId::new("tpack verify", "1 GiB"), |b| {
        b.iter(|| container.verify().unwrap())
    });
    group.finish();
}

criterion_group!(benches, open, lookup, verify);
criterion_main!(benches);
