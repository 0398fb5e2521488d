//! The valid golden vectors, mutated: no mutation panics, and no single-bit flip anywhere in a valid container
//! survives full validation (CRC-32 catches every one-bit error in what it covers, R37 the padding).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpack::Container;

const VECTORS: &[&[u8]] = &[
    include_bytes!("../../spec/vectors/valid/example.tpack"),
    include_bytes!("../../spec/vectors/valid/all-dtypes.tpack"),
    include_bytes!("../../spec/vectors/valid/metadata.tpack"),
    include_bytes!("../../spec/vectors/valid/nested.tpack"),
    include_bytes!("../../spec/vectors/valid/nested-max-depth.tpack"),
    include_bytes!("../../spec/vectors/valid/targets.tpack"),
    include_bytes!("../../spec/vectors/valid/zero-size.tpack"),
    include_bytes!("../../spec/vectors/valid/rank8.tpack"),
    include_bytes!("../../spec/vectors/valid/newer-minor.tpack"),
    include_bytes!("../../spec/vectors/valid/empty.tpack"),
];

fn validate(bytes: &[u8]) -> bool {
    Container::parse(bytes).and_then(|c| c.verify()).is_ok()
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, edits)) = data.split_first() else { return };
    let original = VECTORS[usize::from(pick) % VECTORS.len()];

    // One bit flipped, wherever the first two edit bytes point: always rejected.
    if let [hi, lo, bit, ..] = *edits {
        let at = (usize::from(hi) << 8 | usize::from(lo)) % original.len();
        let mut flipped = original.to_vec();
        flipped[at] ^= 1 << (bit % 8);
        assert!(!validate(&flipped), "flipping bit {} of byte {at} went unnoticed", bit % 8);
    }

    // Arbitrary overwrites, a truncation or an extension: never a panic.
    let mut bytes = original.to_vec();
    for edit in edits.chunks_exact(3) {
        let at = (usize::from(edit[0]) << 8 | usize::from(edit[1])) % (bytes.len() + 1);
        match edit[2] {
            0 => bytes.truncate(at),
            1 => bytes.insert(at, edit[1]),
            v => {
                if let Some(b) = bytes.get_mut(at) {
                    *b = v;
                }
            }
        }
    }
    if let Ok(c) = Container::parse(&bytes) {
        tpack_fuzz::touch_everything(&c);
    }
});
