//! Every golden vector: valid containers covering each feature, and one or more invalid containers per rule
//! of spec §12. `spec/vectors/` is generated from this list (see tests/vectors.rs) and tests/rules.rs runs
//! one test per rule over it.

#![allow(dead_code)]

use tpack::zerocopy::little_endian::{U16, U32, U64};
use tpack::{Dtype, MetaType, Rule};

use super::raw::*;

pub struct Case {
    /// File name without extension; invalid ones start with their rule id.
    pub name: String,
    /// `None` for a valid container.
    pub rule: Option<Rule>,
    pub description: &'static str,
    pub bytes: Vec<u8>,
}

fn f32s(n: usize) -> Vec<u8> {
    (0..n).flat_map(|i| (i as f32 * 0.5 - 3.0).to_le_bytes()).collect()
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Q8_0 blocks: an f16 scale (1.0 = 0x3C00) then 32 signed bytes.
fn q8_0(blocks: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for b in 0..blocks {
        out.extend_from_slice(&0x3C00u16.to_le_bytes());
        out.extend((0..32).map(|i| (i as i8 - 16 + b as i8) as u8));
    }
    out
}

/// The model behind `example.tpack`; invalid vectors are small edits of it.
pub fn base() -> Raw {
    Raw {
        entries: vec![
            RawEntry::new("embed.weight", Dtype::F32, &[4, 8], f32s(32)),
            RawEntry::new("layers.0.attn.q", Dtype::F16, &[8, 8], pattern(128, 3)),
            RawEntry::new("layers.0.ffn.q8", Dtype::Q8_0, &[2, 32], q8_0(2)),
            RawEntry::new("boot.code", Dtype::Raw, &[100], pattern(100, 7)).align(1).target(0x2000_0000),
            RawEntry::new("norm.eps", Dtype::F64, &[], 1e-5f64.to_le_bytes().to_vec()),
            RawEntry::new("empty", Dtype::I32, &[0, 5], Vec::new()),
        ],
        meta: vec![
            RawMeta::pooled("arch", MetaType::String, b"toy-mlp".to_vec()),
            RawMeta::inline("layers", MetaType::U64, 1),
            RawMeta::inline("bias", MetaType::I64, (-3i64) as u64),
            RawMeta::inline("eps", MetaType::F64, 1e-5f64.to_bits()),
            RawMeta::inline("trained", MetaType::Bool, 1),
            RawMeta::pooled("blob", MetaType::Bytes, vec![0, 1, 2, 0xff]),
            RawMeta::pooled("ids", MetaType::U64Array, words(&[1u64, 2, 3], |v| v)),
            RawMeta::pooled(
                "vocab",
                MetaType::StringArray,
                string_array(&[b"<s>", b"hello", "wörld".as_bytes()]),
            ),
        ],
        ..Raw::default()
    }
}

/// Index of the RAW entry with alignment 1 in `base()`.
const CODE: usize = 3;

fn valid(name: &str, description: &'static str, bytes: Vec<u8>) -> Case {
    Case { name: name.to_owned(), rule: None, description, bytes }
}

fn invalid(rule: Rule, slug: &str, description: &'static str, bytes: Vec<u8>) -> Case {
    Case { name: format!("{}-{slug}", rule.id()), rule: Some(rule), description, bytes }
}

/// Encodes `base()` after `edit` has changed the model.
fn model(edit: impl FnOnce(&mut Raw)) -> Vec<u8> {
    let mut raw = base();
    edit(&mut raw);
    raw.encode()
}

/// Encodes `base()`, patches the bytes, and recomputes every checksum.
fn patched(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = base().encode();
    edit(&mut bytes);
    fix(&mut bytes);
    bytes
}

/// Encodes `base()` and patches the bytes without recomputing checksums.
fn damaged(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = base().encode();
    edit(&mut bytes);
    bytes
}

/// A chain of `levels` containers, each holding the next as a CONTAINER entry; the innermost holds one F32.
fn nested_chain(levels: usize) -> Vec<u8> {
    let mut inner =
        Raw { entries: vec![RawEntry::new("leaf", Dtype::F32, &[2], f32s(2))], ..Raw::default() }.encode();
    for level in (0..levels - 1).rev() {
        let len = inner.len() as u64;
        inner = Raw {
            entries: vec![RawEntry::new(&format!("level{}", level + 1), Dtype::Container, &[len], inner)],
            ..Raw::default()
        }
        .encode();
    }
    inner
}

/// Built once per test binary: under Miri, building them for every test would dominate the run.
static VALID: std::sync::LazyLock<Vec<Case>> = std::sync::LazyLock::new(build_valid);
static INVALID: std::sync::LazyLock<Vec<Case>> = std::sync::LazyLock::new(build_invalid);

pub fn all() -> impl Iterator<Item = &'static Case> {
    VALID.iter().chain(INVALID.iter())
}

