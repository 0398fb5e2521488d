//! The checksum: the catalogue check value, in one call and split in two. (The fast kernel is held to the
//! portable one by the unit tests of `src/checksum.rs`.)

use tpack::checksum::{crc32, Crc32};

#[test]
fn check_value_of_123456789() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    let mut split = Crc32::new();
    split.update(b"1234");
    split.update(b"56789");
    assert_eq!(split.finish(), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}
