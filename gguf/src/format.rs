//! The on-disk vocabulary of GGUF: its constants, the metadata value type codes and the GGML tensor types
//! with their block and type sizes. Nothing here reads a file.

use core::fmt;

/// The four bytes every GGUF file starts with, whatever its byte order.
pub const MAGIC: [u8; 4] = *b"GGUF";
/// The metadata key that sets the alignment of the data section and of every tensor in it.
pub const ALIGNMENT_KEY: &str = "general.alignment";
/// The alignment when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// The most dimensions a GGML tensor has (`GGML_MAX_DIMS`).
pub const MAX_DIMS: u32 = 4;
/// How deeply metadata arrays may nest: an array of arrays is depth 2. The format sets no bound (ggml reads
/// no nested arrays at all; gguf-py writes them to any depth); the bound keeps the (recursive) parser's stack
/// use fixed. It is 9 so that every array a tpack metadata value holds is read: tpack holds 8 levels of
/// `array[]`, the outermost included, around the arrays of values at the 9th (tpack spec §7.1).
pub const MAX_ARRAY_DEPTH: usize = 9;

// The metadata value type codes (gguf.md `gguf_metadata_value_type`).
pub(crate) const T_U8: u32 = 0;
pub(crate) const T_I8: u32 = 1;
pub(crate) const T_U16: u32 = 2;
pub(crate) const T_I16: u32 = 3;
pub(crate) const T_U32: u32 = 4;
pub(crate) const T_I32: u32 = 5;
pub(crate) const T_F32: u32 = 6;
pub(crate) const T_BOOL: u32 = 7;
pub(crate) const T_STRING: u32 = 8;
pub(crate) const T_ARRAY: u32 = 9;
pub(crate) const T_U64: u32 = 10;
pub(crate) const T_I64: u32 = 11;
pub(crate) const T_F64: u32 = 12;

/// The gguf.md name of metadata value type `code`, or `None` if `code` is not one.
pub fn value_type_name(code: u32) -> Option<&'static str> {
    const NAMES: [&str; 13] = [
        "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array",
        "uint64", "int64", "float64",
    ];
    NAMES.get(usize::try_from(code).ok()?).copied()
}

/// The fewest bytes one value of type `code` occupies in a file (a string's length, an array's element
/// type and count), or `None` if `code` is not a value type. Checked against what is left before any
/// allocation, so that a declared element count cannot make the parser reserve more than the input could
/// fill.
pub(crate) fn min_encoded_size(code: u32) -> Option<u64> {
    Some(match code {
        T_U8 | T_I8 | T_BOOL => 1,
        T_U16 | T_I16 => 2,
        T_U32 | T_I32 | T_F32 => 4,
        T_U64 | T_I64 | T_F64 | T_STRING => 8,
        T_ARRAY => 12,
        _ => return None,
    })
}

macro_rules! ggml_types {
    ($($variant:ident = $code:literal, $block:literal, $size:expr;)*) => {
        /// A GGML tensor type that GGUF files may hold (`enum ggml_type`), with its block and type sizes
        /// from ggml's type traits. Quantized types store blocks of `block_size()` elements in `type_size()`
        /// bytes.
        #[allow(non_camel_case_types)] // the names ggml, llama.cpp and gguf-py use
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(missing_docs)] // each variant is the type ggml names so; the table below gives its sizes
        pub enum GgmlType {
            $($variant,)*
        }

        impl GgmlType {
            /// Every type, in code order.
            pub const ALL: &'static [GgmlType] = &[$(GgmlType::$variant,)*];

            /// The type with code `code`, or `None` if the code is unknown or its type has been removed.
            pub fn from_code(code: u32) -> Option<GgmlType> {
                match code {
                    $($code => Some(GgmlType::$variant),)*
                    _ => None,
                }
            }

            /// The code stored in tensor infos.
            pub fn code(self) -> u32 {
                match self {
                    $(GgmlType::$variant => $code,)*
                }
            }

            /// The name as gguf-py spells it (`"Q8_0"`, `"BF16"`, `"IQ2_XXS"`).
            pub fn name(self) -> &'static str {
                match self {
                    $(GgmlType::$variant => stringify!($variant),)*
                }
            }

            /// How many elements one block holds (1 for the plain types).
            pub fn block_size(self) -> u64 {
                match self {
                    $(GgmlType::$variant => $block,)*
                }
            }

            /// How many bytes one block occupies.
            pub fn type_size(self) -> u64 {
                match self {
                    $(GgmlType::$variant => $size,)*
                }
            }
        }
    };
}

/// The elements in one super-block of the k-quants and most i-quants (`QK_K`).
const QK_K: u64 = 256;