pub fn valid_cases() -> &'static [Case] {
    &VALID
}

pub fn invalid_cases() -> &'static [Case] {
    &INVALID
}

fn build_valid() -> Vec<Case> {
    let mut v = vec![valid(
        "example",
        "a small model: several dtypes, a load address, metadata of every kind",
        base().encode(),
    )];
    v.push(valid("empty", "no entries and no metadata", Raw::default().encode()));
    v.push(valid(
        "scalar",
        "one rank-0 entry",
        Raw {
            entries: vec![RawEntry::new("pi", Dtype::F64, &[], std::f64::consts::PI.to_le_bytes().to_vec())],
            ..Raw::default()
        }
        .encode(),
    ));
    v.push(valid(
        "zero-size",
        "entries with a zero dimension and an empty payload, between non-empty ones",
        Raw {
            entries: vec![
                RawEntry::new("a", Dtype::U8, &[3], vec![1, 2, 3]),
                RawEntry::new("b", Dtype::F32, &[0], Vec::new()),
                RawEntry::new("c", Dtype::I64, &[7, 0, 2], Vec::new()),
                RawEntry::new("d", Dtype::U8, &[1], vec![9]).align(1),
            ],
            ..Raw::default()
        }
        .encode(),
    ));
    v.push(valid(
        "rank8",
        "an entry of the largest rank",
        Raw {
            entries: vec![RawEntry::new("t", Dtype::I8, &[1, 2, 1, 2, 1, 2, 1, 2], pattern(16, 1))],
            ..Raw::default()
        }
        .encode(),
    ));
    let mut all_dtypes = Vec::new();
    for dtype in Dtype::ALL {
        let name = format!("dtype.{}", dtype.name().unwrap());
        let entry = match dtype.storage().unwrap() {
            tpack::format::Storage::Element(size) => {
                RawEntry::new(&name, *dtype, &[2, 3], pattern(6 * size as usize, size as u8))
            }
            tpack::format::Storage::Block { block_bytes, .. } => {
                RawEntry::new(&name, *dtype, &[2, 32], pattern(2 * block_bytes as usize, 5))
            }
            tpack::format::Storage::Bytes if *dtype == Dtype::Container => {
                let nested = Raw::default().encode();
                RawEntry::new(&name, *dtype, &[nested.len() as u64], nested)
            }
            tpack::format::Storage::Bytes => RawEntry::new(&name, *dtype, &[5], pattern(5, 9)),
        };
        all_dtypes.push(entry);
    }
    v.push(valid(
        "all-dtypes",
        "one entry of every dtype of format 1.0",
        Raw { entries: all_dtypes, ..Raw::default() }.encode(),
    ));
    let nested = base().encode();
    v.push(valid(
        "nested",
        "a container holding a nested container (the example) next to a plain entry",
        Raw {
            entries: vec![
                RawEntry::new("head", Dtype::F32, &[3], f32s(3)),
                RawEntry::new("submodel", Dtype::Container, &[nested.len() as u64], nested),
            ],
            meta: vec![RawMeta::pooled("kind", MetaType::String, b"ensemble".to_vec())],
            ..Raw::default()
        }
        .encode(),
    ));
    v.push(valid("nested-max-depth", "containers nested to depth 8, the deepest allowed", nested_chain(9)));
    v.push(valid(
        "targets",
        "load addresses, including a segment that ends exactly at 2^64",
        Raw {
            entries: vec![
                RawEntry::new("flash.seg", Dtype::Raw, &[16], pattern(16, 2)).align(4).target(0x0800_0000),
                RawEntry::new("ram.seg", Dtype::U32, &[4], pattern(16, 4)).align(4).target(0x2000_0000),
                RawEntry::new("top", Dtype::Raw, &[8], pattern(8, 6)).align(8).target(u64::MAX - 7),
                RawEntry::new("zero", Dtype::U8, &[2], vec![0, 1]).target(0),
            ],
            ..Raw::default()
        }
        .encode(),
    ));
    v.push(valid(
        "metadata",
        "metadata of every type, with edge values: NaN, -0.0, empty strings and arrays, extreme integers",
        Raw {
            meta: vec![
                RawMeta::inline("u64.max", MetaType::U64, u64::MAX),
                RawMeta::inline("i64.min", MetaType::I64, i64::MIN as u64),
                RawMeta::inline("f64.nan", MetaType::F64, 0x7ff8_0000_0000_0001),
                RawMeta::inline("f64.negzero", MetaType::F64, (-0.0f64).to_bits()),
                RawMeta::inline("bool.false", MetaType::Bool, 0),
                RawMeta::inline("bool.true", MetaType::Bool, 1),
                RawMeta::pooled("string", MetaType::String, "héllo\n\"quoted\"".as_bytes().to_vec()),
                RawMeta::pooled("string.empty", MetaType::String, Vec::new()),
                RawMeta::pooled("bytes", MetaType::Bytes, vec![0xde, 0xad, 0xbe, 0xef]),
                RawMeta::pooled("bytes.empty", MetaType::Bytes, Vec::new()),
                RawMeta::pooled("u64s", MetaType::U64Array, words(&[0u64, 1, u64::MAX], |v| v)),
                RawMeta::pooled("i64s", MetaType::I64Array, words(&[-1i64, 0, i64::MAX], |v| v as u64)),
                RawMeta::pooled(
                    "f64s",
                    MetaType::F64Array,
                    words(&[0.5f64, -2.25, f64::INFINITY], f64::to_bits),
                ),
                RawMeta::pooled("u64s.empty", MetaType::U64Array, Vec::new()),
                RawMeta::pooled("strings", MetaType::StringArray, string_array(&[b"a", b"", "ü".as_bytes()])),
                RawMeta::pooled("strings.empty", MetaType::StringArray, Vec::new()),
            ],
            ..Raw::default()
        }
        .encode(),
    ));
    v.push(valid(
        "max-alignment",
        "payloads at the largest alignment, 65536, and at alignment 1",
        Raw {
            entries: vec![
                RawEntry::new("packed", Dtype::U8, &[3], vec![1, 2, 3]).align(1),
                RawEntry::new("page", Dtype::F32, &[4], f32s(4)).align(65536),
            ],
            ..Raw::default()
        }
        .encode(),
    ));
    v.push(valid(
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
                RawMeta { value_type: 77, ..RawMeta::pooled("future.meta", MetaType::Bytes, vec![1, 2, 3]) },
                RawMeta::inline("n", MetaType::U64, 2),
            ],
            ..Raw::default()
        }
        .encode(),
    ));
    v.push(valid(
        "unknown-code-0-newer-minor",
        "a minor-1 file with dtype code 0 and metadata type 0: undefined codes, kept and skipped",
        Raw {
            minor: 1,
            entries: vec![RawEntry { dtype: 0, ..RawEntry::new("zero.dtype", Dtype::U8, &[2], vec![1, 2]) }],
            meta: vec![RawMeta { value_type: 0, ..RawMeta::pooled("zero.type", MetaType::Bytes, vec![7]) }],
            ..Raw::default()
        }
        .encode(),
    ));
    v.push(valid(
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
    ));
    v.push(valid(
        "compat-flags-minor-0",
        "a minor-0 file with compatible-feature flags set: ignored, and decoded",
        Raw { compat: 0x5, entries: vec![RawEntry::new("x", Dtype::U8, &[1], vec![5])], ..Raw::default() }
            .encode(),
    ));
    let newer = Raw {
        minor: 1,
        entries: vec![RawEntry { dtype: 300, ..RawEntry::new("future", Dtype::U8, &[4], vec![1, 2, 3]) }],
        ..Raw::default()
    }
    .encode();
    v.push(valid(
        "nested-newer-minor",
        "a minor-0 container nesting a minor-1 container with an unknown dtype: each header governs its own container",
        Raw { entries: vec![RawEntry::new("inner", Dtype::Container, &[newer.len() as u64], newer)], ..Raw::default() }.encode(),
    ));
    v.push(valid(
        "trailing-empty",
        "the last entry is empty, so the payload section ends with its padding",
        Raw {
            entries: vec![
                RawEntry::new("a", Dtype::U8, &[3], vec![1, 2, 3]),
                RawEntry::new("b", Dtype::F32, &[0], Vec::new()),
            ],
            ..Raw::default()
        }
        .encode(),
    ));
    v.push(valid(
        "payload-not-interpreted",
        "a BOOL byte of 7 and a NaN scale: payload bytes are never validated, only checksummed",
        Raw {
            entries: vec![
                RawEntry::new("flags", Dtype::Bool, &[3], vec![0, 1, 7]),
                RawEntry::new("q", Dtype::Q8_0, &[32], {
                    let mut q = vec![0xff, 0x7f];
                    q.extend([1u8; 32]);
                    q
                }),
            ],
            ..Raw::default()
        }
        .encode(),
    ));
    v
}

