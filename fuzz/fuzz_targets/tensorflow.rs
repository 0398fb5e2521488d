//! Arbitrary bytes through the TensorFlow tensor bundle reader, as an index file: never a panic, keys and
//! their rebuilt prefixes bounded by the file's length, every block's CRC-32C checked before its records are
//! read, and every tensor read has the byte length its dtype and shape give (checked by `fuzz_read`). The
//! index's path is in a directory with no other file, so a record that reaches its data file fails to open it,
//! with an error, not a panic; the SSTable, protobuf, slice-key and shape paths are what this target attacks.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use tpack_cli::{fuzz_read, Format};

fuzz_target!(|data: &[u8]| {
    if let Err(e) = fuzz_read(Format::TensorFlow, Path::new("/nonexistent-tpack-fuzz/ckpt.index"), data) {
        assert!(!e.to_string().is_empty());
    }
});
