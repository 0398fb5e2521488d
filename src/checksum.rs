//! The format's one checksum, CRC-32/ISO-HDLC (spec §3.3), and the header checksum built on it.
//!
//! # Which implementation
//!
//! The implementation is a build choice made by additive Cargo features. Each one only ever makes the checksum
//! faster, and the fastest one enabled anywhere in the dependency graph wins, so a dependent that asks for
//! speed never breaks one that asks for size, and enabling more features never takes anything away:
//!
//! | features | implementation | lookup tables |
//! |---|---|---:|
//! | none (`default-features = false`) | the `crc` crate, bit by bit: the smallest code, the slowest | 0 |
//! | `crc-table` (default) | the `crc` crate, one 256-entry table | 1 KiB |
//! | `crc-table-16` (implies `crc-table`) | the `crc` crate, 16 × 256 entries | 16 KiB |
//! | `fast-crc` (implied by `std`) | `crc32fast`: a carry-less-multiply or CRC-instruction kernel, else its own table | 16 KiB (fallback) |
//!
//! `fast-crc` works without `std`: the kernel is then chosen at compile time from the target's features (on a
//! Cortex-M4 that means crc32fast's table); with `std` the CPU is probed at run time. A `crc-no-table` feature
//! was rejected because it could not be additive: it had to override `crc-table-16` when both were on.
//!
//! With `fast-crc`, [`crc32`] and [`Crc32`] use `crc32fast`; the portable implementation at the selected table
//! size is then compiled for this module's tests only, which hold the two equal (the fuzz target `crc` does
//! the same against the `crc` crate directly).

#[cfg(any(test, not(feature = "fast-crc")))]
use crc::{Crc, CRC_32_ISO_HDLC};

use crate::format::HEADER_CRC_OFFSET;

// Fastest first; `crc-table-16` implies `crc-table`, but each line stands on its own.
#[cfg(all(feature = "crc-table-16", any(test, not(feature = "fast-crc"))))]
type Table = crc::Table<16>;
#[cfg(all(feature = "crc-table", not(feature = "crc-table-16"), any(test, not(feature = "fast-crc"))))]
type Table = crc::Table<1>;
#[cfg(all(not(any(feature = "crc-table", feature = "crc-table-16")), any(test, not(feature = "fast-crc"))))]
type Table = crc::NoTable;

#[cfg(any(test, not(feature = "fast-crc")))]
const CRC32: Crc<u32, Table> = Crc::<u32, Table>::new(&CRC_32_ISO_HDLC);

/// CRC-32/ISO-HDLC of `bytes` by the portable `crc`-crate implementation at the selected table size, even with
/// `fast-crc`: the reference the tests below hold the fast kernel to.
#[cfg(test)]
fn crc32_portable(bytes: &[u8]) -> u32 {
    CRC32.checksum(bytes)
}

/// CRC-32/ISO-HDLC of `bytes`; equals zlib's `crc32`.
#[must_use]
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = Crc32::new();
    crc.update(bytes);
    crc.finish()
}

#[cfg(not(feature = "fast-crc"))]
type Digest = crc::Digest<'static, u32, Table>;
#[cfg(feature = "fast-crc")]
type Digest = crc32fast::Hasher;

/// An incremental CRC-32/ISO-HDLC, for data that arrives in pieces.
#[derive(Clone)]
pub struct Crc32 {
    digest: Digest,
}

impl core::fmt::Debug for Crc32 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Crc32").field(&self.clone().finish()).finish()
    }
}

impl Default for Crc32 {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32 {
    /// A checksum of nothing yet.
    #[must_use]
    pub fn new() -> Self {
        #[cfg(not(feature = "fast-crc"))]
        let digest = CRC32.digest();
        #[cfg(feature = "fast-crc")]
        let digest = crc32fast::Hasher::new();
        Self { digest }
    }

    /// A checksum that goes on from `value`, the [`Crc32::finish`] of the bytes so far: feeding it the rest
    /// gives the checksum of the whole. Lets a stream decoder keep its state as plain numbers.
    #[must_use]
    pub fn resume(value: u32) -> Self {
        // CRC-32/ISO-HDLC is reflected with an all-ones initial value and final XOR: the register after some
        // bytes is the finished value XORed with all ones, and `crc` takes an initial value unreflected.
        #[cfg(not(feature = "fast-crc"))]
        let digest = CRC32.digest_with_initial((value ^ u32::MAX).reverse_bits());
        #[cfg(feature = "fast-crc")]
        let digest = crc32fast::Hasher::new_with_initial(value);
        Self { digest }
    }

    /// Feeds more bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.digest.update(bytes);
    }

    /// The checksum of every byte fed so far.
    #[must_use]
    pub fn finish(self) -> u32 {
        self.digest.finalize()
    }
}

/// The header checksum of a checksummed region (`[0, end of metadata)`): the CRC of the region without the
/// four bytes of `header_crc` itself (spec §3.3). A region shorter than the header field gives the CRC of what
/// there is; the reader never calls it with one.
#[must_use]
pub fn header_crc(region: &[u8]) -> u32 {
    let mut crc = Crc32::new();
    crc.update(region.get(..HEADER_CRC_OFFSET).unwrap_or(region));
    crc.update(region.get(HEADER_CRC_OFFSET.saturating_add(4)..).unwrap_or(&[]));
    crc.finish()
}

/// The hardware-assisted implementation (feature `fast-crc`, on under `std`) equals the portable table-driven
/// one at the selected table size, on any input and any split. (Here rather than in `tests/`, so that the
/// portable function stays out of the public API.)
#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{crc32, crc32_portable, Crc32};

    #[test]
    fn portable_check_value_of_123456789() {
        assert_eq!(crc32_portable(b"123456789"), 0xCBF4_3926);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 3 } else { 512 }))]

        #[test]
        fn fast_and_portable_agree(
            bytes in proptest::collection::vec(any::<u8>(), 0..if cfg!(miri) { 200 } else { 5000 }),
            cut in any::<prop::sample::Index>(),
        ) {
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
}
