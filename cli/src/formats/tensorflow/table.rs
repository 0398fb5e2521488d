//! The SSTable a tensor bundle's `.index` file is: TensorFlow's `table` format (LevelDB's, with TensorFlow's
//! own magic number): data blocks of prefix-compressed key/value records, an index block of handles to them,
//! and a 48-byte footer. Read whole and checked: every block's CRC-32C, every handle inside the file, keys in
//! strictly increasing order, nothing compressed (tensor bundles never are).
//!
//! Bounds: a key is at most [`MAX_KEY_LEN`] bytes, and the keys rebuilt from their shared prefixes add up to
//! at most [`KEY_BYTES_PER_FILE_BYTE`] times the file's length, so that prefix compression cannot turn a small
//! file into a large amount of work or memory.

/// The last 8 bytes of the file: TensorFlow's `kTableMagicNumber`, little-endian.
pub(crate) const MAGIC: [u8; 8] = 0xdb47_7524_8b80_fb57_u64.to_le_bytes();

/// The footer: two block handles padded to 40 bytes, then the magic.
const FOOTER_LEN: usize = 48;

/// A block's trailer: its compression type and the masked CRC-32C of the block and that byte.
const BLOCK_TRAILER_LEN: usize = 5;

/// The longest key read. TensorFlow's are object paths (`model/layer/kernel/.ATTRIBUTES/VARIABLE_VALUE`) and
/// slice keys made from them, a few hundred bytes at most.
pub(crate) const MAX_KEY_LEN: usize = 4096;

/// How many bytes of rebuilt keys one byte of file may give (TensorFlow's files give about one).
const KEY_BYTES_PER_FILE_BYTE: usize = 32;

/// One record: a key and where its value lies in the file.
#[derive(Debug)]
pub(crate) struct Record {
    pub(crate) key: Vec<u8>,
    pub(crate) value: std::ops::Range<usize>,
}

/// CRC-32C as LevelDB and TensorFlow store it ("masked", so that a CRC of data holding CRCs is not
/// degenerate).
pub(crate) fn masked_crc32c(bytes: &[u8]) -> u32 {
    mask(crc32c::crc32c(bytes))
}

fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Every record of the table in `file`, in key order.
///
/// # Errors
/// Why `file` is not a sound table, in words.
pub(crate) fn records(file: &[u8]) -> Result<Vec<Record>, String> {
    let footer_at = file
        .len()
        .checked_sub(FOOTER_LEN)
        .filter(|_| file.ends_with(&MAGIC))
        .ok_or("is not an SSTable (it does not end with the table magic number)")?;
    let mut footer = Cursor { bytes: file, at: footer_at };
    let handles_end = footer_at + FOOTER_LEN - MAGIC.len();
    let _metaindex = footer.handle(handles_end)?;
    let index = footer.handle(handles_end)?;
    let index_block = block(file, index)?;
    let mut out = Vec::new();
    let mut budget = file.len().saturating_mul(KEY_BYTES_PER_FILE_BYTE);
    let mut handles = Vec::new();
    walk(file, index_block, &mut budget, |_, value| {
        let mut c = Cursor { bytes: file, at: value.start };
        handles.push(c.handle(value.end)?);
        if c.at != value.end {
            return Err("has an index record with bytes after its block handle".to_owned());
        }
        Ok(())
    })?;
    for h in handles {
        let data = block(file, h)?;
        walk(file, data, &mut budget, |key, value| {
            if out.last().is_some_and(|last: &Record| last.key.as_slice() >= key) {
                return Err(format!(
                    "has the keys {:?} and {:?} out of order (a table's keys strictly increase)",
                    String::from_utf8_lossy(&out.last().map(|r: &Record| r.key.clone()).unwrap_or_default()),
                    String::from_utf8_lossy(key)
                ));
            }
            out.push(Record { key: key.to_vec(), value });
            Ok(())
        })?;
    }
    Ok(out)
}

/// A block handle: where a block lies.
#[derive(Clone, Copy, Debug)]
struct Handle {
    offset: u64,
    size: u64,
}

