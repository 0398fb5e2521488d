//! Places the linker script, and makes the corrupted copy of the model at build time: the container with one
//! bit flipped in the payload of `fc1.weight`. The firmware must refuse it before using any weight.

use std::path::{Path, PathBuf};

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
    let mut corrupt = model.clone();
    let at = usize::try_from(victim).unwrap() + 5;
    corrupt[at] ^= 0x10;
    std::fs::write(out.join("corrupt.tpack"), corrupt).unwrap();
}
