//! `.npz`: a zip archive of `.npy` members (`numpy.savez` stores them, `numpy.savez_compressed` deflates
//! them), read with the `zip` crate. A member's name less `.npy` is its array's name, as `numpy.load` names
//! it.
//!
//! Refused: a member whose name is absolute, has a `..` component, a backslash or is not `*.npy`; two
//! members of the same name; encryption; compression other than stored and deflate; a deflated member that
//! declares more than deflate can give ([`MAX_DEFLATE_RATIO`] times its compressed size), or that inflates to
//! other than its declared size. A stored member is borrowed from the input, its CRC-32 checked.

use std::borrow::Cow;
use std::collections::HashSet;
use std::io::{Cursor, Read};

use bytes::Bytes;
use zip::{CompressionMethod, ZipArchive};

use super::array::{self, Changes, Data};
use crate::formats::tpack::OutEntry;

/// The suffix every member of an `.npz` has.
pub(crate) const MEMBER_SUFFIX: &str = ".npy";

/// The most a deflate stream can expand (zlib's technical note: 1032:1, reached by a run of one byte). A
/// member declaring more than this times its compressed size cannot be what it says.
pub(crate) const MAX_DEFLATE_RATIO: u64 = 1032;

/// Every array of the archive in `bytes`, in member order, with what was done to each.
///
/// # Errors
/// Why the archive or one member is refused, in words (the caller adds the file).
pub(crate) fn entries(bytes: &[u8]) -> Result<Vec<(OutEntry<'_>, Changes)>, String> {
    let mut zip =
        ZipArchive::new(Cursor::new(bytes)).map_err(|e| format!("it is not a valid zip archive: {e}"))?;
    // The `zip` crate keeps one member of each name: the central directory's own count tells the others.
    if let Some(listed) = listed_members(bytes).filter(|&n| n != zip.len() as u64) {
        return Err(format!(
            "its central directory lists {listed} members and {} distinct names: two members share a name, and \
             numpy.load would keep only one",
            zip.len()
        ));
    }
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        let (name, method, size, compressed, crc, start) = {
            let m = zip.by_index_raw(i).map_err(|e| format!("its member {i} cannot be read: {e}"))?;
            if m.encrypted() {
                return Err(format!("its member {:?} is encrypted", m.name()));
            }
            (m.name().to_owned(), m.compression(), m.size(), m.compressed_size(), m.crc32(), m.data_start())
        };
        let array = member_name(&name)?;
        if !seen.insert(name.clone()) {
            return Err(format!("it has two members named {name:?}; numpy.load would keep only one"));
        }
        let refuse = |what: String| format!("its member {name:?} {what}");
        let data = match method {
            CompressionMethod::Stored => {
                let start =
                    start.ok_or_else(|| refuse("has no local header to find its data by".to_owned()))?;
                let stored = usize::try_from(start)
                    .ok()
                    .zip(usize::try_from(size).ok())
                    .and_then(|(s, n)| Some(s..s.checked_add(n)?))
                    .and_then(|r| bytes.get(r))
                    .ok_or_else(|| {
                        refuse(format!("lies outside the file ({size} bytes at offset {start})"))
                    })?;
                if size != compressed {
                    return Err(refuse(format!(
                        "is stored with {size} bytes but {compressed} bytes of data in the archive"
                    )));
                }
                let computed = crc32fast::hash(stored);
                if computed != crc {
                    return Err(refuse(format!(
                        "does not match its CRC-32 (stored {crc:#010x}, computed {computed:#010x})"
                    )));
                }
                Data::Mapped(stored)
            }
            CompressionMethod::Deflated => {
                if size > compressed.saturating_mul(MAX_DEFLATE_RATIO) {
                    return Err(refuse(format!(
                        "declares {size} bytes from {compressed} compressed bytes, more than deflate can \
                         expand ({MAX_DEFLATE_RATIO}:1)"
                    )));
                }
                let declared = usize::try_from(size).map_err(|_| refuse("is too large".to_owned()))?;
                let m = zip.by_index(i).map_err(|e| refuse(format!("cannot be read: {e}")))?;
                // One byte past the declared size tells a member that inflates to more.
                let mut buffer = Vec::new();
                m.take(size.saturating_add(1))
                    .read_to_end(&mut buffer)
                    .map_err(|e| refuse(format!("cannot be inflated: {e}")))?;
                if buffer.len() != declared {
                    return Err(refuse(format!(
                        "inflates to {}{} bytes and declares {size}",
                        buffer.len(),
                        if buffer.len() > declared { " or more" } else { "" }
                    )));
                }
                Data::Owned(Bytes::from(buffer))
            }
            other => {
                return Err(refuse(format!(
                    "is compressed with {other}, and numpy writes only stored and deflated members"
                )))
            }
        };
        let entry = array::entry(Cow::Owned(array.to_owned()), data)
            .map_err(|why| format!("its array {array:?}: {why}"))?;
        out.push(entry);
    }
    Ok(out)
}

