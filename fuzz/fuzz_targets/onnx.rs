//! Arbitrary bytes through the ONNX reader: never a panic, nesting bounded by prost's recursion limit, no
//! allocation beyond what the input can justify, and every tensor read has the byte length its dtype and
//! shape give (checked by `fuzz_read`). The model's path is in a directory with no other file, so external
//! data always fails to resolve, with an error, not a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use tpack_cli::{fuzz_read, Format};

fuzz_target!(|data: &[u8]| {
    if let Err(e) = fuzz_read(Format::Onnx, Path::new("/nonexistent-tpack-fuzz/model.onnx"), data) {
        assert!(!e.to_string().is_empty());
    }
});
