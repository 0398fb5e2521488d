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
        valid(
            "all-dtypes",
            "one entry of every dtype of format 1.0",
            of_entries(Dtype::ALL.iter().filter(|d| d.since_minor() == Some(0)).map(one_of).collect()),
        ),
        valid(
            "all-dtypes-1-1",
            "a minor-1 file with one entry of every dtype of format 1.1, and the geometry of each block dtype",
            {
                let entries: Vec<RawEntry> =
                    Dtype::ALL.iter().filter(|d| d.since_minor() == Some(1) || d.since_minor() == Some(0)).map(one_of).collect();
                Raw { minor: 1, extension: geometry_of(&entries), entries, ..Raw::default() }.encode()
            },
        ),
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
            "a file of minor version 3, newer than the spec: an extension item of an unknown tag, an unknown dtype and an unknown metadata type are skipped, compat flags kept",
            Raw {
                minor: 3,
                extension: extension_item(0x7000_0001, &[]),
                compat: 0x8000_0000_0000_0002,
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
            "a minor-3 file with dtype code 0 and metadata type 0: undefined codes, kept and skipped",
            Raw {
                minor: 3,
                entries: vec![RawEntry { dtype: 0, ..RawEntry::new("zero.dtype", Dtype::U8, &[2], vec![1, 2]) }],
                meta: vec![RawMeta { value_type: 0, ..RawMeta::pooled("zero.type", MetaType::BYTES, vec![7]) }],
                ..Raw::default()
            }
            .encode(),
        ),
        valid(
            "header-extension",
            "a minor-1 file with a header-extension item of a tag the spec does not define: checksummed, skipped",
            Raw {
                minor: 1,
                extension: extension_item(0xABCD, b"future!\x01"),
                entries: vec![RawEntry::new("x", Dtype::U8, &[1], vec![5])],
                ..Raw::default()
            }
            .encode(),
        ),
        valid(
            "compat-flags-minor-0",
            "a minor-0 file with compatible-feature flags set: ignored, and decoded",
            Raw { compat: 0x5, entries: vec![RawEntry::new("x", Dtype::U8, &[1], vec![5])], ..Raw::default() }
                .encode(),
        ),
        valid(
            "nested-newer-minor",
            "a minor-0 container nesting a minor-3 container with an unknown dtype: each header governs its own container",
            of_entries(vec![container(
                "inner",
                Raw {
                    minor: 3,
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
        // Format 1.1.
        valid(
            "format-1-1",
            "a minor-1 file: GGUF K-quants, IQ4_NL, MXFP4, Q8_0 and FP4 entries with their block geometry in the \
             header extension, a C64 entry, and every 1.1 metadata type (an f32 signalling NaN, nested arrays)",
            base_1_1().encode(),
        ),
        valid(
            "unknown-dtype-with-geometry",
            "a minor-3 file with dtypes 98 and 99, unknown to a 1.2 reader, whose geometry records (1 × 3 bytes, \
             32 elements in 10 bytes) let the reader check their lengths",
            {
                let entries = vec![
                    RawEntry::new("known.q4k", Dtype::Q4_K, &[256], pattern(144, 1)),
                    RawEntry { dtype: 98, ..RawEntry::new("future.element", Dtype::U8, &[5], pattern(15, 2)) },
                    RawEntry { dtype: 99, ..RawEntry::new("future.block", Dtype::U8, &[2, 64], pattern(40, 3)) },
                ];
                Raw {
                    minor: 3,
                    extension: geometry(&[(26, 256, 144), (98, 1, 3), (99, 32, 10)]),
                    entries,
                    ..Raw::default()
                }
                .encode()
            },
        ),
        valid(
            "metadata-only-1-1",
            "a minor-1 file that uses 1.1 metadata types but no block dtype: no header extension",
            Raw {
                minor: 1,
                entries: vec![RawEntry::new("w", Dtype::F32, &[2], f32s(2))],
                meta: vec![RawMeta::pooled("n", MetaType::U32, 5u32.to_le_bytes().to_vec())],
                ..Raw::default()
            }
            .encode(),
        ),
        valid(
            "array-depth-8",
            "a minor-1 file with an array[] value nested 8 levels deep, the most allowed",
            Raw {
                minor: 1,
                entries: vec![RawEntry::new("w", Dtype::F32, &[2], f32s(2))],
                meta: vec![RawMeta::pooled("deep", MetaType::ARRAY_ARRAY, nested_arrays(8))],
                ..Raw::default()
            }
            .encode(),
        ),
        valid(
            "extension-empty-items",
            "a minor-1 file whose header extension is an empty block geometry item (no records) and an empty \
             item of tag 5, unknown to a 1.2 reader: both are well formed (a canonical writer writes neither)",
            Raw {
                minor: 1,
                entries: vec![RawEntry::new("z", Dtype::C64, &[1], f32s(2))],
                extension: [extension_item(1, &[]), extension_item(5, &[])].concat(),
                ..Raw::default()
            }
            .encode(),
        ),
        valid(
            "format-1-1-as-minor-3",
            "the minor-1 model of format-1-1 as a minor-3 file: the 1.1 dtypes and metadata types are defined in \
             every file of minor 1 and later, so a 1.1 reader decodes them by their types, not as unknown codes",
            {
                let mut raw = base_1_1();
                as_minor_3(&mut raw);
                raw.encode()
            },
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
        tpack::format::Packing::Block { block_elems, block_bytes } => {
            RawEntry::new(&name, *dtype, &[2, block_elems], pattern(2 * block_bytes as usize, 5))
        }
        tpack::format::Packing::Bytes if *dtype == Dtype::CONTAINER => {
            container(&name, Raw::default().encode())
        }
        tpack::format::Packing::Bytes => RawEntry::new(&name, *dtype, &[5], pattern(5, 9)),
    }
}
