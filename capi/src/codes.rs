//! The dtype and metadata type codes as C constants (`TPACK_DTYPE_F32`, `TPACK_META_STRING`, …), so C code need not
//! copy numbers from the spec. Literals, because cbindgen does not evaluate `Dtype::F32.code()`; the assertions at the
//! end hold each one to the core's code, and the test `every_code_has_its_constant` checks that none is missing.
//! Regenerate the list from `src/format.rs` when the format gains a code (see `capi/NOTES.md`).

use tpack::{Dtype, MetaType};

/// Dtype `F64` (spec §4.1).
pub const TPACK_DTYPE_F64: u16 = 1;
/// Dtype `F32` (spec §4.1).
pub const TPACK_DTYPE_F32: u16 = 2;
/// Dtype `F16` (spec §4.1).
pub const TPACK_DTYPE_F16: u16 = 3;
/// Dtype `BF16` (spec §4.1).
pub const TPACK_DTYPE_BF16: u16 = 4;
/// Dtype `F8E4M3` (spec §4.1).
pub const TPACK_DTYPE_F8E4M3: u16 = 5;
/// Dtype `F8E5M2` (spec §4.1).
pub const TPACK_DTYPE_F8E5M2: u16 = 6;
/// Dtype `I64` (spec §4.1).
pub const TPACK_DTYPE_I64: u16 = 7;
/// Dtype `I32` (spec §4.1).
pub const TPACK_DTYPE_I32: u16 = 8;
/// Dtype `I16` (spec §4.1).
pub const TPACK_DTYPE_I16: u16 = 9;
/// Dtype `I8` (spec §4.1).
pub const TPACK_DTYPE_I8: u16 = 10;
/// Dtype `U64` (spec §4.1).
pub const TPACK_DTYPE_U64: u16 = 11;
/// Dtype `U32` (spec §4.1).
pub const TPACK_DTYPE_U32: u16 = 12;
/// Dtype `U16` (spec §4.1).
pub const TPACK_DTYPE_U16: u16 = 13;
/// Dtype `U8` (spec §4.1).
pub const TPACK_DTYPE_U8: u16 = 14;
/// Dtype `BOOL` (spec §4.1).
pub const TPACK_DTYPE_BOOL: u16 = 15;
/// Dtype `Q8_0` (spec §4.1).
pub const TPACK_DTYPE_Q8_0: u16 = 16;
/// Dtype `Q4_0` (spec §4.1).
pub const TPACK_DTYPE_Q4_0: u16 = 17;
/// Dtype `RAW` (spec §4.1).
pub const TPACK_DTYPE_RAW: u16 = 18;
/// Dtype `CONTAINER` (spec §4.1).
pub const TPACK_DTYPE_CONTAINER: u16 = 19;
/// Dtype `Q4_1` (spec §4.1).
pub const TPACK_DTYPE_Q4_1: u16 = 20;
/// Dtype `Q5_0` (spec §4.1).
pub const TPACK_DTYPE_Q5_0: u16 = 21;
/// Dtype `Q5_1` (spec §4.1).
pub const TPACK_DTYPE_Q5_1: u16 = 22;
/// Dtype `Q8_1` (spec §4.1).
pub const TPACK_DTYPE_Q8_1: u16 = 23;
/// Dtype `Q2_K` (spec §4.1).
pub const TPACK_DTYPE_Q2_K: u16 = 24;
/// Dtype `Q3_K` (spec §4.1).
pub const TPACK_DTYPE_Q3_K: u16 = 25;
/// Dtype `Q4_K` (spec §4.1).
pub const TPACK_DTYPE_Q4_K: u16 = 26;
/// Dtype `Q5_K` (spec §4.1).
pub const TPACK_DTYPE_Q5_K: u16 = 27;
/// Dtype `Q6_K` (spec §4.1).
pub const TPACK_DTYPE_Q6_K: u16 = 28;
/// Dtype `Q8_K` (spec §4.1).
pub const TPACK_DTYPE_Q8_K: u16 = 29;
/// Dtype `IQ2_XXS` (spec §4.1).
pub const TPACK_DTYPE_IQ2_XXS: u16 = 30;
/// Dtype `IQ2_XS` (spec §4.1).
pub const TPACK_DTYPE_IQ2_XS: u16 = 31;
/// Dtype `IQ3_XXS` (spec §4.1).
pub const TPACK_DTYPE_IQ3_XXS: u16 = 32;
/// Dtype `IQ1_S` (spec §4.1).
pub const TPACK_DTYPE_IQ1_S: u16 = 33;
/// Dtype `IQ4_NL` (spec §4.1).
pub const TPACK_DTYPE_IQ4_NL: u16 = 34;
/// Dtype `IQ3_S` (spec §4.1).
pub const TPACK_DTYPE_IQ3_S: u16 = 35;
/// Dtype `IQ2_S` (spec §4.1).
pub const TPACK_DTYPE_IQ2_S: u16 = 36;
/// Dtype `IQ4_XS` (spec §4.1).
pub const TPACK_DTYPE_IQ4_XS: u16 = 37;
/// Dtype `IQ1_M` (spec §4.1).
pub const TPACK_DTYPE_IQ1_M: u16 = 38;
/// Dtype `TQ1_0` (spec §4.1).
pub const TPACK_DTYPE_TQ1_0: u16 = 39;
/// Dtype `TQ2_0` (spec §4.1).
pub const TPACK_DTYPE_TQ2_0: u16 = 40;
/// Dtype `MXFP4` (spec §4.1).
pub const TPACK_DTYPE_MXFP4: u16 = 41;
/// Dtype `NVFP4` (spec §4.1).
pub const TPACK_DTYPE_NVFP4: u16 = 42;
/// Dtype `Q1_0` (spec §4.1).
pub const TPACK_DTYPE_Q1_0: u16 = 43;
/// Dtype `C64` (spec §4.1).
pub const TPACK_DTYPE_C64: u16 = 48;
/// Dtype `F8E8M0` (spec §4.1).
pub const TPACK_DTYPE_F8E8M0: u16 = 49;
/// Dtype `F8E4M3FNUZ` (spec §4.1).
pub const TPACK_DTYPE_F8E4M3FNUZ: u16 = 50;
/// Dtype `F8E5M2FNUZ` (spec §4.1).
pub const TPACK_DTYPE_F8E5M2FNUZ: u16 = 51;
/// Dtype `F4E2M1` (spec §4.1).
pub const TPACK_DTYPE_F4E2M1: u16 = 52;
/// Dtype `F6E2M3` (spec §4.1).
pub const TPACK_DTYPE_F6E2M3: u16 = 53;
/// Dtype `F6E3M2` (spec §4.1).
pub const TPACK_DTYPE_F6E3M2: u16 = 54;
/// Dtype `SIGNATURE` (spec §4.1, §14): a signed container's last entry.
pub const TPACK_DTYPE_SIGNATURE: u16 = 55;
/// Metadata type `u64` (spec §7.1).
pub const TPACK_META_U64: u8 = 1;
/// Metadata type `i64` (spec §7.1).
pub const TPACK_META_I64: u8 = 2;
/// Metadata type `f64` (spec §7.1).
pub const TPACK_META_F64: u8 = 3;
/// Metadata type `bool` (spec §7.1).
pub const TPACK_META_BOOL: u8 = 4;
/// Metadata type `string` (spec §7.1).
pub const TPACK_META_STRING: u8 = 5;
/// Metadata type `bytes` (spec §7.1).
pub const TPACK_META_BYTES: u8 = 6;
/// Metadata type `u64[]` (spec §7.1).
pub const TPACK_META_U64_ARRAY: u8 = 7;
/// Metadata type `i64[]` (spec §7.1).
pub const TPACK_META_I64_ARRAY: u8 = 8;
/// Metadata type `f64[]` (spec §7.1).
pub const TPACK_META_F64_ARRAY: u8 = 9;
/// Metadata type `string[]` (spec §7.1).
pub const TPACK_META_STRING_ARRAY: u8 = 10;
/// Metadata type `u8` (spec §7.1).
pub const TPACK_META_U8: u8 = 11;
/// Metadata type `i8` (spec §7.1).
pub const TPACK_META_I8: u8 = 12;
/// Metadata type `u16` (spec §7.1).
pub const TPACK_META_U16: u8 = 13;
/// Metadata type `i16` (spec §7.1).
pub const TPACK_META_I16: u8 = 14;
/// Metadata type `u32` (spec §7.1).
pub const TPACK_META_U32: u8 = 15;
/// Metadata type `i32` (spec §7.1).
pub const TPACK_META_I32: u8 = 16;
/// Metadata type `f32` (spec §7.1).
pub const TPACK_META_F32: u8 = 17;
/// Metadata type `u8[]` (spec §7.1).
pub const TPACK_META_U8_ARRAY: u8 = 18;
/// Metadata type `i8[]` (spec §7.1).
pub const TPACK_META_I8_ARRAY: u8 = 19;
/// Metadata type `u16[]` (spec §7.1).
pub const TPACK_META_U16_ARRAY: u8 = 20;
/// Metadata type `i16[]` (spec §7.1).
pub const TPACK_META_I16_ARRAY: u8 = 21;
/// Metadata type `u32[]` (spec §7.1).
pub const TPACK_META_U32_ARRAY: u8 = 22;
/// Metadata type `i32[]` (spec §7.1).
pub const TPACK_META_I32_ARRAY: u8 = 23;
/// Metadata type `f32[]` (spec §7.1).
pub const TPACK_META_F32_ARRAY: u8 = 24;
/// Metadata type `bool[]` (spec §7.1).
pub const TPACK_META_BOOL_ARRAY: u8 = 25;
/// Metadata type `array[]` (spec §7.1).
pub const TPACK_META_ARRAY_ARRAY: u8 = 26;

