//! A manifest's `entries`: each entry's fields checked on their own, then the rules that tie them together
//! (shape and payload size, address space, nesting), every problem named by entry and field.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value as Json};
use tpack::format::{Packing, DEFAULT_ALIGNMENT, MAX_ALIGNMENT, MAX_NAME_LEN, MAX_NESTING_DEPTH, MAX_RANK};
use tpack::{Container, Dtype, ShapeError};

use super::numbers::encode_numbers;
use super::{PlannedEntry, Source};
use crate::json_fields::{integer, integer_number, unknown_fields};

const ENTRY_FIELDS: &[&str] = &["name", "dtype", "shape", "alignment", "target", "file", "data", "hex"];

/// Checks the `entries` array: each entry's fields on their own, then, once every field is well-formed, the
/// rules that tie them together. Problems about one entry come in field order, its unknown fields last.
pub(super) fn check_entries(
    items: &[Json],
    base: &Path,
    address_bits: u32,
    problems: &mut Vec<String>,
) -> Vec<PlannedEntry> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut planned = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(obj) = item.as_object() else {
            problems.push(format!("entry {i} must be a JSON object"));
            continue;
        };
        let label = match obj.get("name").and_then(Json::as_str) {
            Some(name) => format!("entry {i} ({name:?})"),
            None => format!("entry {i}"),
        };
        let before = problems.len();
        let mut bad = |field: &str, why: String| problems.push(format!("{label}, field {field:?}: {why}"));
        let mut unknown = Vec::new();
        unknown_fields(obj, ENTRY_FIELDS, &label, &mut unknown);
        let name = entry_name(obj, i, &mut seen, &mut bad);
        let dtype = entry_dtype(obj, &mut bad);
        let shape = entry_shape(obj, &mut bad);
        let alignment = entry_alignment(obj, &mut bad);
        let target = entry_target(obj, &mut bad);
        let source = entry_source(obj, base, dtype, &mut bad);
        problems.extend(unknown);

        let (Some(name), Some(dtype), Some((source, size))) = (name, dtype, source) else { continue };
        if problems.len() > before {
            continue;
        }
        let fields = Fields { dtype, shape, target, source, size };
        match fields.check(address_bits) {
            Ok((shape, source)) => {
                planned.push(PlannedEntry { name, dtype, shape, alignment, target, length: size, source });
            }
            Err((field, why)) => problems.push(format!("{label}, field {field:?}: {why}")),
        }
    }
    planned
}

/// Reports a problem with one field of the entry being checked: the field's name and why.
type Bad<'a> = dyn FnMut(&str, String) + 'a;

/// Field `name`: a string of 1 to [`MAX_NAME_LEN`] bytes that no earlier entry has; `seen` maps each name to
/// the index of the entry that first had it.
fn entry_name(
    obj: &Map<String, Json>,
    index: usize,
    seen: &mut HashMap<String, usize>,
    bad: &mut Bad<'_>,
) -> Option<String> {
    match obj.get("name") {
        Some(Json::String(s)) if s.is_empty() => {
            bad("name", "is empty; names are 1 to 1024 bytes".to_owned());
            None
        }
        Some(Json::String(s)) if s.len() > MAX_NAME_LEN as usize => {
            bad("name", format!("is {} bytes long; names are at most {MAX_NAME_LEN} bytes", s.len()));
            None
        }
        Some(Json::String(s)) => {
            if let Some(first) = seen.insert(s.clone(), index) {
                bad("name", format!("duplicates the name of entry {first}"));
            }
            Some(s.clone())
        }
        Some(_) => {
            bad("name", "must be a string".to_owned());
            None
        }
        None => {
            bad("name", "is missing".to_owned());
            None
        }
    }
}

/// Field `dtype`: the spec's name of a dtype.
fn entry_dtype(obj: &Map<String, Json>, bad: &mut Bad<'_>) -> Option<Dtype> {
    match obj.get("dtype") {
        Some(Json::String(s)) => Dtype::from_name(s).or_else(|| {
            let known: Vec<&str> = Dtype::ALL.iter().filter_map(|d| d.name()).collect();
            let hint = crate::suggest::did_you_mean("; ", s, known.iter().copied());
            bad("dtype", format!("{s:?} is not a tpack dtype (known: {}){hint}", known.join(", ")));
            None
        }),
        Some(_) => {
            bad("dtype", "must be a string such as \"F32\"".to_owned());
            None
        }
        None => {
            bad("dtype", "is missing".to_owned());
            None
        }
    }
}

