//! GGUF files written by hand from gguf.md, for what gguf-py will not write (hostile counts, keys it refuses, a
//! type its table gets wrong). Little-endian only. Shared with the CLI's tests (cli/tests/common), which include
//! this file by its path.

#![allow(dead_code)]

/// A little-endian GGUF file, written field by field.
pub struct HandMadeGguf {
    pub bytes: Vec<u8>,
}

impl HandMadeGguf {
    /// The header: the magic, version 3, and how many tensor infos and metadata pairs follow it.
    pub fn v3(tensors: u64, pairs: u64) -> Self {
        let mut gguf = Self { bytes: b"GGUF".to_vec() };
        gguf.u32(3).u64(tensors).u64(pairs);
        gguf
    }

    /// A `gguf_string_t`: its length as a `uint64_t`, then its bytes.
    pub fn string(&mut self, s: &str) -> &mut Self {
        self.u64(s.len().try_into().unwrap());
        self.bytes.extend(s.as_bytes());
        self
    }

    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.bytes.extend(v.to_le_bytes());
        self
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes.extend(v.to_le_bytes());
        self
    }

    /// Zeros up to the next multiple of `alignment`: the padding before the tensor data, and after it.
    pub fn pad_to(&mut self, alignment: usize) -> &mut Self {
        self.bytes.resize(self.bytes.len().next_multiple_of(alignment), 0);
        self
    }
}
