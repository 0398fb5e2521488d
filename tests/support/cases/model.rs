//! The model every invalid vector edits, and the ways of editing it: at the model (`model`), at the bytes
//! with checksums recomputed (`patched`), or at the bytes after the checksums (`damaged`).

use tpack::zerocopy::little_endian::U64;
use tpack::{Dtype, MetaType, Rule};

use super::super::raw::*;
use super::Case;

pub fn f32s(n: usize) -> Vec<u8> {
    (0..n).flat_map(|i| (i as f32 * 0.5 - 3.0).to_le_bytes()).collect()
}

pub fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Q8_0 blocks: an f16 scale (1.0 = 0x3C00) then 32 signed bytes.
pub fn q8_0(blocks: usize) -> Vec<u8> {
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
            RawEntry::new("boot.code", Dtype::RAW, &[100], pattern(100, 7)).align(1).target(0x2000_0000),
            RawEntry::new("norm.eps", Dtype::F64, &[], 1e-5f64.to_le_bytes().to_vec()),
            RawEntry::new("empty", Dtype::I32, &[0, 5], Vec::new()),
        ],
        meta: vec![
            RawMeta::pooled("arch", MetaType::STRING, b"toy-mlp".to_vec()),
            RawMeta::inline("layers", MetaType::U64, 1),
            RawMeta::inline("bias", MetaType::I64, (-3i64) as u64),
            RawMeta::inline("eps", MetaType::F64, 1e-5f64.to_bits()),
            RawMeta::inline("trained", MetaType::BOOL, 1),
            RawMeta::pooled("blob", MetaType::BYTES, vec![0, 1, 2, 0xff]),
            RawMeta::pooled("ids", MetaType::U64_ARRAY, words(&[1u64, 2, 3], |v| v)),
            RawMeta::pooled(
                "vocab",
                MetaType::STRING_ARRAY,
                string_array(&[b"<s>", b"hello", "wörld".as_bytes()]),
            ),
        ],
        ..Raw::default()
    }
}

/// Index of the RAW entry with alignment 1 in `base()`.
pub const CODE: usize = 3;

pub fn valid(name: &str, description: &'static str, bytes: Vec<u8>) -> Case {
    Case { name: name.to_owned(), rule: None, description, bytes, checks: Vec::new() }
}

pub fn invalid(rule: Rule, slug: &str, description: &'static str, bytes: Vec<u8>) -> Case {
    Case { name: format!("{}-{slug}", rule.id()), rule: Some(rule), description, bytes, checks: Vec::new() }
}

/// Encodes `base()` after `edit` has changed the model.
pub fn model(edit: impl FnOnce(&mut Raw)) -> Vec<u8> {
    let mut raw = base();
    edit(&mut raw);
    raw.encode()
}

/// Encodes `base()`, patches the bytes, and recomputes every checksum.
pub fn patched(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = base().encode();
    edit(&mut bytes);
    fix(&mut bytes);
    bytes
}

/// Encodes `base()` and patches the bytes without recomputing checksums.
pub fn damaged(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = base().encode();
    edit(&mut bytes);
    bytes
}

/// Encodes `base()` and patches its index section (checksums recomputed).
pub fn index_patched(edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    patched(|b| {
        let (index, len) = section(b, 1);
        edit(&mut b[index..index + len]);
    })
}

/// Encodes `base()` with the payload of `entry` moved one byte later (checksums recomputed).
pub fn offset_plus_one(entry: usize) -> Vec<u8> {
    patched(|b| {
        let d = descriptor_mut(b, entry);
        d.offset = U64::new(d.offset.get() + 1);
    })
}

/// A container of just these entries.
pub fn of_entries(entries: Vec<RawEntry>) -> Vec<u8> {
    Raw { entries, ..Raw::default() }.encode()
}

/// A CONTAINER entry holding `inner`.
pub fn container(name: &str, inner: Vec<u8>) -> RawEntry {
    RawEntry::new(name, Dtype::CONTAINER, &[inner.len() as u64], inner)
}

/// `inner` wrapped in `wraps` containers, each holding the next as its one entry `level1`, `level2`, …
pub fn wrapped(mut inner: Vec<u8>, wraps: usize) -> Vec<u8> {
    for level in (0..wraps).rev() {
        inner = of_entries(vec![container(&format!("level{}", level + 1), inner)]);
    }
    inner
}

/// A chain of `levels` containers, each holding the next as a CONTAINER entry; the innermost holds one F32.
pub fn nested_chain(levels: usize) -> Vec<u8> {
    wrapped(of_entries(vec![RawEntry::new("leaf", Dtype::F32, &[2], f32s(2))]), levels - 1)
}

