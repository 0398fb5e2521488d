//! JSON that may not repeat a key. serde_json (and with it the `safetensors` crate and Python's
//! `safe_open`) keeps the last of two equal keys silently; a safetensors header naming a tensor twice is
//! ambiguous, and tpack refuses duplicate names (spec R21), so conversion refuses it too.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// Checks that no object anywhere in `text` repeats a key.
///
/// # Errors
/// The first repeated key (with the path of objects leading to it is not tracked; the key suffices), or the
/// JSON syntax error.
pub fn check_no_duplicate_keys(text: &str) -> Result<(), String> {
    serde_json::from_str::<Unique>(text).map(|_| ()).map_err(|e| e.to_string())
}

/// Deserializes any JSON value, failing on a repeated key in any object.
struct Unique;

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueVisitor)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("the key {key:?} appears twice")));
            }
            map.next_value::<Unique>()?;
        }
        Ok(Unique)
    }
}

#[cfg(test)]
mod tests {
    use super::check_no_duplicate_keys;

    #[test]
    fn finds_repeated_keys_at_any_depth() {
        assert!(check_no_duplicate_keys(r#"{"a": 1, "b": {"c": [1, {"d": 2}]}}"#).is_ok());
        let top = check_no_duplicate_keys(r#"{"a": 1, "a": 2}"#).unwrap_err();
        assert!(top.contains("\"a\" appears twice"), "{top}");
        let deep = check_no_duplicate_keys(r#"{"m": {"k": "v", "k": "w"}}"#).unwrap_err();
        assert!(deep.contains("\"k\" appears twice"), "{deep}");
        let in_array = check_no_duplicate_keys(r#"[{"x": 1, "x": 1}]"#).unwrap_err();
        assert!(in_array.contains("\"x\""), "{in_array}");
    }
}
