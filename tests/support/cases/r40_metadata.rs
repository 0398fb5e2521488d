//! Spec §12, metadata group (§7): R40–R49, each an edit of the base model's records unless it needs a
//! container of its own.

use tpack::zerocopy::little_endian::U32;
use tpack::{MetaType, Rule::*};

use super::super::raw::*;
use super::model::*;
use super::Case;

pub fn cases() -> Vec<Case> {
    let mut cases = vec![
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
        invalid(
            MetaBounds,
            "key-past-pool-and-too-long",
            "a record's key_len set to 2000: its key runs past the pool (R40) and is longer than 1024 bytes \
             (R42); §12 checks a key R40, R41, R42 in that order",
            patched(|b| {
                let (records, _) = section(b, 3);
                b[records + 24 + 4..records + 24 + 6].copy_from_slice(&2000u16.to_le_bytes());
            }),
        ),
        invalid(
            MetaBounds,
            "value-misplaced-and-past-pool",
            "a string value whose value_offset is 5000, not the running position (R41) and past the pool (R40); \
             §12 checks a value R40 before R41",
            model(|r| r.meta[0].value_offset = Some(5000)),
        ),
        invalid(
            MetaBounds,
            "unknown-type-value-past-pool-inline-value",
            "a minor-3 record of unknown type whose value runs past the pool (R40) and whose inline value is 9 \
             (R47): the zero inline value is checked after the value's R40 and R41, as for a known pool type",
            of_unknown_type(|m| {
                m.value = 9;
                m.value_len = Some(5000);
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
            "reserved-and-value-past-pool",
            "a string record whose reserved byte is 1 and whose value runs past the pool: §12 checks the reserved \
             byte (R47) right after the type (R46), before the value's R40",
            model(|r| {
                r.meta[0].reserved = 1;
                r.meta[0].value_len = Some(5000);
            }),
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
            "a minor-3 record of unknown type with its reserved byte set",
            of_unknown_type(|m| m.reserved = 1),
        ),
        invalid(
            MetaValueShape,
            "unknown-type-inline-value",
            "a minor-3 record of unknown type with a non-zero inline value",
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
    ];
    cases.extend(format_1_1());
    // In rule order, each rule's cases in the order given (a stable sort).
    cases.sort_by_key(|c| c.rule.map(tpack::Rule::number));
    cases
}

/// The metadata rules for the value types of format 1.1, each an edit of the 1.1 model's records.
fn format_1_1() -> Vec<Case> {
    let u32s: Vec<u8> = [1u32, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
    vec![
        invalid(
            MetaUnknownType,
            "1-1-type-in-minor-0",
            "a u32 value (format 1.1) in a minor-0 file",
            model(|r| r.meta.push(RawMeta::pooled("zz.u32", MetaType::U32, 5u32.to_le_bytes().to_vec()))),
        ),
        invalid(
            MetaUnknownType,
            "type-27-minor-1",
            "metadata type 27, undefined in 1.1, in a minor-1 file",
            meta_1_1("t.u8", |m| m.value_type = 27),
        ),
        invalid(MetaValueShape, "u16-3-bytes", "a u16 value of 3 bytes", meta_1_1("t.u16", |m| m.bytes.push(0))),
        invalid(MetaValueShape, "u8-empty", "a u8 value of 0 bytes", meta_1_1("t.u8", |m| m.bytes.clear())),
        invalid(
            MetaValueShape,
            "f32-inline",
            "an f32 value stored inline (value 1, no pool bytes): the 1.1 types are all pool types",
            meta_1_1("t.f32", |m| {
                m.bytes.clear();
                m.value = 1;
            }),
        ),
        invalid(
            MetaValueShape,
            "f32-array-6-bytes",
            "an f32[] value of 6 bytes",
            meta_1_1("t.f32[]", |m| m.bytes.truncate(6)),
        ),
        invalid(
            MetaValueShape,
            "i16-array-odd",
            "an i16[] value of 3 bytes",
            meta_1_1("t.i16[]", |m| m.bytes.truncate(3)),
        ),
        invalid(
            MetaValueShape,
            "array-header-cut",
            "an array[] value of 5 bytes: an item header cut short",
            meta_1_1("t.array[]", |m| m.bytes = vec![MetaType::U8_ARRAY.code(), 0, 0, 0, 1]),
        ),
        invalid(
            MetaValueShape,
            "array-item-past-value",
            "an array[] item whose length runs past the value",
            meta_1_1("t.array[]", |m| {
                let mut item = array_item(MetaType::U32_ARRAY, &u32s);
                item[4] += 4;
                m.bytes = item;
            }),
        ),
        invalid(
            MetaValueShape,
            "array-item-reserved",
            "an array[] item header with a non-zero reserved byte",
            meta_1_1("t.array[]", |m| {
                let mut item = array_item(MetaType::U32_ARRAY, &u32s);
                item[2] = 1;
                m.bytes = item;
            }),
        ),
        invalid(
            MetaValueShape,
            "array-item-scalar",
            "an array[] item of type u64, which is not an array type",
            meta_1_1("t.array[]", |m| m.bytes = array_item(MetaType::U64, &7u64.to_le_bytes())),
        ),
        invalid(
            MetaValueShape,
            "array-item-bytes",
            "an array[] item of type bytes, which is not an array type",
            meta_1_1("t.array[]", |m| m.bytes = array_item(MetaType::BYTES, b"xy")),
        ),
        invalid(
            MetaValueShape,
            "array-item-body",
            "an array[] item of type u32[] with a 3-byte body",
            meta_1_1("t.array[]", |m| m.bytes = array_item(MetaType::U32_ARRAY, &[1, 2, 3])),
        ),
        invalid(
            MetaValueShape,
            "array-item-string-array-framing",
            "an array[] item of type string[] whose item length runs past the item",
            meta_1_1("t.array[]", |m| m.bytes = array_item(MetaType::STRING_ARRAY, &[9, 0, 0, 0, b'a'])),
        ),
        invalid(
            MetaValueShape,
            "array-depth-9",
            "array[] nested 9 levels deep, one more than allowed",
            meta_1_1("t.array[]", |m| m.bytes = nested_arrays(9)),
        ),
        invalid(
            MetaValueShape,
            "array-empty-at-depth-9",
            "array[] values nested so that an empty array[] item is the 9th level: a level counts though it is \
             empty",
            meta_1_1("t.array[]", |m| {
                let mut value = array_item(MetaType::ARRAY_ARRAY, &[]);
                for _ in 0..7 {
                    value = array_item(MetaType::ARRAY_ARRAY, &value);
                }
                m.bytes = value;
            }),
        ),
        invalid(
            MetaValueShape,
            "framing-before-bool",
            "an array[] holding a bool[] with a 2, then an item past the value: R47 for the whole value first",
            meta_1_1("t.array[]", |m| {
                let mut bad = array_item(MetaType::U8_ARRAY, &[1]);
                bad[4] = 9;
                m.bytes = [array_item(MetaType::BOOL_ARRAY, &[2]), bad].concat();
            }),
        ),
        invalid(MetaBool, "bool-array", "a bool[] element of 2", meta_1_1("t.bool[]", |m| m.bytes[1] = 2)),
        invalid(
            MetaBool,
            "bool-array-minor-3",
            "a bool[] element of 2 in a minor-3 file: the 1.1 types are defined in every file of minor 1 and later, \
             so a 1.1 reader checks them there too (not opaque bytes)",
            {
                let mut raw = base_1_1();
                as_minor_3(&mut raw);
                raw.meta.iter_mut().find(|m| m.key == b"t.bool[]").unwrap().bytes[1] = 2;
                raw.encode()
            },
        ),
        invalid(
            MetaBool,
            "nested-bool-array",
            "a bool[] element of 255 inside an array[] inside an array[]",
            meta_1_1("t.array[]", |m| {
                m.bytes = array_item(MetaType::ARRAY_ARRAY, &array_item(MetaType::BOOL_ARRAY, &[1, 255]))
            }),
        ),
        invalid(
            MetaBool,
            "before-utf8",
            "an array[] whose first item is a bool[] with a 3 and whose second is a string[] with bad UTF-8: \
             depth-first, the bool comes first",
            meta_1_1("t.array[]", |m| {
                m.bytes = [
                    array_item(MetaType::BOOL_ARRAY, &[3]),
                    array_item(MetaType::STRING_ARRAY, &string_array(&[b"\xff"])),
                ]
                .concat()
            }),
        ),
        invalid(
            MetaUtf8,
            "nested-string-array",
            "a string[] item with a lone 0xC3 inside an array[]",
            meta_1_1("t.array[]", |m| {
                m.bytes = array_item(MetaType::STRING_ARRAY, &string_array(&[b"ok", b"\xc3"]))
            }),
        ),
    ]
}

/// The 1.1 model with the record keyed `key` changed by `edit`.
fn meta_1_1(key: &str, edit: impl FnOnce(&mut RawMeta)) -> Vec<u8> {
    model_1_1(|r| edit(r.meta.iter_mut().find(|m| m.key == key.as_bytes()).unwrap()))
}

/// The base model as a minor-3 file whose `blob` record has type 77, unknown to a 1.2 reader, then `edit`.
fn of_unknown_type(edit: impl FnOnce(&mut RawMeta)) -> Vec<u8> {
    model(|r| {
        as_minor_3(r);
        r.meta[5].value_type = 77;
        edit(&mut r.meta[5]);
    })
}