/// The end of central directory record's signature, its length without the comment, and where it holds the
/// total number of members (a `u16`).
const EOCD: &[u8] = b"PK\x05\x06";
/// See [`EOCD`].
const EOCD_LEN: usize = 22;
/// See [`EOCD`].
const EOCD_TOTAL: usize = 10;
/// The zip64 end of central directory locator (20 bytes, just before the record above), where it holds the
/// zip64 record's offset (a `u64`), and where that record holds the total number of members (a `u64`).
const ZIP64_LOCATOR: &[u8] = b"PK\x06\x07";
/// See [`ZIP64_LOCATOR`].
const ZIP64_LOCATOR_LEN: usize = 20;
/// See [`ZIP64_LOCATOR`].
const ZIP64_LOCATOR_OFFSET: usize = 8;
/// See [`ZIP64_LOCATOR`].
const ZIP64_TOTAL: usize = 32;

/// The number of members the archive's end of central directory record declares (zip64's when the record
/// defers to it), if it can be found: the last record signature within the comment's reach of the end.
fn listed_members(bytes: &[u8]) -> Option<u64> {
    let earliest = bytes.len().saturating_sub(EOCD_LEN + usize::from(u16::MAX));
    let at =
        (earliest..=bytes.len().checked_sub(EOCD_LEN)?).rev().find(|&i| bytes.get(i..i + 4) == Some(EOCD))?;
    let le = |from: usize, n: usize| -> Option<u64> {
        Some(bytes.get(from..from.checked_add(n)?)?.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    };
    let total = le(at + EOCD_TOTAL, 2)?;
    if total != u64::from(u16::MAX) {
        return Some(total);
    }
    let locator = at.checked_sub(ZIP64_LOCATOR_LEN)?;
    if bytes.get(locator..locator + 4) != Some(ZIP64_LOCATOR) {
        return Some(total);
    }
    let record = usize::try_from(le(locator + ZIP64_LOCATOR_OFFSET, 8)?).ok()?;
    le(record.checked_add(ZIP64_TOTAL)?, 8)
}

/// The array name of the member `name`: `name` less [`MEMBER_SUFFIX`].
///
/// # Errors
/// A name that could escape a directory if extracted, or that numpy would not load as an array.
fn member_name(name: &str) -> Result<&str, String> {
    let escape = if name.starts_with('/') {
        Some("is an absolute path")
    } else if name.split('/').any(|part| part == "..") {
        Some("has a '..' component, which would leave the directory it is extracted into")
    } else if name.contains('\\') {
        Some("has a backslash, a path separator on Windows")
    } else {
        None
    };
    if let Some(why) = escape {
        return Err(format!("its member {name:?} {why}; numpy never writes such a name"));
    }
    match name.strip_suffix(MEMBER_SUFFIX) {
        Some(array) if !array.is_empty() => Ok(array),
        _ => Err(format!("its member {name:?} is not a .npy array, as every member numpy.savez writes is")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_lose_their_suffix_and_may_not_escape() {
        assert_eq!(member_name("w.npy"), Ok("w"));
        assert_eq!(member_name("layer.0/w.npy"), Ok("layer.0/w"));
        for bad in ["../w.npy", "a/../../w.npy", "/etc/w.npy", "a\\w.npy", "w.txt", ".npy", "w"] {
            assert!(member_name(bad).is_err(), "{bad}");
        }
    }
}
