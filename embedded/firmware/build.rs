//! Places the linker script, and derives from the model what the firmware needs about it at build time:
//!
//! - the corrupted copy embedded in flash: the container with one bit flipped in the payload of `fc1.weight`,
//!   which the firmware must refuse before using any weight;
//! - for the streaming phase (`stream.rs` in `OUT_DIR`): the decoder's buffer length (`Decoder::buffer_needed`
//!   of the container's header), and where to flip a bit of the stream on the fly, in a payload (R50) and in a
//!   name (R13). Each flip is checked here to break the rule the firmware expects.

use std::path::{Path, PathBuf};

/// The bit flipped by every corruption.
const FLIP: u8 = 0x10;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    std::fs::copy("memory.x", out.join("memory.x")).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");

    let model_path = Path::new("../tiny-mlp/tiny-mlp.tpack");
    println!("cargo:rerun-if-changed={}", model_path.display());
    let model = std::fs::read(model_path).unwrap();
    let c = tpack::Container::parse(&model).unwrap();
    let victim = c.get("fc1.weight").expect("fc1.weight").range().start;
    let payload_at = usize::try_from(victim).unwrap() + 5;
    let corrupt = flipped(&model, payload_at, "R50");
    std::fs::write(out.join("corrupt.tpack"), corrupt).unwrap();

    // The first occurrence of the name is in the names section, before any payload.
    let name_at = model.windows(10).position(|w| w == b"fc1.weight").expect("the name fc1.weight") + 2;
    assert!((name_at as u64) < victim);
    flipped(&model, name_at, "R13");

    let buffer = tpack::stream::Decoder::buffer_needed(&model).expect("a valid header");
    std::fs::write(
        out.join("stream.rs"),
        format!(
            "/// The decoder's buffer for the model: `Decoder::buffer_needed` of its header.\n\
             pub const BUFFER_LEN: usize = {buffer};\n\
             /// The model's length in bytes.\n\
             pub const MODEL_LEN: u64 = {};\n\
             /// A byte of `fc1.weight`'s payload and a byte of its name, and the bit flipped in them.\n\
             pub const PAYLOAD_FLIP_AT: u64 = {payload_at};\n\
             pub const NAME_FLIP_AT: u64 = {name_at};\n\
             pub const FLIP: u8 = {FLIP:#04x};\n",
            model.len()
        ),
    )
    .unwrap();
}

/// `model` with bit `FLIP` of byte `at` flipped, which must break `rule` first.
fn flipped(model: &[u8], at: usize, rule: &str) -> Vec<u8> {
    let mut bytes = model.to_vec();
    bytes[at] ^= FLIP;
    let verdict = tpack::Container::parse(&bytes).and_then(|c| c.verify());
    assert_eq!(verdict.map_err(|e| e.rule().id()), Err(rule), "flipping byte {at}");
    bytes
}