/// An `array[]` item: its type, three zero bytes, its length, its value (spec §7.1, format 1.1).
pub fn array_item(value_type: MetaType, body: &[u8]) -> Vec<u8> {
    let mut out = vec![value_type.code(), 0, 0, 0];
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// An `array[]` value of `levels` levels, the innermost holding one empty `u8[]`.
pub fn nested_arrays(levels: usize) -> Vec<u8> {
    let mut value = array_item(MetaType::U8_ARRAY, &[]);
    for _ in 1..levels {
        value = array_item(MetaType::ARRAY_ARRAY, &value);
    }
    value
}

/// The block geometry item for the block dtypes `entries` use (none if they use none), as a 1.1 writer
/// records it (spec §11.1).
pub fn geometry_of(entries: &[RawEntry]) -> Vec<u8> {
    let records = block_records(entries);
    if records.is_empty() {
        Vec::new()
    } else {
        geometry(&records)
    }
}

/// A format 1.1 model: GGUF K-quants and other 1.1 dtypes with their geometry, and every 1.1 metadata type.
/// Invalid 1.1 vectors are small edits of it.
pub fn base_1_1() -> Raw {
    let entries = vec![
        RawEntry::new("blk.0.attn_q.weight", Dtype::Q4_K, &[2, 256], pattern(2 * 144, 11)),
        RawEntry::new("blk.0.ffn_down.weight", Dtype::Q6_K, &[256], pattern(210, 12)),
        RawEntry::new("blk.0.ffn_gate.weight", Dtype::Q5_0, &[2, 32], pattern(2 * 22, 13)),
        RawEntry::new("blk.0.ffn_up.weight", Dtype::IQ4_NL, &[32], pattern(18, 14)),
        RawEntry::new("blk.0.attn_k.weight", Dtype::MXFP4, &[64], pattern(2 * 17, 15)),
        RawEntry::new("output.weight", Dtype::Q8_0, &[32], q8_0(1)),
        RawEntry::new("output_norm.weight", Dtype::F32, &[4], f32s(4)),
        RawEntry::new("fp4", Dtype::F4E2M1, &[2, 4], pattern(4, 16)),
        RawEntry::new("z", Dtype::C64, &[2], f32s(4)),
    ];
    let u16s: Vec<u8> = [1u16, 65535].iter().flat_map(|v| v.to_le_bytes()).collect();
    let i16s: Vec<u8> = [-2i16, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    let u32s: Vec<u8> = [7u32, 0xFFFF_FFFF].iter().flat_map(|v| v.to_le_bytes()).collect();
    let i32s: Vec<u8> = [-7i32, 9].iter().flat_map(|v| v.to_le_bytes()).collect();
    let f32s_bits: Vec<u8> = [0x7F80_0001u32, 0x3F80_0000].iter().flat_map(|v| v.to_le_bytes()).collect();
    let nested = [
        array_item(MetaType::U32_ARRAY, &u32s),
        array_item(MetaType::STRING_ARRAY, &string_array(&[b"a", b"bc"])),
        array_item(MetaType::ARRAY_ARRAY, &array_item(MetaType::BOOL_ARRAY, &[1, 0, 1])),
    ]
    .concat();
    Raw {
        minor: 1,
        extension: geometry_of(&entries),
        entries,
        meta: vec![
            RawMeta::pooled("general.alignment", MetaType::U32, 32u32.to_le_bytes().to_vec()),
            RawMeta::pooled("general.architecture", MetaType::STRING, b"llama".to_vec()),
            RawMeta::pooled("t.u8", MetaType::U8, vec![200]),
            RawMeta::pooled("t.i8", MetaType::I8, vec![0x80]),
            RawMeta::pooled("t.u16", MetaType::U16, 513u16.to_le_bytes().to_vec()),
            RawMeta::pooled("t.i16", MetaType::I16, (-513i16).to_le_bytes().to_vec()),
            RawMeta::pooled("t.i32", MetaType::I32, (-70000i32).to_le_bytes().to_vec()),
            RawMeta::pooled("t.f32", MetaType::F32, 0x7F80_0001u32.to_le_bytes().to_vec()),
            RawMeta::pooled("t.u8[]", MetaType::U8_ARRAY, vec![1, 2, 255]),
            RawMeta::pooled("t.i8[]", MetaType::I8_ARRAY, vec![0xFF, 1]),
            RawMeta::pooled("t.u16[]", MetaType::U16_ARRAY, u16s),
            RawMeta::pooled("t.i16[]", MetaType::I16_ARRAY, i16s),
            RawMeta::pooled("t.u32[]", MetaType::U32_ARRAY, u32s.clone()),
            RawMeta::pooled("t.i32[]", MetaType::I32_ARRAY, i32s),
            RawMeta::pooled("t.f32[]", MetaType::F32_ARRAY, f32s_bits),
            RawMeta::pooled("t.bool[]", MetaType::BOOL_ARRAY, vec![1, 0, 0, 1]),
            RawMeta::pooled("t.array[]", MetaType::ARRAY_ARRAY, nested),
            RawMeta::pooled("t.empty[]", MetaType::ARRAY_ARRAY, Vec::new()),
        ],
        ..Raw::default()
    }
}

/// Makes `raw` a file of minor version 3, newer than this crate's reader, with the geometry records a 1.1
/// writer would give its block entries, so that it breaks no 1.1 rule (R53) by being newer.
pub fn as_minor_3(raw: &mut Raw) {
    raw.minor = 3;
    raw.extension = geometry_of(&raw.entries);
}

/// Encodes `base_1_1()` after `edit` has changed the model.
pub fn model_1_1(edit: impl FnOnce(&mut Raw)) -> Vec<u8> {
    let mut raw = base_1_1();
    edit(&mut raw);
    raw.encode()
}