/// Every constant above, with the core's value it must equal.
pub(crate) const DTYPE_CONSTANTS: &[(u16, Dtype)] = &[
    (TPACK_DTYPE_F64, Dtype::F64),
    (TPACK_DTYPE_F32, Dtype::F32),
    (TPACK_DTYPE_F16, Dtype::F16),
    (TPACK_DTYPE_BF16, Dtype::BF16),
    (TPACK_DTYPE_F8E4M3, Dtype::F8E4M3),
    (TPACK_DTYPE_F8E5M2, Dtype::F8E5M2),
    (TPACK_DTYPE_I64, Dtype::I64),
    (TPACK_DTYPE_I32, Dtype::I32),
    (TPACK_DTYPE_I16, Dtype::I16),
    (TPACK_DTYPE_I8, Dtype::I8),
    (TPACK_DTYPE_U64, Dtype::U64),
    (TPACK_DTYPE_U32, Dtype::U32),
    (TPACK_DTYPE_U16, Dtype::U16),
    (TPACK_DTYPE_U8, Dtype::U8),
    (TPACK_DTYPE_BOOL, Dtype::BOOL),
    (TPACK_DTYPE_Q8_0, Dtype::Q8_0),
    (TPACK_DTYPE_Q4_0, Dtype::Q4_0),
    (TPACK_DTYPE_RAW, Dtype::RAW),
    (TPACK_DTYPE_CONTAINER, Dtype::CONTAINER),
    (TPACK_DTYPE_Q4_1, Dtype::Q4_1),
    (TPACK_DTYPE_Q5_0, Dtype::Q5_0),
    (TPACK_DTYPE_Q5_1, Dtype::Q5_1),
    (TPACK_DTYPE_Q8_1, Dtype::Q8_1),
    (TPACK_DTYPE_Q2_K, Dtype::Q2_K),
    (TPACK_DTYPE_Q3_K, Dtype::Q3_K),
    (TPACK_DTYPE_Q4_K, Dtype::Q4_K),
    (TPACK_DTYPE_Q5_K, Dtype::Q5_K),
    (TPACK_DTYPE_Q6_K, Dtype::Q6_K),
    (TPACK_DTYPE_Q8_K, Dtype::Q8_K),
    (TPACK_DTYPE_IQ2_XXS, Dtype::IQ2_XXS),
    (TPACK_DTYPE_IQ2_XS, Dtype::IQ2_XS),
    (TPACK_DTYPE_IQ3_XXS, Dtype::IQ3_XXS),
    (TPACK_DTYPE_IQ1_S, Dtype::IQ1_S),
    (TPACK_DTYPE_IQ4_NL, Dtype::IQ4_NL),
    (TPACK_DTYPE_IQ3_S, Dtype::IQ3_S),
    (TPACK_DTYPE_IQ2_S, Dtype::IQ2_S),
    (TPACK_DTYPE_IQ4_XS, Dtype::IQ4_XS),
    (TPACK_DTYPE_IQ1_M, Dtype::IQ1_M),
    (TPACK_DTYPE_TQ1_0, Dtype::TQ1_0),
    (TPACK_DTYPE_TQ2_0, Dtype::TQ2_0),
    (TPACK_DTYPE_MXFP4, Dtype::MXFP4),
    (TPACK_DTYPE_NVFP4, Dtype::NVFP4),
    (TPACK_DTYPE_Q1_0, Dtype::Q1_0),
    (TPACK_DTYPE_C64, Dtype::C64),
    (TPACK_DTYPE_F8E8M0, Dtype::F8E8M0),
    (TPACK_DTYPE_F8E4M3FNUZ, Dtype::F8E4M3FNUZ),
    (TPACK_DTYPE_F8E5M2FNUZ, Dtype::F8E5M2FNUZ),
    (TPACK_DTYPE_F4E2M1, Dtype::F4E2M1),
    (TPACK_DTYPE_F6E2M3, Dtype::F6E2M3),
    (TPACK_DTYPE_F6E3M2, Dtype::F6E3M2),
    (TPACK_DTYPE_SIGNATURE, Dtype::SIGNATURE),
];

