//! JSON → metadata: the metadata records of a pack manifest (`[{"key", "type", "value"}, …]`, the form
//! `unpack` writes) and each value in spec §13's JSON form, into values the writer takes
//! ([`OwnedMetaValue`]). Every problem names the record and the field.

use std::collections::HashMap;

use serde_json::Value as Json;
use tpack::format::{MAX_ARRAY_DEPTH, MAX_KEY_LEN};
use tpack::{MetaType, OwnedMetaValue};

use crate::json_fields::unknown_fields;

const META_FIELDS: &[&str] = &["key", "type", "value"];

/// Checks the `metadata` records `items` of a manifest, adding every problem to `problems`; returns the
/// values of the records that have none, in order.
pub(crate) fn records(items: &[Json], problems: &mut Vec<String>) -> Vec<(String, OwnedMetaValue)> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(obj) = item.as_object() else {
            problems.push(format!("metadata record {i} must be a JSON object"));
            continue;
        };
        let label = match obj.get("key").and_then(Json::as_str) {
            Some(key) => format!("metadata record {i} ({key:?})"),
            None => format!("metadata record {i}"),
        };
        unknown_fields(obj, META_FIELDS, &label, problems);
        let mut bad = |field: &str, why: String| problems.push(format!("{label}, field {field:?}: {why}"));
        let key = match obj.get("key") {
            Some(Json::String(k)) if k.is_empty() || k.len() > usize::from(MAX_KEY_LEN) => {
                bad("key", format!("is {} bytes long; keys are 1 to {MAX_KEY_LEN} bytes", k.len()));
                None
            }
            Some(Json::String(k)) => {
                if let Some(first) = seen.insert(k.clone(), i) {
                    bad("key", format!("duplicates the key of metadata record {first}"));
                }
                Some(k.clone())
            }
            _ => {
                bad("key", "must be a string".to_owned());
                None
            }
        };
        let Some(type_name) = obj.get("type").and_then(Json::as_str) else {
            bad("type", format!("must be one of {}", type_names()));
            continue;
        };
        let Some(value) = obj.get("value") else {
            bad("value", "is missing".to_owned());
            continue;
        };
        match meta_value(type_name, value) {
            Ok(v) => {
                if let Some(key) = key {
                    out.push((key, v));
                }
            }
            Err((field, why)) => bad(field, why),
        }
    }
    out
}

/// An f64 from a JSON number (parsed to the nearest f64: serde_json's `float_roundtrip`), from
/// `{"f64_bits": "<16 hex digits>"}` as `unpack` writes NaN and ±∞, or from the bare 16 hex digits that
/// spec §13 and manifests before the marked form use.
pub(crate) fn f64_of(v: &Json) -> std::result::Result<f64, String> {
    let bits = |s: &str| {
        let digits = s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit());
        digits
            .then(|| u64::from_str_radix(s, 16).ok())
            .flatten()
            .map(f64::from_bits)
            .ok_or_else(|| format!("{s:?} is not the 16 hex digits of an f64 bit pattern"))
    };
    let key = crate::metadata_json::render::F64_BITS_KEY;
    match v {
        Json::Number(n) => n.as_f64().ok_or_else(|| format!("{n} is not a number")),
        Json::String(s) => bits(s),
        Json::Object(m) => match (m.get(key), m.len()) {
            (Some(Json::String(s)), 1) => bits(s),
            _ => Err(format!("{v} is not {{{key:?}: \"<16 hex digits>\"}}, the form of NaN and ±∞")),
        },
        other => Err(format!("{other} is neither a number nor {{{key:?}: \"<16 hex digits>\"}}")),
    }
}

fn i64_of(v: &Json) -> std::result::Result<i64, String> {
    v.as_i64().ok_or_else(|| format!("{v} is not an integer from -2^63 to 2^63 - 1"))
}

fn u64_of(v: &Json) -> std::result::Result<u64, String> {
    match (v.as_u64(), v.as_i64()) {
        (Some(u), _) => Ok(u),
        (None, Some(_)) => Err(format!("{v} is negative")),
        _ => Err(format!("{v} is not an integer from 0 to 2^64 - 1")),
    }
}

fn array_of<T>(
    v: &Json,
    each: impl Fn(&Json) -> std::result::Result<T, String>,
) -> std::result::Result<Vec<T>, String> {
    let items = v.as_array().ok_or_else(|| format!("{v} is not an array"))?;
    items.iter().enumerate().map(|(i, x)| each(x).map_err(|why| format!("item {i}: {why}"))).collect()
}

/// An f32 from the 8 lowercase or uppercase hex digits of its bit pattern (spec §13's form, which `unpack`
/// writes): every f32, NaN payloads and signalling NaNs included, is exact.
fn f32_of(v: &Json) -> std::result::Result<f32, String> {
    let s =
        v.as_str().ok_or_else(|| format!("{v} is not a string of the 8 hex digits of an f32 bit pattern"))?;
    let digits = s.len() == 8 && s.bytes().all(|b| b.is_ascii_hexdigit());
    digits.then(|| u32::from_str_radix(s, 16).ok()).flatten().map(f32::from_bits).ok_or_else(|| {
        format!("{s:?} is not the 8 hex digits of an f32 bit pattern (such as \"3f800000\" for 1)")
    })
}

