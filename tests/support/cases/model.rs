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
    Case { name: name.to_owned(), rule: None, description, bytes }
}

pub fn invalid(rule: Rule, slug: &str, description: &'static str, bytes: Vec<u8>) -> Case {
    Case { name: format!("{}-{slug}", rule.id()), rule: Some(rule), description, bytes }
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
