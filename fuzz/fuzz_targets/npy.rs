//! Arbitrary bytes through the NumPy readers, as a `.npy` file and as an `.npz` archive: never a panic, no
//! allocation beyond what the input can justify (a deflated member is bounded by 1032 times its compressed
//! size), and every array read has the byte length its dtype and shape give (checked by `fuzz_read`).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use tpack_cli::{fuzz_read, Format};

fuzz_target!(|data: &[u8]| {
    for format in [Format::Npy, Format::Npz] {
        if let Err(e) = fuzz_read(format, Path::new("fuzz.npy"), data) {
            assert!(!e.to_string().is_empty());
        }
    }
});
