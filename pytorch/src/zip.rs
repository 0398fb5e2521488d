//! A strict reader of the zip archives `torch.save` and `torch.jit.save` write: every entry a view of the
//! input, its content readable only if it is stored (uncompressed).
//!
//! Rejected: the `zip` crate. Its current releases need a newer Rust than this workspace's MSRV, and a
//! checkpoint reader needs none of what it adds (compression methods, encryption, writing): PyTorch stores
//! every tensor and pickle record uncompressed (TorchScript deflates only its source code, which is not
//! read), so a compressed entry is listed but never inflated, and no declared size is ever allocated — a zip
//! bomb has nothing to inflate.
//!
//! Checked on top of the zip rules: names are relative UTF-8 paths without `..`, `.` or empty components,
//! backslashes, drive letters or NUL; no name appears twice; each central record agrees with its local
//! header (name, method, sizes); entries do not overlap one another or the central directory; one disk
//! only, no encryption.

use std::collections::HashSet;

use crate::bytes::{to_usize, u16_at, u32_at, u64_at};
use crate::error::{escaped, Error, Result};

/// The signature of a local file header.
pub const LOCAL_MAGIC: &[u8; 4] = b"PK\x03\x04";
/// The signature of a central directory record.
const CENTRAL_MAGIC: u32 = 0x0201_4b50;
/// The signature of the end-of-central-directory record.
const END_MAGIC: u32 = 0x0605_4b50;
/// The signature of the zip64 end-of-central-directory locator.
const END64_LOCATOR_MAGIC: u32 = 0x0706_4b50;
/// The signature of the zip64 end-of-central-directory record.
const END64_MAGIC: u32 = 0x0606_4b50;
/// Bytes in the fixed part of the end-of-central-directory record.
const END_LEN: usize = 22;
/// Bytes in the zip64 locator.
const END64_LOCATOR_LEN: usize = 20;
/// The longest archive comment, which bounds the search for the end record.
const MAX_COMMENT: usize = 0xffff;
/// Bytes in the fixed part of a central directory record.
const CENTRAL_LEN: usize = 46;
/// Bytes in the fixed part of a local file header.
const LOCAL_LEN: usize = 30;
/// The extra-field id of zip64 sizes and offsets.
const ZIP64_EXTRA: u16 = 0x0001;
/// A 32-bit field with this value is in the zip64 extra field instead.
const ZIP64_MARK: u32 = u32::MAX;
/// General-purpose flag: the entry is encrypted.
const FLAG_ENCRYPTED: u16 = 1;
/// Compression method: stored.
const STORED: u16 = 0;
/// The most entries read; a checkpoint has one per storage plus a few.
pub const MAX_ENTRIES: u64 = 1 << 20;

/// One entry of an archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZipEntry<'a> {
    /// The entry's name, a relative path checked as the module says.
    pub name: &'a str,
    /// Its compression method (0: stored).
    pub method: u16,
    /// Its bytes as stored, a view of the input: its content when `method` is 0.
    pub data: &'a [u8],
    /// The size its records declare for its content (equal to `data.len()` when stored).
    pub size: u64,
}

impl<'a> ZipEntry<'a> {
    /// Its content, if it is stored.
    ///
    /// # Errors
    /// [`Error::Zip`] naming the entry if it is compressed.
    pub fn content(&self) -> Result<&'a [u8]> {
        if self.method == STORED {
            return Ok(self.data);
        }
        Err(bad(format!(
            "entry \"{}\" is compressed (method {}, {} bytes declared to inflate to {}); torch.save stores tensors \
             and pickles uncompressed, and tpack never inflates anything",
            escaped(self.name),
            self.method,
            self.data.len(),
            self.size
        )))
    }
}

/// A zip error with `what`.
fn bad(what: impl Into<String>) -> Error {
    Error::Zip(what.into())
}

/// Whether `bytes` starts as a zip archive does.
#[must_use]
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(LOCAL_MAGIC)
}

/// The name in the first local header, if `bytes` starts with one (nothing else is checked).
#[must_use]
pub fn first_name(bytes: &[u8]) -> Option<&[u8]> {
    if !is_zip(bytes) {
        return None;
    }
    let len = usize::from(u16_at(bytes, 26)?);
    bytes.get(LOCAL_LEN..LOCAL_LEN.checked_add(len)?)
}

