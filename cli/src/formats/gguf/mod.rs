//! GGUF, parsed by the `tpack-gguf` crate and written here. What is tpack's business: which tpack dtype each
//! GGML type is ([`from_ggml`], one to one), the metadata keys tpack reserves to rebuild a GGUF file byte for
//! byte ([`KEY_ORDER`], [`VERSION`], [`BIG_ENDIAN`], [`UNPADDED`]), and the layout both directions share ([`layout`]).
//!
//! - `import`: GGUF → tpack, exact metadata types, the key order and version recorded.
//! - `export`: tpack → GGUF, one file or llama.cpp-style splits.
//! - `encode`: the bytes of a GGUF header (metadata and tensor infos), which the import also uses to tell
//!   whether a file will come back byte for byte.

use tpack::Dtype;
use tpack_gguf::{GgmlType, MAGIC};

mod encode;
mod export;
mod import;

pub(crate) use import::{entries, parse};

/// The GGUF format.
#[derive(Debug)]
pub(crate) struct Gguf;

/// Whether `head` starts with the GGUF magic (the same in either byte order).
pub(crate) fn sniff(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

/// The prefix of the metadata keys tpack reserves for what a GGUF file needs besides its metadata. A GGUF
/// file with a key of its own under it is refused: it could not be told from tpack's record.
pub(crate) const RESERVED_PREFIX: &str = "gguf.";

/// `string[]`: the GGUF metadata keys in file order (tpack stores metadata sorted by key).
pub(crate) const KEY_ORDER: &str = "gguf.key_order";

/// `u32`: the GGUF version of the file (2 or 3).
pub(crate) const VERSION: &str = "gguf.version";

/// `bool`, present (and `true`) only for a big-endian file: every number in it, tensor elements included, is
/// big-endian (gguf-py's `GGUFWriter(endianess=BIG)`); tpack holds the tensors little-endian.
pub(crate) const BIG_ENDIAN: &str = "gguf.big_endian";

/// `bool`, present (and `true`) only for a file with no tensors that ends at its tensor infos, with no padding
/// to the alignment after them: llama.cpp's converters write vocabulary files so (`--vocab-only`: gguf-py's
/// `write_kv_data_to_file` and no `write_tensors_to_file`), while llama.cpp's own writer and gguf-py's
/// `write_tensors_to_file` pad. Written back, the file is then not padded either.
pub(crate) const UNPADDED: &str = "gguf.unpadded";

/// The reserved keys, as messages list them.
pub(crate) const RESERVED_KEYS: &str = "gguf.key_order, gguf.version, gguf.big_endian, gguf.unpadded";

/// The GGUF version written when none is recorded: the current one, as gguf-py and llama.cpp write.
pub(crate) const DEFAULT_VERSION: u32 = 3;

/// The versions `tpack-gguf` reads, which share one layout.
pub(crate) const VERSIONS: [u32; 2] = [2, 3];

/// llama.cpp's split keys (`LLM_KV_SPLIT_*` in llama-arch.cpp; gguf-py's `Keys.Split`): this shard's index
/// from 0 (`u16`), the number of shards (`u16`), the tensors in all shards (`i32`).
pub(crate) const SPLIT_NO: &str = "split.no";
/// See [`SPLIT_NO`].
pub(crate) const SPLIT_COUNT: &str = "split.count";
/// See [`SPLIT_NO`].
pub(crate) const SPLIT_TENSORS_COUNT: &str = "split.tensors.count";

/// ggml's `GGML_MAX_NAME`: llama.cpp refuses to load a file with a tensor name this long or longer.
pub(crate) const GGML_MAX_NAME: usize = 64;

/// The tpack dtype of a GGML tensor type: every GGML type has one, with the same name, block geometry and
/// bytes (format 1.1, spec §4.1). `Q8_1` is ggml's 36-byte block (gguf-py's table says 40; see spec §3.4).
#[must_use]
pub(crate) fn from_ggml(t: GgmlType) -> Dtype {
    match t {
        GgmlType::F32 => Dtype::F32,
        GgmlType::F16 => Dtype::F16,
        GgmlType::Q4_0 => Dtype::Q4_0,
        GgmlType::Q4_1 => Dtype::Q4_1,
        GgmlType::Q5_0 => Dtype::Q5_0,
        GgmlType::Q5_1 => Dtype::Q5_1,
        GgmlType::Q8_0 => Dtype::Q8_0,
        GgmlType::Q8_1 => Dtype::Q8_1,
        GgmlType::Q2_K => Dtype::Q2_K,
        GgmlType::Q3_K => Dtype::Q3_K,
        GgmlType::Q4_K => Dtype::Q4_K,
        GgmlType::Q5_K => Dtype::Q5_K,
        GgmlType::Q6_K => Dtype::Q6_K,
        GgmlType::Q8_K => Dtype::Q8_K,
        GgmlType::IQ2_XXS => Dtype::IQ2_XXS,
        GgmlType::IQ2_XS => Dtype::IQ2_XS,
        GgmlType::IQ3_XXS => Dtype::IQ3_XXS,
        GgmlType::IQ1_S => Dtype::IQ1_S,
        GgmlType::IQ4_NL => Dtype::IQ4_NL,
        GgmlType::IQ3_S => Dtype::IQ3_S,
        GgmlType::IQ2_S => Dtype::IQ2_S,
        GgmlType::IQ4_XS => Dtype::IQ4_XS,
        GgmlType::I8 => Dtype::I8,
        GgmlType::I16 => Dtype::I16,
        GgmlType::I32 => Dtype::I32,
        GgmlType::I64 => Dtype::I64,
        GgmlType::F64 => Dtype::F64,
        GgmlType::IQ1_M => Dtype::IQ1_M,
        GgmlType::BF16 => Dtype::BF16,
        GgmlType::TQ1_0 => Dtype::TQ1_0,
        GgmlType::TQ2_0 => Dtype::TQ2_0,
        GgmlType::MXFP4 => Dtype::MXFP4,
        GgmlType::NVFP4 => Dtype::NVFP4,
        GgmlType::Q1_0 => Dtype::Q1_0,
    }
}

/// The GGML type of a tpack dtype, if GGUF has it: the inverse of [`from_ggml`].
#[must_use]
pub(crate) fn to_ggml(d: Dtype) -> Option<GgmlType> {
    GgmlType::ALL.iter().copied().find(|&t| from_ggml(t) == d)
}

/// GGUF's data layout, as gguf-py's `GGUFWriter` and llama.cpp's `gguf_write_to_file` both write it: the data
/// section starts at the end of the tensor infos (`infos_end`) rounded up to `alignment`; the tensors follow
/// in tensor-info order, each at the next multiple of `alignment`, and each is followed by zero padding to a
/// multiple of `alignment` (the last one too). Returns the data section's start, each tensor's offset
/// within it, and the file's length; `None` on overflow.
#[must_use]
pub(crate) fn layout(infos_end: u64, sizes: &[u64], alignment: u64) -> Option<(u64, Vec<u64>, u64)> {
    let data_start = infos_end.checked_next_multiple_of(alignment)?;
    let mut offsets = Vec::with_capacity(sizes.len());
    let mut at = 0u64;
    for &size in sizes {
        offsets.push(at);
        at = at.checked_add(size)?.checked_next_multiple_of(alignment)?;
    }
    Some((data_start, offsets, data_start.checked_add(at)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpack::Packing;

    /// One to one, with the same name and geometry: the byte sizes are tpack-gguf's (ggml's) and tpack's.
    #[test]
    fn every_ggml_type_is_the_tpack_dtype_of_its_name_and_geometry() {
        let mut seen = std::collections::HashSet::new();
        for &t in GgmlType::ALL {
            let d = from_ggml(t);
            assert!(seen.insert(d), "{t} maps to a dtype another type maps to");
            assert_eq!(d.name(), Some(t.name()), "{t}");
            assert_eq!(to_ggml(d), Some(t), "{t}");
            let geometry = match d.packing() {
                Some(Packing::Element(width)) => (1, width),
                Some(Packing::Block { block_elems, block_bytes }) => (block_elems, block_bytes),
                other => panic!("{t}: {other:?}"),
            };
            assert_eq!(geometry, (t.block_size(), t.type_size()), "{t}");
        }
        for d in [Dtype::U8, Dtype::U16, Dtype::U32, Dtype::U64, Dtype::BOOL, Dtype::RAW, Dtype::CONTAINER] {
            assert_eq!(to_ggml(d), None, "{d}");
        }
    }

    /// ggml's `block_q8_1` is two f16 scales and 32 int8: 36 bytes, not gguf-py's 40.
    #[test]
    fn q8_1_is_ggmls_36_byte_block() {
        assert_eq!(GgmlType::Q8_1.type_size(), 36);
        assert_eq!(Dtype::Q8_1.byte_len(&[2, 64]), Ok(2 * 2 * 36));
    }

    #[test]
    fn the_layout_pads_after_every_tensor() {
        assert_eq!(layout(100, &[60, 68, 10], 64), Some((128, vec![0, 64, 192], 128 + 256)));
        assert_eq!(layout(96, &[], 32), Some((96, vec![], 96)));
        assert_eq!(layout(97, &[0, 1], 32), Some((128, vec![0, 0], 160)));
        assert_eq!(layout(u64::MAX - 3, &[], 32), None);
    }
}
