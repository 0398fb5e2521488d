//! The valid vectors: the example model, then one container per feature or edge of the format.

use tpack::{Dtype, MetaType};

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    vec![
        valid("example", "a small model: several dtypes, a load address, metadata of every kind", base().encode()),
        valid("empty", "no entries and no metadata", Raw::default().encode()),
        valid(
            "scalar",
            "one rank-0 entry",
            of_entries(vec![RawEntry::new("pi", Dtype::F64, &[], std::f64::consts::PI.to_le_bytes().to_vec())]),
        ),
        valid(
            "zero-size",
            "entries with a zero dimension and an empty payload, between non-empty ones",
            of_entries(
                [bytes_then_empty(), vec![
                    RawEntry::new("c", Dtype::I64, &[7, 0, 2], Vec::new()),
                    RawEntry::new("d", Dtype::U8, &[1], vec![9]).align(1),
                ]]
                .concat(),
            ),
        ),
        valid(
            "rank8",
            "an entry of the largest rank",
            of_entries(vec![RawEntry::new("t", Dtype::I8, &[1, 2, 1, 2, 1, 2, 1, 2], pattern(16, 1))]),
        ),
        valid("all-dtypes", "one entry of every dtype of format 1.0", of_entries(Dtype::ALL.iter().map(one_of).collect())),
        valid(
            "nested",
            "a container holding a nested container (the example) next to a plain entry",
            Raw {
                entries: vec![RawEntry::new("head", Dtype::F32, &[3], f32s(3)), container("submodel", base().encode())],
                meta: vec![RawMeta::pooled("kind", MetaType::STRING, b"ensemble".to_vec())],
                ..Raw::default()
            }
            .encode(),
        ),
        valid("nested-max-depth", "containers nested to depth 8, the deepest allowed", nested_chain(9)),
        valid(
            "targets",
            "load addresses, including a segment that ends exactly at 2^64",
            of_entries(vec![
                RawEntry::new("flash.seg", Dtype::RAW, &[16], pattern(16, 2)).align(4).target(0x0800_0000),
                RawEntry::new("ram.seg", Dtype::U32, &[4], pattern(16, 4)).align(4).target(0x2000_0000),
                RawEntry::new("top", Dtype::RAW, &[8], pattern(8, 6)).align(8).target(u64::MAX - 7),
                RawEntry::new("zero", Dtype::U8, &[2], vec![0, 1]).target(0),
            ]),
        ),
        valid(
            "metadata",
            "metadata of every type, with edge values: NaN, -0.0, empty strings and arrays, extreme integers",
            Raw {
                meta: vec![
                    RawMeta::inline("u64.max", MetaType::U64, u64::MAX),
                    RawMeta::inline("i64.min", MetaType::I64, i64::MIN as u64),
                    RawMeta::inline("f64.nan", MetaType::F64, 0x7ff8_0000_0000_0001),
                    RawMeta::inline("f64.negzero", MetaType::F64, (-0.0f64).to_bits()),
                    RawMeta::inline("bool.false", MetaType::BOOL, 0),
                    RawMeta::inline("bool.true", MetaType::BOOL, 1),
                    RawMeta::pooled("string", MetaType::STRING, "héllo\n\"quoted\"".as_bytes().to_vec()),
                    RawMeta::pooled("string.empty", MetaType::STRING, Vec::new()),
                    RawMeta::pooled("bytes", MetaType::BYTES, vec![0xde, 0xad, 0xbe, 0xef]),
                    RawMeta::pooled("bytes.empty", MetaType::BYTES, Vec::new()),
                    RawMeta::pooled("u64s", MetaType::U64_ARRAY, words(&[0u64, 1, u64::MAX], |v| v)),
                    RawMeta::pooled("i64s", MetaType::I64_ARRAY, words(&[-1i64, 0, i64::MAX], |v| v as u64)),
                    RawMeta::pooled(
                        "f64s",
                        MetaType::F64_ARRAY,
                        words(&[0.5f64, -2.25, f64::INFINITY], f64::to_bits),
                    ),
                    RawMeta::pooled("u64s.empty", MetaType::U64_ARRAY, Vec::new()),
                    RawMeta::pooled("strings", MetaType::STRING_ARRAY, string_array(&[b"a", b"", "ü".as_bytes()])),
                    RawMeta::pooled("strings.empty", MetaType::STRING_ARRAY, Vec::new()),
                ],
                ..Raw::default()
            }
            .encode(),
        ),
        valid(
            "max-alignment",
            "payloads at the largest alignment, 65536, and at alignment 1",
            of_entries(vec![
                RawEntry::new("packed", Dtype::U8, &[3], vec![1, 2, 3]).align(1),
                RawEntry::new("page", Dtype::F32, &[4], f32s(4)).align(65536),
            ]),
        ),
        valid(
            "newer-minor",
            "a file of minor version 1: a longer header, an unknown dtype and an unknown metadata type are skipped, compat flags kept",
            Raw {
                minor: 1,
                header_len: 168,
                compat: 0x8000_0000_0000_0001,
                entries: vec![
                    RawEntry::new("known", Dtype::U16, &[2], vec![1, 0, 2, 0]),
                    RawEntry { dtype: 200, ..RawEntry::new("future", Dtype::U8, &[3, 3], pattern(5, 1)) },
                ],
                meta: vec![
                    RawMeta { value_type: 77, ..RawMeta::pooled("future.meta", MetaType::BYTES, vec![1, 2, 3]) },
                    RawMeta::inline("n", MetaType::U64, 2),
                ],
                ..Raw::default()
            }
            .encode(),
        ),
        valid(
            "unknown-code-0-newer-minor",
            "a minor-1 file with dtype code 0 and metadata type 0: undefined codes, kept and skipped",
            Raw {
                minor: 1,
                entries: vec![RawEntry { dtype: 0, ..RawEntry::new("zero.dtype", Dtype::U8, &[2], vec![1, 2]) }],
                meta: vec![RawMeta { value_type: 0, ..RawMeta::pooled("zero.type", MetaType::BYTES, vec![7]) }],
                ..Raw::default()
            }
            .encode(),
        ),
        valid(
            "header-extension",
            "a minor-1 file whose 8 header bytes past 160 are not zero: checksummed, otherwise ignored",
            {
                let mut b = Raw {
                    minor: 1,
                    header_len: 168,
                    entries: vec![RawEntry::new("x", Dtype::U8, &[1], vec![5])],
                    ..Raw::default()
                }
                .encode();
                b[160..168].copy_from_slice(b"future!\x01");
                fix(&mut b);
                b
            },
        ),
        valid(
            "compat-flags-minor-0",
            "a minor-0 file with compatible-feature flags set: ignored, and decoded",
            Raw { compat: 0x5, entries: vec![RawEntry::new("x", Dtype::U8, &[1], vec![5])], ..Raw::default() }
                .encode(),
        ),
        valid(
            "nested-newer-minor",
            "a minor-0 container nesting a minor-1 container with an unknown dtype: each header governs its own container",
            of_entries(vec![container(
                "inner",
                Raw {
                    minor: 1,
                    entries: vec![RawEntry { dtype: 300, ..RawEntry::new("future", Dtype::U8, &[4], vec![1, 2, 3]) }],
                    ..Raw::default()
                }
                .encode(),
            )]),
        ),
        valid(
            "trailing-empty",
            "the last entry is empty, so the payload section ends with its padding",
            of_entries(bytes_then_empty()),
        ),
        valid(
            "payload-not-interpreted",
            "a BOOL byte of 7 and a NaN scale: payload bytes are never validated, only checksummed",
            of_entries(vec![
                RawEntry::new("flags", Dtype::BOOL, &[3], vec![0, 1, 7]),
                RawEntry::new("q", Dtype::Q8_0, &[32], {
                    let mut q = vec![0xff, 0x7f];
                    q.extend([1u8; 32]);
                    q
                }),
            ]),
        ),
    ]
}

/// Three bytes, then an empty F32 entry (`zero-size` goes on after them, `trailing-empty` ends there).
fn bytes_then_empty() -> Vec<RawEntry> {
    vec![RawEntry::new("a", Dtype::U8, &[3], vec![1, 2, 3]), RawEntry::new("b", Dtype::F32, &[0], Vec::new())]
}

/// The entry of `dtype` in `all-dtypes`: a small valid shape and payload for its storage kind.
fn one_of(dtype: &Dtype) -> RawEntry {
    let name = format!("dtype.{}", dtype.name().unwrap());
    match dtype.packing().unwrap() {
        tpack::format::Packing::Element(size) => {
            RawEntry::new(&name, *dtype, &[2, 3], pattern(6 * size as usize, size as u8))
        }
        tpack::format::Packing::Block { block_bytes, .. } => {
            RawEntry::new(&name, *dtype, &[2, 32], pattern(2 * block_bytes as usize, 5))
        }
        tpack::format::Packing::Bytes if *dtype == Dtype::CONTAINER => {
            container(&name, Raw::default().encode())
        }
        tpack::format::Packing::Bytes => RawEntry::new(&name, *dtype, &[5], pattern(5, 9)),
    }
}
