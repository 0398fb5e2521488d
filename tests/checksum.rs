//! The checksum: the catalogue check value, and the hardware-assisted implementation (feature `fast-crc`,
//! on under `std`) equal to the portable table-driven one on any input and any split.

use proptest::prelude::*;
use tpack::checksum::{crc32, crc32_portable, Crc32};

#[test]
fn check_value_of_123456789() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32_portable(b"123456789"), 0xCBF4_3926);
    let mut split = Crc32::new();
    split.update(b"1234");
    split.update(b"56789");
    assert_eq!(split.finish(), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 3 } else { 512 }))]

    #[test]
    fn fast_and_portable_agree(bytes in proptest::collection::vec(any::<u8>(), 0..if cfg!(miri) { 200 } else { 5000 }), cut in any::<prop::sample::Index>()) {
        let expected = crc32_portable(&bytes);
        prop_assert_eq!(crc32(&bytes), expected);
        let at = cut.index(bytes.len() + 1);
        let mut split = Crc32::new();
        split.update(&bytes[..at]);
        split.update(&bytes[at..]);
        prop_assert_eq!(split.finish(), expected);
        // Resumed from the value of the first part, the checksum of the rest completes the whole.
        let mut resumed = Crc32::resume(crc32(&bytes[..at]));
        resumed.update(&bytes[at..]);
        prop_assert_eq!(resumed.finish(), expected);
    }
}
