//! What the host computes from `tiny-mlp.tpack` (written by `TPACK_BLESS=1 cargo test -p tiny-mlp`);
//! the firmware must reproduce it bit for bit.

/// Predicted class of each held-out input.
pub const CLASSES: [usize; 6] = [0, 0, 1, 1, 2, 2];
/// The logits of each held-out input, as f32 bit patterns.
pub const LOGIT_BITS: [[u32; 3]; 6] = [
    [0x4155b20d, 0xc00a4df2, 0xc0dfa73b],
    [0x4127f10f, 0x3e850680, 0xc0e0887b],
    [0xc033bc4e, 0x40fbcbc9, 0xc08b07e5],
    [0xc05d1f02, 0x4102e112, 0xc0738cc8],
    [0xc097da21, 0x3f6b4322, 0x40a6df7f],
    [0xc094f1f9, 0xc01206e0, 0x4109cb32],
];