/// An integer of a narrow type `T`, range-checked.
fn narrow_of<T: TryFrom<i128>>(v: &Json, type_name: &str) -> std::result::Result<T, String> {
    let n = v.as_i64().map(i128::from).or_else(|| v.as_u64().map(i128::from));
    let n = n.ok_or_else(|| format!("{v} is not an integer"))?;
    T::try_from(n).map_err(|_| format!("{n} is out of range for {type_name}"))
}

fn bool_of(v: &Json) -> std::result::Result<bool, String> {
    v.as_bool().ok_or_else(|| format!("{v} is not true or false"))
}

/// The metadata type names a manifest takes, for messages.
fn type_names() -> String {
    MetaType::ALL.iter().filter_map(|t| t.name()).collect::<Vec<_>>().join(", ")
}

/// The value of type `type_name` written as `v`; for an error, the field to blame and why.
fn meta_value(type_name: &str, v: &Json) -> std::result::Result<OwnedMetaValue, (&'static str, String)> {
    meta_value_at(type_name, v, 1)
}

/// [`meta_value`] for a value nested `depth` levels of `array[]` deep (1 for a record's own value).
fn meta_value_at(
    type_name: &str,
    v: &Json,
    depth: u8,
) -> std::result::Result<OwnedMetaValue, (&'static str, String)> {
    let value = |r: std::result::Result<OwnedMetaValue, String>| r.map_err(|why| ("value", why));
    match type_name {
        "u64" => value(u64_of(v).map(OwnedMetaValue::from)),
        "i64" => value(i64_of(v).map(OwnedMetaValue::from)),
        "f64" => value(f64_of(v).map(OwnedMetaValue::from)),
        "bool" => value(bool_of(v).map(OwnedMetaValue::from)),
        "string" => value(v.as_str().map(OwnedMetaValue::from).ok_or_else(|| format!("{v} is not a string"))),
        "bytes" => value(
            v.as_str()
                .ok_or_else(|| format!("{v} is not a string of hex digits"))
                .and_then(|s| hex::decode(s).map_err(|e| format!("is not hex: {e}")))
                .map(OwnedMetaValue::bytes),
        ),
        "u64[]" => value(array_of(v, u64_of).map(OwnedMetaValue::from)),
        "i64[]" => value(array_of(v, i64_of).map(OwnedMetaValue::from)),
        "f64[]" => value(array_of(v, f64_of).map(OwnedMetaValue::from)),
        "string[]" => value(
            array_of(v, |x| x.as_str().map(str::to_owned).ok_or_else(|| format!("{x} is not a string")))
                .and_then(|items| OwnedMetaValue::string_array(items).map_err(|e| e.to_string())),
        ),
        "u8" => value(narrow_of::<u8>(v, "u8").map(OwnedMetaValue::from)),
        "i8" => value(narrow_of::<i8>(v, "i8").map(OwnedMetaValue::from)),
        "u16" => value(narrow_of::<u16>(v, "u16").map(OwnedMetaValue::from)),
        "i16" => value(narrow_of::<i16>(v, "i16").map(OwnedMetaValue::from)),
        "u32" => value(narrow_of::<u32>(v, "u32").map(OwnedMetaValue::from)),
        "i32" => value(narrow_of::<i32>(v, "i32").map(OwnedMetaValue::from)),
        "f32" => value(f32_of(v).map(OwnedMetaValue::from)),
        "u8[]" => value(array_of(v, |x| narrow_of::<u8>(x, "u8")).map(OwnedMetaValue::u8_array)),
        "i8[]" => value(array_of(v, |x| narrow_of::<i8>(x, "i8")).map(OwnedMetaValue::from)),
        "u16[]" => value(array_of(v, |x| narrow_of::<u16>(x, "u16")).map(OwnedMetaValue::from)),
        "i16[]" => value(array_of(v, |x| narrow_of::<i16>(x, "i16")).map(OwnedMetaValue::from)),
        "u32[]" => value(array_of(v, |x| narrow_of::<u32>(x, "u32")).map(OwnedMetaValue::from)),
        "i32[]" => value(array_of(v, |x| narrow_of::<i32>(x, "i32")).map(OwnedMetaValue::from)),
        "f32[]" => value(array_of(v, f32_of).map(OwnedMetaValue::from)),
        "bool[]" => value(array_of(v, bool_of).map(OwnedMetaValue::from)),
        "array[]" => value(
            array_of(v, |item| array_item(item, depth))
                .and_then(|items| OwnedMetaValue::array_array(items).map_err(|e| e.to_string())),
        ),
        other => Err(("type", format!("{other:?} is not a metadata type (known: {})", type_names()))),
    }
}

/// One item of an `array[]` nested `depth` levels deep: `{"type": "<an array type>", "value": …}`, as spec
/// §13 writes it.
fn array_item(item: &Json, depth: u8) -> std::result::Result<OwnedMetaValue, String> {
    let shape = || format!("{item} is not {{\"type\": \"<an array type>\", \"value\": …}}");
    let obj = item.as_object().filter(|o| o.len() == 2).ok_or_else(shape)?;
    let (Some(Json::String(t)), Some(v)) = (obj.get("type"), obj.get("value")) else { return Err(shape()) };
    if !MetaType::from_name(t).is_some_and(MetaType::is_array) {
        return Err(format!("type {t:?} is not an array type, and the items of an array[] are arrays"));
    }
    if t == "array[]" && depth >= MAX_ARRAY_DEPTH {
        return Err(format!(
            "nests array[] more than {} levels deep, the most tpack stores",
            MAX_ARRAY_DEPTH
        ));
    }
    meta_value_at(t, v, depth.saturating_add(1)).map_err(|(_, why)| why)
}
