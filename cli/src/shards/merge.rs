//! Merging the models read from the shards of one set into one model: entries in shard order, each name
//! once, and metadata that the shards agree on.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{CliError, Result};
use crate::formats::Model;
use tpack::OwnedMetaValue;

/// Concatenates `parts` (each shard's path and model, in shard order) into one model. An entry name in two
/// shards is refused, naming both; metadata is the union of the shards', and a key two shards give different
/// values is refused, naming both (which one is right cannot be told). `set` names the shard set.
///
/// # Errors
/// [`crate::Kind::Input`] as above.
pub(super) fn merge<'a>(set: &Path, parts: Vec<(&Path, Model<'a>)>) -> Result<Model<'a>> {
    let total = parts.iter().map(|(_, m)| m.entries.len()).sum();
    let mut entries = Vec::with_capacity(total);
    let mut metadata: Vec<(String, OwnedMetaValue)> = Vec::new();
    // Where each name and key was first seen: shard index (and, for keys, the index in `metadata`).
    let mut names: HashMap<String, usize> = HashMap::with_capacity(total);
    let mut keys: HashMap<String, (usize, usize)> = HashMap::new();
    let mut notes: Vec<String> = Vec::new();
    let paths: Vec<&Path> = parts.iter().map(|(p, _)| *p).collect();
    for (shard, (path, model)) in parts.into_iter().enumerate() {
        for note in model.notes {
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        for e in model.entries {
            if let Some(&first) = names.get(e.name.as_ref()) {
                return Err(CliError::input(format!(
                    "{}: tensor {:?} is in two shards, {} and {}; each tensor must be in exactly one",
                    set.display(),
                    e.name,
                    paths[first].display(),
                    path.display()
                )));
            }
            names.insert(e.name.to_string(), shard);
            entries.push(e);
        }
        for (key, value) in model.metadata {
            match keys.get(&key) {
                Some(&(first, at)) => {
                    if metadata[at].1 != value {
                        return Err(CliError::input(format!(
                            "{}: metadata {key:?} has one value in {} and another in {}, so which to keep cannot \
                             be told; make the shards agree",
                            set.display(),
                            paths[first].display(),
                            path.display()
                        )));
                    }
                }
                None => {
                    keys.insert(key.clone(), (shard, metadata.len()));
                    metadata.push((key, value));
                }
            }
        }
    }
    Ok(Model { compat_flags: 0, entries, metadata, notes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::tpack::{OutEntry, Payload};
    use std::borrow::Cow;

    fn model<'a>(names: &[&'a str], metadata: &[(&str, OwnedMetaValue)]) -> Model<'a> {
        Model {
            compat_flags: 0,
            entries: names
                .iter()
                .map(|n| OutEntry {
                    name: Cow::Borrowed(*n),
                    dtype: tpack::Dtype::U8,
                    shape: vec![0],
                    alignment: 64,
                    target: None,
                    length: 0,
                    payload: Payload::Bytes(&[]),
                })
                .collect(),
            metadata: metadata.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn entries_in_shard_order_and_agreeing_metadata_once() {
        let s = OwnedMetaValue::from("pt");
        let m = merge(
            Path::new("set"),
            vec![
                (Path::new("a"), model(&["x", "y"], &[("format", s.clone())])),
                (
                    Path::new("b"),
                    model(&["z"], &[("format", s.clone()), ("extra", OwnedMetaValue::from(1u64))]),
                ),
            ],
        )
        .unwrap();
        let names: Vec<&str> = m.entries.iter().map(|e| e.name.as_ref()).collect();
        assert_eq!(names, ["x", "y", "z"]);
        assert_eq!(m.metadata, vec![("format".into(), s), ("extra".into(), OwnedMetaValue::from(1u64))]);
    }

    #[test]
    fn a_tensor_in_two_shards_is_refused_naming_both() {
        let e = merge(
            Path::new("set"),
            vec![(Path::new("a"), model(&["x"], &[])), (Path::new("b"), model(&["x"], &[]))],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "set: tensor \"x\" is in two shards, a and b; each tensor must be in exactly one"
        );
    }

    #[test]
    fn metadata_the_shards_disagree_on_is_refused_and_floats_compare_by_bits() {
        let e = merge(
            Path::new("set"),
            vec![
                (Path::new("a"), model(&[], &[("f", OwnedMetaValue::from(0.0f64))])),
                (Path::new("b"), model(&[], &[("f", OwnedMetaValue::from(-0.0f64))])),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("metadata \"f\" has one value in a and another in b"), "{e}");
        let nan = OwnedMetaValue::from(f64::from_bits(0x7ff8_0000_0000_0001));
        assert!(merge(
            Path::new("set"),
            vec![
                (Path::new("a"), model(&[], &[("n", nan.clone())])),
                (Path::new("b"), model(&[], &[("n", nan)]))
            ]
        )
        .is_ok());
    }
}