/// As [`DTYPE_CONSTANTS`], for the metadata types.
pub(crate) const META_CONSTANTS: &[(u8, MetaType)] = &[
    (TPACK_META_U64, MetaType::U64),
    (TPACK_META_I64, MetaType::I64),
    (TPACK_META_F64, MetaType::F64),
    (TPACK_META_BOOL, MetaType::BOOL),
    (TPACK_META_STRING, MetaType::STRING),
    (TPACK_META_BYTES, MetaType::BYTES),
    (TPACK_META_U64_ARRAY, MetaType::U64_ARRAY),
    (TPACK_META_I64_ARRAY, MetaType::I64_ARRAY),
    (TPACK_META_F64_ARRAY, MetaType::F64_ARRAY),
    (TPACK_META_STRING_ARRAY, MetaType::STRING_ARRAY),
    (TPACK_META_U8, MetaType::U8),
    (TPACK_META_I8, MetaType::I8),
    (TPACK_META_U16, MetaType::U16),
    (TPACK_META_I16, MetaType::I16),
    (TPACK_META_U32, MetaType::U32),
    (TPACK_META_I32, MetaType::I32),
    (TPACK_META_F32, MetaType::F32),
    (TPACK_META_U8_ARRAY, MetaType::U8_ARRAY),
    (TPACK_META_I8_ARRAY, MetaType::I8_ARRAY),
    (TPACK_META_U16_ARRAY, MetaType::U16_ARRAY),
    (TPACK_META_I16_ARRAY, MetaType::I16_ARRAY),
    (TPACK_META_U32_ARRAY, MetaType::U32_ARRAY),
    (TPACK_META_I32_ARRAY, MetaType::I32_ARRAY),
    (TPACK_META_F32_ARRAY, MetaType::F32_ARRAY),
    (TPACK_META_BOOL_ARRAY, MetaType::BOOL_ARRAY),
    (TPACK_META_ARRAY_ARRAY, MetaType::ARRAY_ARRAY),
];

// Evaluated at compile time: an index out of range or a failed assertion is a build error, not a panic.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::panic)]
const _: () = {
    let mut i = 0;
    while i < DTYPE_CONSTANTS.len() {
        assert!(DTYPE_CONSTANTS[i].0 == DTYPE_CONSTANTS[i].1.code());
        i += 1;
    }
    let mut i = 0;
    while i < META_CONSTANTS.len() {
        assert!(META_CONSTANTS[i].0 == META_CONSTANTS[i].1.code());
        i += 1;
    }
    assert!(DTYPE_CONSTANTS.len() == Dtype::ALL.len());
    assert!(META_CONSTANTS.len() == MetaType::ALL.len());
};
