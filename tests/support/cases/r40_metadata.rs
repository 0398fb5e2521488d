//! Spec §12, metadata group (§7): R40–R49, each an edit of the base model's records unless it needs a
//! container of its own.

use tpack::zerocopy::little_endian::U32;
use tpack::{MetaType, Rule::*};

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    vec![
        // R40
        invalid(
            MetaBounds,
            "records-past-section",
            "meta_count far larger than the section holds",
            patched(|b| header_mut(b).meta_count = U32::new(1000)),
        ),
        invalid(
            MetaBounds,
            "value-past-pool",
            "the last value runs one byte past the pool",
            model(|r| {
                let last = r.meta.iter_mut().max_by(|a, b| a.key.cmp(&b.key)).unwrap();
                last.value_len = Some(last.bytes.len() as u32 + 1);
            }),
        ),
        invalid(
            MetaBounds,
            "value-past-pool-inline-bits",
            "the last value runs one byte past the pool, and its record's inline value is non-zero: R47's zero \
             value for a pool type is a type-specific part, which needs the value inside the pool (R40) first",
            model(|r| {
                let last = r.meta.iter_mut().max_by(|a, b| a.key.cmp(&b.key)).unwrap();
                last.value_len = Some(last.bytes.len() as u32 + 1);
                last.value = 1;
            }),
        ),
        // R41
        invalid(
            MetaPoolLayout,
            "trailing-byte",
            "a pool byte after the last value",
            model(|r| r.extra_pool = vec![0]),
        ),
        invalid(
            MetaPoolLayout,
            "empty-value-at-0",
            "an empty string value whose value_offset is 0 instead of the running position",
            model(|r| {
                r.meta[0].bytes.clear();
                r.meta[0].value_offset = Some(0);
            }),
        ),
        // R42
        invalid(MetaKeyLength, "empty", "an empty key", model(|r| r.meta[1].key.clear())),
        // R43
        invalid(
            MetaKeyUtf8,
            "ff-byte",
            "a key with a 0xFF byte",
            model(|r| r.meta[1].key = b"lay\xffers".to_vec()),
        ),
        // R44
        invalid(
            MetaKeyOrder,
            "reversed",
            "records in descending key order",
            model(|r| {
                r.meta.sort_by(|a, b| b.key.cmp(&a.key));
                r.sort_meta = false;
            }),
        ),
        // R45
        invalid(
            MetaDuplicateKey,
            "two-records",
            "two records with key 'layers'",
            model(|r| r.meta[2].key = b"layers".to_vec()),
        ),
        // R46
        invalid(
            MetaUnknownType,
            "code-99",
            "value type 99 in a minor-0 file",
            model(|r| r.meta[1].value_type = 99),
        ),
        // R47
        invalid(
            MetaValueShape,
            "reserved",
            "a record's reserved byte set",
            model(|r| r.meta[1].reserved = 1),
        ),
        invalid(
            MetaValueShape,
            "scalar-with-len",
            "a u64 record with value_len 8",
            model(|r| r.meta[1].value_len = Some(8)),
        ),
        invalid(
            MetaValueShape,
            "array-len-7",
            "a u64[] value of 7 bytes",
            model(|r| r.meta[6].bytes.truncate(7)),
        ),
        invalid(
            MetaValueShape,
            "string-array-framing",
            "a string[] item whose length runs past the value",
            model(|r| {
                r.meta[7].bytes = string_array(&[b"ab"]);
                r.meta[7].bytes[0] = 9;
            }),
        ),
        invalid(
            MetaValueShape,
            "string-array-framing-after-bad-utf8",
            "a string[] value 01 00 00 00 ff 00: an item of one byte 0xFF (bad UTF-8), then 2 bytes too few \
             for an item length; the framing error is R47, not R49, since R49 for string[] needs the framing \
             of R47",
            Raw {
                meta: vec![RawMeta::pooled("a", MetaType::STRING_ARRAY, vec![0x01, 0, 0, 0, 0xff, 0])],
                ..Raw::default()
            }
            .encode(),
        ),
        invalid(
            MetaValueShape,
            "inline-on-variable",
            "a string record with a non-zero inline value",
            model(|r| r.meta[0].value = 1),
        ),
        invalid(
            MetaValueShape,
            "unknown-type-reserved",
            "a minor-2 record of unknown type with its reserved byte set",
            of_unknown_type(|m| m.reserved = 1),
        ),
        invalid(
            MetaValueShape,
            "unknown-type-inline-value",
            "a minor-2 record of unknown type with a non-zero inline value",
            of_unknown_type(|m| m.value = 9),
        ),
        // R48
        invalid(MetaBool, "two", "a bool of value 2", model(|r| r.meta[4].value = 2)),
        // R49
        invalid(
            MetaUtf8,
            "string",
            "a string value with a 0xFF byte",
            model(|r| r.meta[0].bytes = b"to\xffy".to_vec()),
        ),
        invalid(
            MetaUtf8,
            "string-array-item",
            "a string[] item with a lone continuation byte",
            model(|r| {
                r.meta[7].bytes = string_array(&[b"ok", b"\x80"]);
            }),
        ),
    ]
}

/// The base model as a minor-2 file whose `blob` record has type 77, unknown to a 1.1 reader, then `edit`.
fn of_unknown_type(edit: impl FnOnce(&mut RawMeta)) -> Vec<u8> {
    model(|r| {
        r.minor = 2;
        r.meta[5].value_type = 77;
        edit(&mut r.meta[5]);
    })
}