// Block and type sizes: the type traits in ggml.c (sizes of the block structs in ggml-common.h), which
// gguf-py's GGML_QUANT_SIZES mirrors, except for Q8_1: gguf-py says 40 bytes (two f32 scales, an older
// layout), while ggml, which loads the files, has two f16 scales and asserts 36 bytes.
mod sizes {
    use super::QK_K;
    pub const Q2_K: u64 = 2 + 2 + QK_K / 16 + QK_K / 4;
    pub const Q3_K: u64 = 2 + QK_K / 4 + QK_K / 8 + 12;
    pub const Q4_K: u64 = 2 + 2 + QK_K / 2 + 12;
    pub const Q5_K: u64 = 2 + 2 + QK_K / 2 + QK_K / 8 + 12;
    pub const Q6_K: u64 = 2 + QK_K / 2 + QK_K / 4 + QK_K / 16;
    pub const Q8_K: u64 = 4 + QK_K + QK_K / 8;
    pub const IQ2_XXS: u64 = 2 + QK_K / 4;
    pub const IQ2_XS: u64 = 2 + QK_K / 4 + QK_K / 32;
    pub const IQ3_XXS: u64 = 2 + QK_K / 4 + QK_K / 8;
    pub const IQ1_S: u64 = 2 + QK_K / 8 + QK_K / 16;
    pub const IQ3_S: u64 = 2 + QK_K / 4 + QK_K / 8 + QK_K / 32 + 4;
    pub const IQ2_S: u64 = 2 + QK_K / 4 + QK_K / 16;
    pub const IQ4_XS: u64 = 2 + 2 + QK_K / 2 + QK_K / 64;
    pub const IQ1_M: u64 = QK_K / 8 + QK_K / 16 + QK_K / 32;
    pub const TQ1_0: u64 = 2 + 4 * 13;
    pub const TQ2_0: u64 = 2 + 64;
}

ggml_types! {
    F32 = 0, 1, 4;
    F16 = 1, 1, 2;
    Q4_0 = 2, 32, 18;
    Q4_1 = 3, 32, 20;
    Q5_0 = 6, 32, 22;
    Q5_1 = 7, 32, 24;
    Q8_0 = 8, 32, 34;
    Q8_1 = 9, 32, 36;
    Q2_K = 10, 256, sizes::Q2_K;
    Q3_K = 11, 256, sizes::Q3_K;
    Q4_K = 12, 256, sizes::Q4_K;
    Q5_K = 13, 256, sizes::Q5_K;
    Q6_K = 14, 256, sizes::Q6_K;
    Q8_K = 15, 256, sizes::Q8_K;
    IQ2_XXS = 16, 256, sizes::IQ2_XXS;
    IQ2_XS = 17, 256, sizes::IQ2_XS;
    IQ3_XXS = 18, 256, sizes::IQ3_XXS;
    IQ1_S = 19, 256, sizes::IQ1_S;
    IQ4_NL = 20, 32, 18;
    IQ3_S = 21, 256, sizes::IQ3_S;
    IQ2_S = 22, 256, sizes::IQ2_S;
    IQ4_XS = 23, 256, sizes::IQ4_XS;
    I8 = 24, 1, 1;
    I16 = 25, 1, 2;
    I32 = 26, 1, 4;
    I64 = 27, 1, 8;
    F64 = 28, 1, 8;
    IQ1_M = 29, 256, sizes::IQ1_M;
    BF16 = 30, 1, 2;
    TQ1_0 = 34, 256, sizes::TQ1_0;
    TQ2_0 = 35, 256, sizes::TQ2_0;
    MXFP4 = 39, 32, 17;
    NVFP4 = 40, 64, 36;
    Q1_0 = 41, 128, 18;
}

impl GgmlType {
    /// The name of a type code that ggml once had but no longer accepts in GGUF files (`None` for any other
    /// code): `Q4_2` and `Q4_3` predate GGUF, and ggml dropped the interleaved layouts (31 to 33, 36 to 38)
    /// from files in favour of repacking at load time.
    pub fn removed_name(code: u32) -> Option<&'static str> {
        Some(match code {
            4 => "Q4_2",
            5 => "Q4_3",
            31 => "Q4_0_4_4",
            32 => "Q4_0_4_8",
            33 => "Q4_0_8_8",
            36 => "IQ4_NL_4_4",
            37 => "IQ4_NL_4_8",
            38 => "IQ4_NL_8_8",
            _ => return None,
        })
    }

    /// The byte size of a tensor of this type with shape `dims` (GGUF order), or `None` if `dims[0]` is not a
    /// multiple of the block size, a dimension exceeds `i64::MAX` (ggml's dimensions are signed), or the
    /// element count or byte size overflows. Any zero dimension gives 0 bytes, as in ggml.
    pub fn tensor_size(self, dims: &[u64]) -> Option<u64> {
        let (&ne0, outer) = dims.split_first()?;
        if dims.iter().any(|&d| i64::try_from(d).is_err()) || ne0.checked_rem(self.block_size())? != 0 {
            return None;
        }
        if dims.contains(&0) {
            return Some(0);
        }
        let elements = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))?;
        i64::try_from(elements).ok()?;
        let row = ne0.checked_div(self.block_size())?.checked_mul(self.type_size())?;
        outer.iter().try_fold(row, |n, &d| n.checked_mul(d))
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
