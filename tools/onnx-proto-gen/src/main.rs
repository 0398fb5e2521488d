//! `cargo run --manifest-path tools/onnx-proto-gen/Cargo.toml` from the repository root: compiles
//! `cli/src/formats/onnx/proto/onnx.proto` with protox (a protobuf compiler in Rust, so no `protoc`) and
//! writes the prost types to `cli/src/formats/onnx/proto/onnx.rs`, every `bytes` field as `bytes::Bytes` so
//! that a tensor's `raw_data` decoded from a mapped file is a view of the map, not a copy.

use std::path::Path;

fn main() {
    let dir = Path::new("cli/src/formats/onnx/proto");
    let descriptors = protox::compile([dir.join("onnx.proto")], [dir]).expect("onnx.proto compiles");
    let mut config = prost_build::Config::new();
    config.bytes(["."]);
    config.out_dir(dir);
    config.compile_fds(descriptors).expect("prost-build writes the types");
}
