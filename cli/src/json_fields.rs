//! Reading the fields of JSON objects that a user writes (pack manifests and their metadata records): unknown
//! fields named with a suggestion, integers in the forms a manifest takes.

use serde_json::{Map, Value as Json};

/// Reports every field of `obj` not in `known` as a problem of `what`, with the nearest known name.
pub(crate) fn unknown_fields(
    obj: &Map<String, Json>,
    known: &[&str],
    what: &str,
    problems: &mut Vec<String>,
) {
    for key in obj.keys() {
        if !known.contains(&key.as_str()) {
            let hint = crate::suggest::did_you_mean("; ", key, known.iter().copied());
            problems.push(format!(
                "{what} has an unknown field {key:?} (known fields: {}){hint}",
                known.join(", ")
            ));
        }
    }
}

/// A u64 from a JSON integer or a `"0x…"`/decimal string, or why not.
pub(crate) fn integer(v: &Json) -> std::result::Result<u64, String> {
    match v {
        Json::Number(n) => {
            if let Some(u) = n.as_u64() {
                Ok(u)
            } else if n.as_i64().is_some() {
                Err(format!("is negative ({n})"))
            } else {
                Err(format!("is {n}, which is not an integer from 0 to 2^64 - 1"))
            }
        }
        Json::String(s) => {
            let t = s.trim().replace('_', "");
            let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => t.parse::<u64>(),
            };
            parsed.map_err(|_| {
                if t.starts_with('-') {
                    format!("is negative ({s:?})")
                } else {
                    format!(
                        "is {s:?}, which is not an integer from 0 to 2^64 - 1 (decimal or 0x-prefixed hex)"
                    )
                }
            })
        }
        other => Err(format!("is {other}, which is not an integer")),
    }
}

/// A non-negative JSON integer (no strings), or why not.
pub(crate) fn integer_number(v: &Json) -> std::result::Result<u64, String> {
    match v {
        Json::Number(_) => integer(v),
        other => Err(format!("is {other}, which is not an integer")),
    }
}
