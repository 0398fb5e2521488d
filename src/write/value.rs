//! Metadata values as a writer takes them.

use super::storage::{extend, Buf};
use crate::format::MetaType;

/// A metadata value to write.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value<'a> {
    /// `u64`.
    U64(u64),
    /// `i64`.
    I64(i64),
    /// `f64`.
    F64(f64),
    /// `bool`.
    Bool(bool),
    /// `string`.
    String(&'a str),
    /// `bytes`.
    Bytes(&'a [u8]),
    /// `u64[]`.
    U64Array(&'a [u64]),
    /// `i64[]`.
    I64Array(&'a [i64]),
    /// `f64[]`.
    F64Array(&'a [f64]),
    /// `string[]`.
    StringArray(&'a [&'a str]),
}

fn words_len(n: usize) -> usize {
    n.saturating_mul(8)
}

impl Value<'_> {
    /// The type code, the inline bits (scalars) and the pool length (variable values; saturating, so an
    /// impossible size is caught by the caller's `u32` conversion).
    pub(crate) fn describe(&self) -> (MetaType, u64, usize) {
        match *self {
            Value::U64(v) => (MetaType::U64, v, 0),
            Value::I64(v) => (MetaType::I64, u64::from_le_bytes(v.to_le_bytes()), 0),
            Value::F64(v) => (MetaType::F64, v.to_bits(), 0),
            Value::Bool(v) => (MetaType::Bool, u64::from(v), 0),
            Value::String(s) => (MetaType::String, 0, s.len()),
            Value::Bytes(b) => (MetaType::Bytes, 0, b.len()),
            Value::U64Array(a) => (MetaType::U64Array, 0, words_len(a.len())),
            Value::I64Array(a) => (MetaType::I64Array, 0, words_len(a.len())),
            Value::F64Array(a) => (MetaType::F64Array, 0, words_len(a.len())),
            Value::StringArray(items) => {
                let len = items.iter().fold(0usize, |acc, s| acc.saturating_add(4).saturating_add(s.len()));
                (MetaType::StringArray, 0, len)
            }
        }
    }

    /// Appends the pool bytes of a variable value; `false` when `buf` is full or an item is too long.
    pub(crate) fn encode_into<B: Buf<u8>>(&self, buf: &mut B) -> bool {
        match *self {
            Value::U64(_) | Value::I64(_) | Value::F64(_) | Value::Bool(_) => true,
            Value::String(s) => extend(buf, s.as_bytes()),
            Value::Bytes(b) => extend(buf, b),
            Value::U64Array(a) => a.iter().all(|v| extend(buf, &v.to_le_bytes())),
            Value::I64Array(a) => a.iter().all(|v| extend(buf, &v.to_le_bytes())),
            Value::F64Array(a) => a.iter().all(|v| extend(buf, &v.to_bits().to_le_bytes())),
            Value::StringArray(items) => items.iter().all(|s| {
                u32::try_from(s.len())
                    .is_ok_and(|len| extend(buf, &len.to_le_bytes()) && extend(buf, s.as_bytes()))
            }),
        }
    }
}
