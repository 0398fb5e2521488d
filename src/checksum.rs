//! The format's one checksum, CRC-32/ISO-HDLC (spec §3.3), and the header checksum built on it.
//!
//! The portable implementation is the `crc` crate, whose lookup table's size is a build choice: `crc-no-table`
//! (smallest code, slowest), the default 256-entry table (1 KiB), or `crc-table-16` (16 KiB). With `fast-crc`
//! (implied by `std`) [`crc32`] and [`Crc32`] use `crc32fast` instead, which picks a carry-less-multiply or
//! CRC-instruction kernel at run time; [`crc32_portable`] stays available so tests can prove the two equal.

use crc::{Crc, CRC_32_ISO_HDLC};

use crate::format::HEADER_CRC_OFFSET;

#[cfg(feature = "crc-no-table")]
type Table = crc::NoTable;
#[cfg(all(feature = "crc-table-16", not(feature = "crc-no-table")))]
type Table = crc::Table<16>;
#[cfg(not(any(feature = "crc-no-table", feature = "crc-table-16")))]
type Table = crc::Table<1>;

const CRC32: Crc<u32, Table> = Crc::<u32, Table>::new(&CRC_32_ISO_HDLC);

/// CRC-32/ISO-HDLC of `bytes` by the portable table-driven implementation, whatever the features.
#[must_use]
pub fn crc32_portable(bytes: &[u8]) -> u32 {
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