/// Where the end-of-central-directory record starts: the last signature whose comment ends the input.
fn find_end(bytes: &[u8]) -> Result<usize> {
    let last = bytes.len().checked_sub(END_LEN).ok_or_else(|| bad("it is shorter than an end record"))?;
    let first = last.saturating_sub(MAX_COMMENT);
    (first..=last)
        .rev()
        .find(|&at| {
            u32_at(bytes, at) == Some(END_MAGIC)
                && u16_at(bytes, at.saturating_add(20))
                    .and_then(|c| at.checked_add(END_LEN)?.checked_add(usize::from(c)))
                    == Some(bytes.len())
        })
        .ok_or_else(|| bad("it has no end-of-central-directory record"))
}

/// The central directory's (offset, size, entry count), from the end record at `end` or its zip64 record.
fn directory(bytes: &[u8], end: usize) -> Result<(u64, u64, u64)> {
    let field16 = |at: usize| u16_at(bytes, end.saturating_add(at)).unwrap_or(0);
    let field32 = |at: usize| u32_at(bytes, end.saturating_add(at)).unwrap_or(0);
    if field16(4) != 0 || field16(6) != 0 || field16(8) != field16(10) {
        return Err(bad("it spans several disks"));
    }
    let (count, size, offset) = (u64::from(field16(10)), u64::from(field32(12)), u64::from(field32(16)));
    let locator = end.checked_sub(END64_LOCATOR_LEN);
    let zip64 = locator.filter(|&at| u32_at(bytes, at) == Some(END64_LOCATOR_MAGIC));
    let Some(locator) = zip64 else {
        return Ok((offset, size, count));
    };
    let record = u64_at(bytes, locator.saturating_add(8))
        .and_then(to_usize)
        .filter(|&at| u32_at(bytes, at) == Some(END64_MAGIC))
        .ok_or_else(|| bad("its zip64 locator points to no zip64 end record"))?;
    let field = |at: usize| {
        u64_at(bytes, record.saturating_add(at)).ok_or_else(|| bad("its zip64 end record is truncated"))
    };
    let (count, total) = (field(24)?, field(32)?);
    if count != total || u32_at(bytes, record.saturating_add(16)) != Some(0) {
        return Err(bad("it spans several disks"));
    }
    Ok((field(48)?, field(40)?, count))
}

/// The zip64 values of a central record whose 32-bit `fields` are [`ZIP64_MARK`], in the order the extra
/// field holds them (uncompressed size, compressed size, local header offset).
fn zip64_fields(extra: &[u8], mut fields: [u64; 3]) -> Result<[u64; 3]> {
    let mut at = 0usize;
    while let (Some(id), Some(len)) = (u16_at(extra, at), u16_at(extra, at.saturating_add(2))) {
        let body_at = at.saturating_add(4);
        let body = extra
            .get(body_at..body_at.saturating_add(usize::from(len)))
            .ok_or_else(|| bad("an extra field runs past its record"))?;
        if id == ZIP64_EXTRA {
            let mut next = 0usize;
            for f in &mut fields {
                if *f == u64::from(ZIP64_MARK) {
                    *f = u64_at(body, next).ok_or_else(|| bad("a zip64 extra field is too short"))?;
                    next = next.saturating_add(8);
                }
            }
            return Ok(fields);
        }
        at = body_at.saturating_add(usize::from(len));
    }
    if fields.contains(&u64::from(ZIP64_MARK)) {
        return Err(bad("a record needs a zip64 extra field it does not have"));
    }
    Ok(fields)
}

/// Why `name` is not a safe relative entry name, if it is not.
fn unsafe_name(name: &str) -> Option<&'static str> {
    if name.starts_with('/') {
        return Some("an absolute path");
    }
    if name.contains('\\') {
        return Some("a backslash");
    }
    if name.contains('\0') {
        return Some("a NUL byte");
    }
    if name.as_bytes().get(1) == Some(&b':') {
        return Some("a drive letter");
    }
    if name.split('/').any(|c| c == "..") {
        return Some("a `..` component");
    }
    let directory = name.strip_suffix('/').unwrap_or(name);
    if directory.split('/').any(|c| c.is_empty() || c == ".") {
        return Some("an empty or `.` component");
    }
    None
}

