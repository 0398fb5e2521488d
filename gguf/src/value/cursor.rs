//! The cursor that the parser (`crate::read`) walks the file with, and that a [`GgufArray`] reads its
//! validated elements with: its primitives, and the decoding of values and arrays.

use crate::error::GgufError;
use crate::format::{
    min_encoded_size, MAX_ARRAY_DEPTH, T_ARRAY, T_BOOL, T_F32, T_F64, T_I16, T_I32, T_I64, T_I8, T_STRING,
    T_U16, T_U32, T_U64, T_U8,
};

use super::{GgufArray, GgufValue};

/// The error for an item `what` starting at `at` that the input cannot hold.
pub(crate) fn truncated(what: &'static str, at: usize) -> GgufError {
    GgufError::Truncated { what, offset: to_u64(at) }
}

/// A `usize` as a `u64` (lossless on every platform Rust supports; saturating just in case).
pub(crate) fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A cursor over the input. Every read either consumes exactly what it returns or fails with the offset of
/// the item it was reading.
#[derive(Clone)]
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
    /// Numbers are big-endian (told by the version field, which the header reads first).
    pub(crate) big_endian: bool,
}

impl<'a> Reader<'a> {
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], GgufError> {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        let (head, _) = rest.split_at_checked(n).ok_or_else(|| truncated(what, self.pos))?;
        self.pos = self.pos.saturating_add(n);
        Ok(head)
    }

    pub(crate) fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], GgufError> {
        let at = self.pos;
        let head = self.take(N, what)?;
        let mut bytes = <[u8; N]>::try_from(head).map_err(|_| truncated(what, at))?;
        // Numbers are then decoded little-endian: reversing a big-endian one first reads it right.
        if self.big_endian {
            bytes.reverse();
        }
        Ok(bytes)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, GgufError> {
        self.array::<1>(what).map(u8::from_le_bytes)
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, GgufError> {
        self.array(what).map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, GgufError> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// A string: a u64 byte length, then that many bytes of UTF-8.
    pub(crate) fn string(&mut self, what: &'static str) -> Result<&'a str, GgufError> {
        let at = self.pos;
        let len = self.u64(what)?;
        let len = usize::try_from(len).map_err(|_| truncated(what, at))?;
        let raw = self.take(len, what).map_err(|_| truncated(what, at))?;
        core::str::from_utf8(raw).map_err(|_| GgufError::InvalidUtf8 { what, offset: to_u64(at) })
    }

    /// One value of type `code`, under metadata key `key`.
    pub(crate) fn value(&mut self, code: u32, key: &str) -> Result<GgufValue<'a>, GgufError> {
        const W: &str = "metadata value";
        Ok(match code {
            T_U8 => GgufValue::U8(self.u8(W)?),
            T_I8 => GgufValue::I8(self.array(W).map(i8::from_le_bytes)?),
            T_U16 => GgufValue::U16(self.array(W).map(u16::from_le_bytes)?),
            T_I16 => GgufValue::I16(self.array(W).map(i16::from_le_bytes)?),
            T_U32 => GgufValue::U32(self.u32(W)?),
            T_I32 => GgufValue::I32(self.array(W).map(i32::from_le_bytes)?),
            T_F32 => GgufValue::F32(self.array(W).map(f32::from_le_bytes)?),
            T_BOOL => GgufValue::Bool(self.bool(key)?),
            T_STRING => GgufValue::String(self.string("string value")?),
            T_U64 => GgufValue::U64(self.u64(W)?),
            T_I64 => GgufValue::I64(self.array(W).map(i64::from_le_bytes)?),
            T_F64 => GgufValue::F64(self.array(W).map(f64::from_le_bytes)?),
            T_ARRAY => GgufValue::Array(self.gguf_array(key, 1)?),
            _ => return Err(GgufError::UnknownValueType { key: key.into(), code }),
        })
    }

    fn bool(&mut self, key: &str) -> Result<bool, GgufError> {
        byte_to_bool(self.u8("metadata value")?, key)
    }

    /// An array (element type, count, elements) at nesting level `depth` (1 for a top-level array), checked
    /// element by element and returned as a view of its bytes: nothing is copied or allocated, whatever its
    /// count, so memory does not grow with the file's arrays (a 6 MB file can hold 500,000 nested arrays).
    pub(crate) fn gguf_array(&mut self, key: &str, depth: usize) -> Result<GgufArray<'a>, GgufError> {
        if depth > MAX_ARRAY_DEPTH {
            return Err(GgufError::ArrayTooDeep { key: key.into() });
        }
        let at = self.pos;
        let code = self.u32("array header")?;
        let count = self.u64("array header")?;
        let min =
            min_encoded_size(code).ok_or_else(|| GgufError::UnknownValueType { key: key.into(), code })?;
        // Every element takes at least `min` bytes: refuse counts the input cannot hold up front.
        let n = count
            .checked_mul(min)
            .filter(|&need| need <= to_u64(self.remaining()))
            .and_then(|_| usize::try_from(count).ok())
            .ok_or_else(|| truncated("array", at))?;
        let start = self.pos;
        match code {
            T_U8 | T_I8 | T_U16 | T_I16 | T_U32 | T_I32 | T_F32 | T_U64 | T_I64 | T_F64 => {
                let width = usize::try_from(min).map_err(|_| truncated("array elements", at))?;
                let len = n.checked_mul(width).ok_or_else(|| truncated("array elements", at))?;
                self.take(len, "array elements")?;
            }
            T_BOOL => {
                for &b in self.take(n, "array elements")? {
                    byte_to_bool(b, key)?;
                }
            }
            T_STRING => {
                for _ in 0..n {
                    self.string("string in an array")?;
                }
            }
            T_ARRAY => {
                for _ in 0..n {
                    self.gguf_array(key, depth.saturating_add(1))?;
                }
            }
            _ => return Err(GgufError::UnknownValueType { key: key.into(), code }),
        }
        let bytes = self.bytes.get(start..self.pos).unwrap_or_default();
        Ok(GgufArray::from_validated(code, n, bytes, self.big_endian, depth))
    }

    /// A reader of the elements `bytes` of an array the parser validated.
    pub(crate) fn of_validated(bytes: &'a [u8], big_endian: bool) -> Self {
        Reader { bytes, pos: 0, big_endian }
    }

    /// The next element, of type `code`, of an array at nesting level `depth` that the parser validated.
    pub(crate) fn element(&mut self, code: u32, depth: usize) -> Result<GgufValue<'a>, GgufError> {
        if code == T_ARRAY {
            return self.gguf_array("", depth.saturating_add(1)).map(GgufValue::Array);
        }
        self.value(code, "")
    }
}

/// A stored boolean: strictly 0 or 1 (ggml reads any nonzero byte as true; gguf-py writes only 0 and 1).
fn byte_to_bool(b: u8, key: &str) -> Result<bool, GgufError> {
    match b {
        0 => Ok(false),
        1 => Ok(true),
        value => Err(GgufError::InvalidBool { key: key.into(), value }),
    }
}
