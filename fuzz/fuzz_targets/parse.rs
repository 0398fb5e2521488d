//! Arbitrary bytes: parsing never panics, and a container that parses has every accessor and checksum working.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tpack::declared_len(data);
    if let Ok(c) = tpack::Container::parse(data) {
        tpack_fuzz::touch_everything(&c);
    }
});
