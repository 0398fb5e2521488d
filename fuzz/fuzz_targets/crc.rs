//! The hardware-assisted CRC-32 (crc32fast, used under `std`) equals the portable table-driven one (`crc`, the
//! `no_std` core) on arbitrary bytes, in one call and fed in pieces split anywhere.
#![no_main]

use crc::{Crc, CRC_32_ISO_HDLC};
use libfuzzer_sys::fuzz_target;
use tpack::checksum::{crc32, Crc32};

/// The reference: the `crc` crate's portable table-driven CRC-32/ISO-HDLC.
const PORTABLE: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

fuzz_target!(|input: (u16, u16, &[u8])| {
    let (a, b, data) = input;
    let expected = PORTABLE.checksum(data);
    assert_eq!(crc32(data), expected);
    let (mut first, mut second) = (usize::from(a), usize::from(b));
    first = first.min(data.len());
    second = second.min(data.len()).max(first);
    let mut crc = Crc32::new();
    crc.update(&data[..first]);
    crc.update(&data[first..second]);
    crc.update(&data[second..]);
    assert_eq!(crc.finish(), expected);
});