/// Field `shape`, which may be absent: at most [`MAX_RANK`] non-negative integers. A shape with bad
/// dimensions is still returned (without them); the problems are reported.
fn entry_shape(obj: &Map<String, Json>, bad: &mut Bad<'_>) -> Option<Vec<u64>> {
    match obj.get("shape") {
        None => None,
        Some(Json::Array(dims)) => {
            let mut out = Vec::new();
            for (d, v) in dims.iter().enumerate() {
                match integer_number(v) {
                    Ok(n) => out.push(n),
                    Err(why) => bad("shape", format!("dimension {d} {why}")),
                }
            }
            if dims.len() > MAX_RANK {
                bad("shape", format!("has {} dimensions; at most {MAX_RANK} are allowed", dims.len()));
            }
            Some(out)
        }
        Some(_) => {
            bad("shape", "must be an array of integers".to_owned());
            None
        }
    }
}

/// Field `alignment`: a power of two up to [`MAX_ALIGNMENT`]; [`DEFAULT_ALIGNMENT`] when absent (and when
/// bad, once reported).
fn entry_alignment(obj: &Map<String, Json>, bad: &mut Bad<'_>) -> u32 {
    match obj.get("alignment") {
        None => DEFAULT_ALIGNMENT,
        Some(v) => match v.as_u64() {
            Some(a) if a.is_power_of_two() && a <= u64::from(MAX_ALIGNMENT) => a as u32,
            _ => {
                bad("alignment", format!("is {v}; it must be a power of two from 1 to {MAX_ALIGNMENT}"));
                DEFAULT_ALIGNMENT
            }
        },
    }
}

/// Field `target`: a load address (an integer, or a decimal or `0x` string); absent or `null` for none.
fn entry_target(obj: &Map<String, Json>, bad: &mut Bad<'_>) -> Option<u64> {
    match obj.get("target") {
        None | Some(Json::Null) => None,
        Some(v) => match integer(v) {
            Ok(t) => Some(t),
            Err(why) => {
                bad("target", why);
                None
            }
        },
    }
}

/// The payload: exactly one of the fields `file`, `data` and `hex`, read into a source and its byte length.
fn entry_source(
    obj: &Map<String, Json>,
    base: &Path,
    dtype: Option<Dtype>,
    bad: &mut Bad<'_>,
) -> Option<(Source, u64)> {
    let sources: Vec<&str> = ["file", "data", "hex"].into_iter().filter(|k| obj.contains_key(*k)).collect();
    match sources.as_slice() {
        [] => {
            bad("file", "is missing: give the payload as \"file\", \"data\" or \"hex\"".to_owned());
            None
        }
        [_, _, ..] => {
            bad(sources[1], format!("conflicts with {:?}: give exactly one of file, data, hex", sources[0]));
            None
        }
        [one] => source_of(one, &obj[*one], base, dtype, bad),
    }
}

/// An entry's well-formed fields, before the rules that tie them together are checked.
struct Fields {
    dtype: Dtype,
    shape: Option<Vec<u64>>,
    target: Option<u64>,
    source: Source,
    /// The payload's byte length.
    size: u64,
}

impl Fields {
    /// The rules across fields, in order: the shape is given (or implied), dtype and shape need exactly the
    /// payload's size, the payload fits the address space at its target, and a CONTAINER payload can nest.
    /// Returns the shape and the source, or the field to blame and why.
    fn check(self, address_bits: u32) -> std::result::Result<(Vec<u64>, Source), (&'static str, String)> {
        let Fields { dtype, shape, target, source, size } = self;
        let shape = resolve_shape(shape, dtype, size).map_err(|why| ("shape", why))?;
        check_length(dtype, &shape, &source, size).map_err(|why| ("shape", why))?;
        if let Some(t) = target {
            check_target(t, size, address_bits).map_err(|why| ("target", why))?;
        }
        if dtype == Dtype::CONTAINER {
            check_nested(&source).map_err(|why| ("file", why))?;
        }
        Ok((shape, source))
    }
}

/// The shape given, or for RAW and CONTAINER entries, which may leave it out, the payload's byte length.
fn resolve_shape(shape: Option<Vec<u64>>, dtype: Dtype, size: u64) -> std::result::Result<Vec<u64>, String> {
    match (shape, dtype.packing()) {
        (Some(shape), _) => Ok(shape),
        (None, Some(Packing::Bytes)) => Ok(vec![size]),
        (None, _) => Err("is missing; only RAW and CONTAINER entries may leave it out".to_owned()),
    }
}

/// `dtype` and `shape` need exactly the `size` bytes that `source` has.
fn check_length(dtype: Dtype, shape: &[u64], source: &Source, size: u64) -> std::result::Result<(), String> {
    let expected = expected_length(dtype, shape)?;
    if expected == size {
        return Ok(());
    }
    let what = match source {
        Source::File(p) => format!("data file {} has {size} bytes", p.display()),
        Source::Inline(_) => format!("the inline data has {size} bytes"),
    };
    Err(format!("{shape:?} of {} needs {expected} bytes, but {what}", dtype_label(dtype)))
}