/// The contents of the block `h` (without its trailer), its trailer checked.
fn block(file: &[u8], h: Handle) -> Result<std::ops::Range<usize>, String> {
    let start = usize::try_from(h.offset).ok();
    let end = start.zip(usize::try_from(h.size).ok()).and_then(|(s, n)| s.checked_add(n));
    let (start, end) = match (start, end) {
        (Some(s), Some(e)) if e.checked_add(BLOCK_TRAILER_LEN).is_some_and(|t| t <= file.len()) => (s, e),
        _ => {
            return Err(format!(
                "has a block at offset {}, {} bytes, past the end of its {} bytes",
                h.offset,
                h.size,
                file.len()
            ))
        }
    };
    let kind = file[end];
    if kind != 0 {
        return Err(format!(
            "has a block at offset {start} compressed (type {kind}); TensorFlow writes tensor bundle indexes \
             uncompressed, and tpack reads only those"
        ));
    }
    let stored = u32::from_le_bytes([file[end + 1], file[end + 2], file[end + 3], file[end + 4]]);
    let computed = masked_crc32c(&file[start..=end]);
    if stored != computed {
        return Err(format!(
            "has a block at offset {start} whose CRC-32C is {computed:#010x} where {stored:#010x} is stored: the \
             file is damaged"
        ));
    }
    Ok(start..end)
}

/// Calls `each` with every record of the block at `range` of `file`: its key (rebuilt from the shared
/// prefix) and where its value lies.
fn walk(
    file: &[u8],
    range: std::ops::Range<usize>,
    budget: &mut usize,
    mut each: impl FnMut(&[u8], std::ops::Range<usize>) -> Result<(), String>,
) -> Result<(), String> {
    let block = &file[range.clone()];
    let bad = |why: &str| format!("has a damaged block at offset {}: {why}", range.start);
    // The restart array ends the block: a u32 count, after that many u32 offsets. Records fill the rest.
    let count_at = block.len().checked_sub(4).ok_or_else(|| bad("shorter than its restart count"))?;
    let restarts = u32::from_le_bytes(block[count_at..].try_into().unwrap_or_default()) as usize;
    let records_end = restarts
        .checked_mul(4)
        .and_then(|n| count_at.checked_sub(n))
        .ok_or_else(|| bad("its restart array is longer than the block"))?;
    let mut c = Cursor { bytes: &file[..range.start + records_end], at: range.start };
    let mut key: Vec<u8> = Vec::new();
    while c.at < c.bytes.len() {
        let shared = c.varint_usize()?;
        let fresh = c.varint_usize()?;
        let value_len = c.varint_usize()?;
        if shared > key.len() {
            return Err(bad(&format!("a key shares {shared} bytes with a key of {}", key.len())));
        }
        let fresh_bytes = c.take(fresh).ok_or_else(|| bad("a key runs past the block"))?;
        key.truncate(shared);
        key.extend_from_slice(fresh_bytes);
        if key.len() > MAX_KEY_LEN {
            return Err(bad(&format!(
                "a key of {} bytes (tpack reads keys of up to {MAX_KEY_LEN})",
                key.len()
            )));
        }
        *budget = budget.checked_sub(key.len()).ok_or_else(|| {
            bad("its keys, rebuilt from their shared prefixes, add up to far more than the file holds")
        })?;
        let value_start = c.at;
        c.take(value_len).ok_or_else(|| bad("a value runs past the block"))?;
        each(&key, value_start..c.at)?;
    }
    Ok(())
}

/// Reads varints and byte runs from `bytes`, from `at`.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    /// A base-128 varint of at most 10 bytes.
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let byte = *self.bytes.get(self.at).ok_or("has a number cut off by the end of its block")?;
            self.at += 1;
            value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("has a number longer than 10 bytes".to_owned())
    }

    fn varint_usize(&mut self) -> Result<usize, String> {
        let v = self.varint()?;
        usize::try_from(v).map_err(|_| format!("has a length of {v} bytes"))
    }

    /// A block handle (offset, size), which must end at or before `end`.
    fn handle(&mut self, end: usize) -> Result<Handle, String> {
        let offset = self.varint()?;
        let size = self.varint()?;
        if self.at > end {
            return Err("has a block handle that runs past its place".to_owned());
        }
        Ok(Handle { offset, size })
    }

    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len())?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mask_is_leveldbs() {
        // LevelDB's crc32c_test: Unmask(Mask(crc)) == crc and Mask(crc) != crc; and CRC-32C("123456789") is
        // 0xe3069283 (RFC 3720's check value), masked by hand.
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        let m = masked_crc32c(b"123456789");
        assert_eq!(m, 0xe306_9283_u32.rotate_right(15).wrapping_add(0xa282_ead8));
        assert_ne!(m, 0xe306_9283);
    }

    #[test]
    fn a_varint_longer_than_ten_bytes_is_refused() {
        let bytes = [0x80u8; 11];
        let mut c = Cursor { bytes: &bytes, at: 0 };
        assert!(c.varint().unwrap_err().contains("longer than 10 bytes"));
        let mut c = Cursor { bytes: &[0x96, 0x01], at: 0 };
        assert_eq!(c.varint().unwrap(), 150);
    }
}