fn build_invalid() -> Vec<Case> {
    use Rule::*;
    let n = base().entries.len();
    vec![
        invalid(TooShort, "100-bytes", "the first 100 bytes of a container", base().encode()[..100].to_vec()),
        invalid(TooShort, "empty-input", "zero bytes", Vec::new()),
        invalid(
            BadMagic,
            "high-bit-stripped",
            "the magic's first byte lost its high bit (a 7-bit transfer)",
            patched(|b| b[0] = 0x09),
        ),
        invalid(BadMagic, "crlf-to-lf", "the magic's CR LF became LF (text-mode conversion)", {
            let mut b = base().encode();
            b.remove(4);
            b
        }),
        invalid(
            UnsupportedVersion,
            "major-2",
            "a newer major version",
            patched(|b| header_mut(b).version_major = U16::new(2)),
        ),
        invalid(
            HeaderLength,
            "not-160-in-minor-0",
            "header_len 224 in a minor-0 file, everything else consistent",
            model(|r| r.header_len = 224),
        ),
        invalid(
            HeaderLength,
            "not-multiple-of-8",
            "header_len 164",
            model(|r| {
                r.minor = 1;
                r.header_len = 164
            }),
        ),
        invalid(
            UnknownIncompatFlags,
            "bit0",
            "an incompatible flag no 1.0 reader implements",
            patched(|b| header_mut(b).incompat_flags = U64::new(1)),
        ),
        invalid(
            DescriptorLength,
            "112",
            "descriptor_len 112",
            patched(|b| header_mut(b).descriptor_len = U32::new(112)),
        ),
        invalid(
            ReservedNonZero,
            "header",
            "a reserved header byte set",
            patched(|b| header_mut(b).reserved[3] = 1),
        ),
        invalid(Truncated, "last-byte", "the container minus its last byte", {
            let mut b = base().encode();
            b.pop();
            b
        }),
        invalid(
            Truncated,
            "header-len-past-end",
            "a minor-1 header claiming 4096 bytes in a 1.7 KB file",
            patched(|b| {
                let h = header_mut(b);
                h.version_minor = U16::new(1);
                h.header_len = U32::new(4096);
            }),
        ),
        invalid(TrailingBytes, "one-byte", "one byte after the declared end (a polyglot trailer)", {
            let mut b = base().encode();
            b.push(0);
            b
        }),
        invalid(
            SectionBounds,
            "names-wraps-u64",
            "the name pool's offset + length wraps u64",
            patched(|b| header_mut(b).sections[2].length = U64::new(u64::MAX - 100)),
        ),
        invalid(
            SectionBounds,
            "table-beyond-file",
            "the table's length runs past the end",
            patched(|b| header_mut(b).sections[0].length = U64::new(1 << 40)),
        ),
        invalid(
            SectionLayout,
            "index-gap",
            "the index does not start where the table ends",
            patched(|b| {
                let s = &mut header_mut(b).sections[1];
                s.offset = U64::new(s.offset.get() + 4);
                s.length = U64::new(s.length.get() - 4);
            }),
        ),
        invalid(
            SectionLength,
            "entry-count",
            "entry_count is one more than the table holds",
            patched(|b| {
                let h = header_mut(b);
                h.entry_count = U32::new(h.entry_count.get() + 1)
            }),
        ),
        invalid(
            SectionLength,
            "count-times-size-wraps-u32",
            "entry_count 0xFFFFFFFF: count × 104 wraps a u32 to a small number",
            patched(|b| header_mut(b).entry_count = U32::new(u32::MAX)),
        ),
        invalid(
            HeaderChecksum,
            "name-bit-flip",
            "one bit of a name flipped after the checksum was computed",
            damaged(|b| {
                let (names, _) = section(b, 2);
                b[names] ^= 0x20;
            }),
        ),
        invalid(
            TrailerChecksum,
            "last-value",
            "the trailer's own checksum altered",
            damaged(|b| {
                let at = b.len() - 1;
                b[at] ^= 1;
            }),
        ),
        invalid(
            NameBounds,
            "last-name-past-pool",
            "the last name runs one byte past the pool",
            patched(move |b| {
                let d = descriptor_mut(b, n - 1);
                d.name_len = U32::new(d.name_len.get() + 1);
            }),
        ),
        invalid(
            NamePoolLayout,
            "names-swapped",
            "the first two names are stored in swapped order",
            patched(|b| {
                let (names, _) = section(b, 2);
                let (d0, d1) = (descriptor(b, 0), descriptor(b, 1));
                let (l0, l1) = (d0.name_len.get() as usize, d1.name_len.get() as usize);
                let first: Vec<u8> = b[names..names + l0].to_vec();
                let second: Vec<u8> = b[names + l0..names + l0 + l1].to_vec();
                b[names..names + l1].copy_from_slice(&second);
                b[names + l1..names + l0 + l1].copy_from_slice(&first);
                descriptor_mut(b, 0).name_offset = U32::new(l1 as u32);
                descriptor_mut(b, 1).name_offset = U32::new(0);
            }),
        ),
        invalid(NameLength, "empty", "an empty name", model(|r| r.entries[5].name.clear())),
        invalid(
            NameLength,
            "1025-bytes",
            "a name of 1025 bytes",
            model(|r| r.entries[5].name = vec![b'x'; 1025]),
        ),
        invalid(
            NameUtf8,
            "ff-byte",
            "a name with a 0xFF byte",
            model(|r| r.entries[5].name = b"bad\xffname".to_vec()),
        ),
        invalid(
            IndexRange,
            "value-n",
            "an index value equal to the entry count",
            patched(move |b| {
                let (index, _) = section(b, 1);
                b[index..index + 4].copy_from_slice(&(n as u32).to_le_bytes());
            }),
        ),
        invalid(
            IndexRange,
            "repeated",
            "an index listing one entry twice",
            patched(|b| {
                let (index, _) = section(b, 1);
                let first: [u8; 4] = b[index..index + 4].try_into().unwrap();
                b[index + 4..index + 8].copy_from_slice(&first);
            }),
        ),
        invalid(
            IndexOrder,
            "swapped",
            "the first two index slots swapped",
            patched(|b| {
                let (index, _) = section(b, 1);
                let first: [u8; 4] = b[index..index + 4].try_into().unwrap();
                b.copy_within(index + 4..index + 8, index);
                b[index + 4..index + 8].copy_from_slice(&first);
            }),
        ),
        invalid(
            DuplicateName,
            "two-entries",
            "two entries named embed.weight",
            model(|r| r.entries[5].name = b"embed.weight".to_vec()),
        ),
        invalid(
            UnknownDtype,
            "code-99",
            "dtype code 99 in a minor-0 file",
            model(|r| r.entries[5].dtype = 99),
        ),
        invalid(UnknownDtype, "code-0", "dtype code 0", model(|r| r.entries[5].dtype = 0)),
        invalid(RankTooLarge, "rank-9", "rank 9", model(|r| r.entries[0].rank = 9)),
        invalid(
            UnusedDimNonZero,
            "dim5",
            "dims[5] set on a rank-2 entry",
            model(|r| r.entries[0].dims[5] = 1),
        ),
        invalid(
            ShapeOverflow,
            "dims-2p63-by-2",
            "shape [2^63, 2]: the element count wraps u64",
            model(|r| r.entries[0].dims[..2].copy_from_slice(&[1 << 63, 2])),
        ),
        invalid(
            ShapeOverflow,
            "bytes-wrap",
            "shape [2^62 + 1] of F32: the byte length wraps u64",
            model(|r| {
                r.entries[0].rank = 1;
                r.entries[0].dims = [(1 << 62) + 1, 0, 0, 0, 0, 0, 0, 0];
            }),
        ),
        invalid(
            BlockShape,
            "q8-inner-31",
            "a Q8_0 entry whose innermost dimension is 31",
            model(|r| r.entries[2].dims[1] = 31),
        ),
        invalid(
            BlockShape,
            "q8-scalar",
            "a rank-0 Q8_0 entry",
            model(|r| {
                r.entries[2].rank = 0;
                r.entries[2].dims = [0; 8];
            }),
        ),
        invalid(
            ByteShape,
            "raw-rank-2",
            "a RAW entry of rank 2",
            model(|r| {
                r.entries[CODE].rank = 2;
                r.entries[CODE].dims[..2].copy_from_slice(&[10, 10]);
            }),
        ),
        invalid(
            LengthMismatch,
            "short-payload",
            "an F32 [4, 8] entry with 124 bytes",
            model(|r| r.entries[0].data.truncate(124)),
        ),
        invalid(
            LengthMismatch,
            "zero-dim-nonzero-length",
            "a zero-size shape with a 4-byte payload",
            model(|r| r.entries[5].data = vec![0; 4]),
        ),
        invalid(BadAlignment, "zero", "alignment 0", model(|r| r.entries[CODE].alignment = 0)),
        invalid(BadAlignment, "three", "alignment 3", model(|r| r.entries[CODE].alignment = 3)),
        invalid(BadAlignment, "2p31", "alignment 2^31", model(|r| r.entries[CODE].alignment = 1 << 31)),
        invalid(
            Misaligned,
            "offset-plus-1",
            "an offset one past a 64-byte boundary",
            patched(|b| {
                let d = descriptor_mut(b, 0);
                d.offset = U64::new(d.offset.get() + 1);
            }),
        ),
        invalid(EntryFlags, "unknown-bit", "entry flag bit 1 set", model(|r| r.entries[0].flags = 2)),
        invalid(
            EntryFlags,
            "target-without-flag",
            "a target address without HAS_TARGET",
            model(|r| r.entries[0].target = 0x1000),
        ),
        invalid(
            TargetOverflow,
            "past-2p64",
            "target + length exceeds 2^64",
            model(|r| r.entries[CODE].target = u64::MAX - 50),
        ),
        invalid(
            PayloadBounds,
            "offset-wraps",
            "offset + length wraps u64",
            patched(|b| descriptor_mut(b, CODE).offset = U64::new(u64::MAX - 40)),
        ),
        invalid(
            PayloadBounds,
            "into-trailer",
            "a payload that runs into the trailer",
            patched(|b| {
                let (trailer, _) = section(b, 5);
                descriptor_mut(b, CODE).offset = U64::new(trailer as u64 - 50);
            }),
        ),
        invalid(
            PayloadBounds,
            "over-table",
            "a payload placed on top of the table",
            patched(|b| {
                let (table, _) = section(b, 0);
                descriptor_mut(b, CODE).offset = U64::new(table as u64);
            }),
        ),
        invalid(
            PayloadOrder,
            "before-previous",
            "a payload that starts before the previous one",
            patched(|b| {
                let previous = descriptor(b, CODE - 1).offset.get();
                descriptor_mut(b, CODE).offset = U64::new(previous - 1);
            }),
        ),
        invalid(
            PayloadOverlap,
            "inside-previous",
            "a payload that starts inside the previous one",
            patched(|b| {
                let previous = descriptor(b, CODE - 1).offset.get();
                descriptor_mut(b, CODE).offset = U64::new(previous + 1);
            }),
        ),
        invalid(
            PaddingNotMinimal,
            "one-byte-gap",
            "a payload one byte later than the smallest aligned offset",
            patched(|b| {
                let d = descriptor_mut(b, CODE);
                d.offset = U64::new(d.offset.get() + 1);
            }),
        ),
        invalid(
            PaddingNonZero,
            "between-payloads",
            "a non-zero padding byte",
            patched(|b| {
                let d = descriptor(b, CODE);
                let end = (d.offset.get() + d.length.get()) as usize;
                assert!(descriptor(b, CODE + 1).offset.get() as usize > end);
                b[end] = 0x55;
            }),
        ),
        invalid(NestingTooDeep, "depth-9", "containers nested 9 deep", nested_chain(10)),
        invalid(
            NestedInvalid,
            "bad-magic",
            "a CONTAINER entry whose payload is not a container",
            model(|r| {
                let junk = pattern(200, 1);
                r.entries.push(RawEntry::new("sub", Dtype::Container, &[200], junk));
            }),
        ),
        invalid(
            NestedInvalid,
            "inner-rule",
            "a nested container with a duplicate name",
            model(|r| {
                let mut inner = base();
                inner.entries[5].name = b"embed.weight".to_vec();
                let inner = inner.encode();
                r.entries.push(RawEntry::new("sub", Dtype::Container, &[inner.len() as u64], inner));
            }),
        ),
        invalid(
            MetaBounds,
            "records-past-section",
            "meta_count far larger than the section holds",
            patched(|b| header_mut(b).meta_count = U32::new(1000)),
        ),
        invalid(
            MetaBounds,
            "value-past-pool",
            "the last value runs one byte past the pool",
            model(|r| {
                let last = r.meta.iter_mut().max_by(|a, b| a.key.cmp(&b.key)).unwrap();
                last.value_len = Some(last.bytes.len() as u32 + 1);
            }),
        ),
        invalid(
            MetaPoolLayout,
            "trailing-byte",
            "a pool byte after the last value",
            model(|r| r.extra_pool = vec![0]),
        ),
        invalid(MetaKeyLength, "empty", "an empty key", model(|r| r.meta[1].key.clear())),
        invalid(
            MetaKeyUtf8,
            "ff-byte",
            "a key with a 0xFF byte",
            model(|r| r.meta[1].key = b"lay\xffers".to_vec()),
        ),
        invalid(
            MetaKeyOrder,
            "reversed",
            "records in descending key order",
            model(|r| {
                r.meta.sort_by(|a, b| b.key.cmp(&a.key));
                r.sort_meta = false;
            }),
        ),
        invalid(
            MetaDuplicateKey,
            "two-records",
            "two records with key 'layers'",
            model(|r| r.meta[2].key = b"layers".to_vec()),
        ),
        invalid(
            MetaUnknownType,
            "code-99",
            "value type 99 in a minor-0 file",
            model(|r| r.meta[1].value_type = 99),
        ),
        invalid(
            MetaValueShape,
            "reserved",
            "a record's reserved byte set",
            model(|r| r.meta[1].reserved = 1),
        ),
        invalid(
            MetaValueShape,
            "scalar-with-len",
            "a u64 record with value_len 8",
            model(|r| r.meta[1].value_len = Some(8)),
        ),
        invalid(
            MetaValueShape,
            "array-len-7",
            "a u64[] value of 7 bytes",
            model(|r| r.meta[6].bytes.truncate(7)),
        ),
        invalid(
            MetaValueShape,
            "string-array-framing",
            "a string[] item whose length runs past the value",
            model(|r| {
                r.meta[7].bytes = string_array(&[b"ab"]);
                r.meta[7].bytes[0] = 9;
            }),
        ),
        invalid(
            MetaValueShape,
            "inline-on-variable",
            "a string record with a non-zero inline value",
            model(|r| r.meta[0].value = 1),
        ),
        invalid(MetaBool, "two", "a bool of value 2", model(|r| r.meta[4].value = 2)),
        invalid(
            MetaUtf8,
            "string",
            "a string value with a 0xFF byte",
            model(|r| r.meta[0].bytes = b"to\xffy".to_vec()),
        ),
        invalid(
            MetaUtf8,
            "string-array-item",
            "a string[] item with a lone continuation byte",
            model(|r| {
                r.meta[7].bytes = string_array(&[b"ok", b"\x80"]);
            }),
        ),
        invalid(
            EntryChecksum,
            "payload-bit-flip",
            "one payload bit flipped after the checksums were computed",
            damaged(|b| {
                let d = descriptor(b, 0);
                b[d.offset.get() as usize + 5] ^= 0x01;
            }),
        ),
        invalid(
            ShapeOverflow,
            "partial-product",
            "shape [2^40, 2^40, 0]: a partial product overflows although the count is 0",
            model(|r| {
                r.entries[5].dtype = Dtype::U8.code();
                r.entries[5].rank = 3;
                r.entries[5].dims[..3].copy_from_slice(&[1 << 40, 1 << 40, 0]);
            }),
        ),
        invalid(
            ShapeOverflow,
            "q8-blocks-times-bytes",
            "Q8_0 shape [2^64 - 32]: (count / 32) x 34 overflows",
            model(|r| {
                r.entries[2].rank = 1;
                r.entries[2].dims = [u64::MAX - 31, 0, 0, 0, 0, 0, 0, 0];
            }),
        ),
        invalid(
            MetaValueShape,
            "unknown-type-reserved",
            "a minor-1 record of unknown type with its reserved byte set",
            model(|r| {
                r.minor = 1;
                r.meta[5].value_type = 77;
                r.meta[5].reserved = 1;
            }),
        ),
        invalid(
            MetaValueShape,
            "unknown-type-inline-value",
            "a minor-1 record of unknown type with a non-zero inline value",
            model(|r| {
                r.minor = 1;
                r.meta[5].value_type = 77;
                r.meta[5].value = 9;
            }),
        ),
        invalid(
            MetaPoolLayout,
            "empty-value-at-0",
            "an empty string value whose value_offset is 0 instead of the running position",
            model(|r| {
                r.meta[0].bytes.clear();
                r.meta[0].value_offset = Some(0);
            }),
        ),
        invalid(IndexOrder, "not-a-permutation", "index [0, 1, 0] over names a, b, c", {
            let mut b = Raw {
                entries: ["a", "b", "c"].iter().map(|n| RawEntry::new(n, Dtype::U8, &[1], vec![1])).collect(),
                ..Raw::default()
            }
            .encode();
            let (index, _) = section(&b, 1);
            b[index + 8..index + 12].copy_from_slice(&0u32.to_le_bytes());
            fix(&mut b);
            b
        }),
        invalid(
            NameUtf8,
            "surrogate",
            "a name holding an encoded surrogate, ED A0 80",
            model(|r| r.entries[5].name = b"s\xed\xa0\x80".to_vec()),
        ),
        invalid(
            NameUtf8,
            "overlong",
            "a name holding an overlong encoding of '/', C0 AF",
            model(|r| r.entries[5].name = b"o\xc0\xaf".to_vec()),
        ),
        invalid(
            NestingTooDeep,
            "garbage-at-depth-9",
            "a depth-8 container whose CONTAINER payload is not even a container",
            {
                let junk = pattern(64, 3);
                let mut inner = Raw {
                    entries: vec![RawEntry::new("deeper", Dtype::Container, &[64], junk)],
                    ..Raw::default()
                }
                .encode();
                for level in (0..8).rev() {
                    let len = inner.len() as u64;
                    inner = Raw {
                        entries: vec![RawEntry::new(
                            &format!("level{}", level + 1),
                            Dtype::Container,
                            &[len],
                            inner,
                        )],
                        ..Raw::default()
                    }
                    .encode();
                }
                inner
            },
        ),
        invalid(
            PaddingNonZero,
            "nested",
            "a non-zero padding byte inside a nested container: reported as R37, not R39",
            {
                let mut inner = base().encode();
                let d = descriptor(&inner, CODE);
                inner[(d.offset.get() + d.length.get()) as usize] = 0x55;
                fix(&mut inner);
                Raw {
                    entries: vec![RawEntry::new("sub", Dtype::Container, &[inner.len() as u64], inner)],
                    ..Raw::default()
                }
                .encode()
            },
        ),
        invalid(
            EntryChecksum,
            "nested-payload",
            "a nested container's payload does not match the nested trailer, though the outer checksum does",
            {
                let mut inner = base().encode();
                let d = descriptor(&inner, 0);
                inner[d.offset.get() as usize] ^= 0x10;
                Raw {
                    entries: vec![RawEntry::new("sub", Dtype::Container, &[inner.len() as u64], inner)],
                    ..Raw::default()
                }
                .encode()
            },
        ),
    ]
}