/// Reads every entry of the archive `bytes`, in central-directory order.
///
/// # Errors
/// [`Error::Zip`]: not a zip archive, or one that breaks a rule of the module's list (the message names the
/// entry and the rule); [`Error::Limit`] for more than [`MAX_ENTRIES`] entries.
pub fn entries(bytes: &[u8]) -> Result<Vec<ZipEntry<'_>>> {
    let end = find_end(bytes)?;
    let (offset, size, count) = directory(bytes, end)?;
    if count > MAX_ENTRIES {
        return Err(Error::Limit { what: "zip entries", limit: MAX_ENTRIES });
    }
    let start = to_usize(offset).ok_or_else(|| bad("its central directory is out of range"))?;
    let stop = to_usize(size).and_then(|s| start.checked_add(s)).filter(|&s| s <= end);
    let dir_end = stop.ok_or_else(|| bad("its central directory runs past its end record"))?;
    let central = bytes.get(start..dir_end).ok_or_else(|| bad("its central directory is out of range"))?;
    let mut out = Vec::new();
    let mut names = HashSet::new();
    let mut spans = Vec::new();
    let mut at = 0usize;
    for index in 0..count {
        if u32_at(central, at) != Some(CENTRAL_MAGIC) {
            return Err(bad(format!("central record {index} is missing or has no signature")));
        }
        let f16 = |o: usize| u16_at(central, at.saturating_add(o)).unwrap_or(0);
        let f32 = |o: usize| u32_at(central, at.saturating_add(o)).unwrap_or(0);
        let (flags, method) = (f16(8), f16(10));
        let (name_len, extra_len, comment_len) =
            (usize::from(f16(28)), usize::from(f16(30)), usize::from(f16(32)));
        let name_at = at.saturating_add(CENTRAL_LEN);
        let extra_at = name_at.saturating_add(name_len);
        let next = extra_at.saturating_add(extra_len).saturating_add(comment_len);
        let raw_name = central
            .get(name_at..extra_at)
            .ok_or_else(|| bad(format!("central record {index} is truncated")))?;
        let extra = central.get(extra_at..extra_at.saturating_add(extra_len)).unwrap_or_default();
        let name = std::str::from_utf8(raw_name)
            .map_err(|_| bad(format!("the name of entry {index} is not UTF-8")))?;
        if let Some(why) = unsafe_name(name) {
            return Err(bad(format!(
                "entry \"{}\" has {why} in its name; archive names must be relative paths inside the archive",
                escaped(name)
            )));
        }
        if !names.insert(name) {
            return Err(bad(format!(
                "entry \"{}\" appears twice; which one a reader takes is not defined",
                escaped(name)
            )));
        }
        let [plain, packed, local] =
            zip64_fields(extra, [u64::from(f32(24)), u64::from(f32(20)), u64::from(f32(42))])?;
        if flags & FLAG_ENCRYPTED != 0 {
            return Err(bad(format!("entry \"{}\" is encrypted", escaped(name))));
        }
        if method == STORED && packed != plain {
            return Err(bad(format!(
                "entry \"{}\" is stored but declares {packed} bytes stored and {plain} bytes of content",
                escaped(name)
            )));
        }
        let local_at =
            to_usize(local).ok_or_else(|| bad(format!("entry \"{}\" is out of range", escaped(name))))?;
        let (data_at, data) = local_data(bytes, local_at, raw_name, method, packed)
            .map_err(|why| bad(format!("entry \"{}\" {why}", escaped(name))))?;
        let data_end = data_at.saturating_add(data.len());
        spans.push((local_at, data_end));
        out.push(ZipEntry { name, method, data, size: plain });
        at = next;
    }
    spans.push((start, dir_end));
    spans.sort_unstable();
    if spans.windows(2).any(|w| matches!(w, [a, b] if a.1 > b.0)) {
        return Err(bad("two entries, or an entry and the central directory, overlap"));
    }
    Ok(out)
}

/// The stored bytes of the entry whose local header is at `at`, which must name `name`, have `method` and
/// hold `size` bytes inside `bytes`: where it starts and the bytes; on failure, why (completing "entry NAME ...").
fn local_data<'a>(
    bytes: &'a [u8],
    at: usize,
    name: &[u8],
    method: u16,
    size: u64,
) -> std::result::Result<(usize, &'a [u8]), String> {
    if bytes.get(at..at.saturating_add(4)) != Some(&LOCAL_MAGIC[..]) {
        return Err("has no local header where its central record says".to_owned());
    }
    let f16 = |o: usize| u16_at(bytes, at.saturating_add(o)).unwrap_or(0);
    let (local_method, name_len, extra_len) = (f16(8), usize::from(f16(26)), usize::from(f16(28)));
    let name_at = at.saturating_add(LOCAL_LEN);
    if local_method != method || bytes.get(name_at..name_at.saturating_add(name_len)) != Some(name) {
        return Err("has a local header that does not match its central record".to_owned());
    }
    let data_at = name_at.saturating_add(name_len).saturating_add(extra_len);
    let len =
        to_usize(size).ok_or_else(|| format!("declares {size} bytes, more than this machine addresses"))?;
    data_at
        .checked_add(len)
        .and_then(|stop| bytes.get(data_at..stop))
        .map(|data| (data_at, data))
        .ok_or_else(|| format!("declares {size} bytes, but the archive is only {} bytes long", bytes.len()))
}