/// `size` bytes loaded at `target` end inside the `address_bits`-bit address space.
fn check_target(target: u64, size: u64, address_bits: u32) -> std::result::Result<(), String> {
    let end = u128::from(target) + u128::from(size);
    if end > 1u128 << address_bits {
        return Err(format!(
            "{target:#x} + {size} bytes ends at {end:#x}, beyond the {address_bits}-bit address space the manifest declares"
        ));
    }
    Ok(())
}

fn dtype_label(dtype: Dtype) -> String {
    crate::describe::dtype_name(dtype)
}

/// Payload bytes that `dtype` and `shape` give (spec §4.1, [`Dtype::byte_len`]), or why they give none, in
/// words.
pub(crate) fn expected_length(dtype: Dtype, shape: &[u64]) -> std::result::Result<u64, String> {
    let label = dtype_label(dtype);
    dtype.byte_len(shape).map_err(|e| match e {
        ShapeError::Overflow => format!("{shape:?} of {label} is more than 2^64 - 1 elements or bytes"),
        ShapeError::PartialBlock => match (shape.last(), dtype.packing()) {
            (Some(inner), Some(Packing::Block { block_elems, .. })) => format!(
                "the innermost dimension {inner} of a {label} entry must be a multiple of its block size {block_elems}"
            ),
            _ => format!("{label} needs at least one dimension"),
        },
        ShapeError::NotRankOne => format!("a {label} entry has exactly one dimension, its byte length"),
        ShapeError::RankTooLarge => format!("{shape:?} has more than {MAX_RANK} dimensions"),
        _ => format!("{label} has no known size"),
    })
}

fn source_of(
    field: &str,
    value: &Json,
    base: &Path,
    dtype: Option<Dtype>,
    bad: &mut dyn FnMut(&str, String),
) -> Option<(Source, u64)> {
    match field {
        "file" => {
            let Some(rel) = value.as_str() else {
                bad("file", "must be a string (a path relative to the manifest)".to_owned());
                return None;
            };
            let path = base.join(rel);
            match std::fs::metadata(&path) {
                Ok(m) if m.is_file() => Some((Source::File(path), m.len())),
                Ok(_) => {
                    bad("file", format!("{} is not a regular file", path.display()));
                    None
                }
                Err(e) => {
                    bad("file", format!("cannot read {}: {}", path.display(), crate::error::io_words(&e)));
                    None
                }
            }
        }
        "hex" => {
            let Some(text) = value.as_str() else {
                bad("hex", "must be a string of hex digits".to_owned());
                return None;
            };
            match hex::decode(text) {
                Ok(bytes) => {
                    let len = bytes.len() as u64;
                    Some((Source::Inline(bytes), len))
                }
                Err(e) => {
                    bad("hex", format!("is not hex: {e}"));
                    None
                }
            }
        }
        _ => {
            let Some(items) = value.as_array() else {
                bad("data", "must be an array of numbers".to_owned());
                return None;
            };
            let dtype = dtype?;
            match encode_numbers(dtype, items) {
                Ok(bytes) => {
                    let len = bytes.len() as u64;
                    Some((Source::Inline(bytes), len))
                }
                Err(why) => {
                    bad("data", why);
                    None
                }
            }
        }
    }
}

/// A CONTAINER entry's file must be a valid container that can still be nested one level deeper.
fn check_nested(source: &Source) -> std::result::Result<(), String> {
    let verify = |bytes: &[u8]| -> std::result::Result<(), String> {
        let c = Container::parse(bytes).map_err(|e| format!("is not a valid tpack container: {e}"))?;
        c.verify().map_err(|e| format!("is a corrupt tpack container: {e}"))?;
        let depth = nesting_depth(&c);
        if depth >= MAX_NESTING_DEPTH {
            return Err(format!(
                "nests containers {depth} deep; inside another container that would exceed the limit of {MAX_NESTING_DEPTH}"
            ));
        }
        Ok(())
    };
    match source {
        Source::Inline(bytes) => verify(bytes),
        Source::File(path) => {
            let map = crate::fsutil::map(path).map_err(|e| e.to_string())?;
            verify(&map)
        }
    }
}

/// How many levels of containers `c` holds below itself.
fn nesting_depth(c: &Container<'_>) -> u8 {
    c.entries().filter_map(|e| e.nested()).map(|n| 1 + nesting_depth(&n)).max().unwrap_or(0)
}
