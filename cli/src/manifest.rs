//! Pack manifests: the JSON that lists a container's entries and metadata, checked for meaning before
//! anything is written.
//!
//! The schema is documented in `docs/cli.md`. In short:
//!
//! ```json
//! {
//!   "tpack_manifest": 1,
//!   "address_bits": 32,
//!   "entries": [
//!     {"name": "w", "dtype": "F32", "shape": [2, 3], "alignment": 64, "target": "0x20000000", "file": "w.bin"},
//!     {"name": "b", "dtype": "I8", "shape": [3], "data": [1, -2, 3]},
//!     {"name": "boot", "dtype": "RAW", "hex": "00ff"}
//!   ],
//!   "metadata": [{"key": "layers", "type": "u64[]", "value": [784, 128, 10]}]
//! }
//! ```
//!
//! Every problem is reported, each naming the entry (or metadata record) and the field.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};
use tpack::format::{
    Packing, DEFAULT_ALIGNMENT, MAX_ALIGNMENT, MAX_KEY_LEN, MAX_NAME_LEN, MAX_NESTING_DEPTH, MAX_RANK,
};
use tpack::{Container, Dtype, MetaType, ShapeError};

use crate::error::{CliError, Result};

/// The manifest version this tool reads and writes.
pub const VERSION: u64 = 1;

/// A checked manifest, ready to stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Compatible-feature flags for the header.
    pub compat_flags: u64,
    /// Entries in the order they are written.
    pub entries: Vec<PlannedEntry>,
    /// Metadata in manifest order (the writer sorts it).
    pub metadata: Vec<(String, OwnedValue)>,
}

/// One checked entry.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedEntry {
    /// Entry name.
    pub name: String,
    /// Element type.
    pub dtype: Dtype,
    /// Shape, outermost first.
    pub shape: Vec<u64>,
    /// Payload alignment.
    pub alignment: u32,
    /// Load address.
    pub target: Option<u64>,
    /// Payload length in bytes, which the source has exactly.
    pub length: u64,
    /// Where the payload comes from.
    pub source: Source,
}

/// Where a payload comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A file, read in chunks when writing.
    File(PathBuf),
    /// Bytes given in the manifest.
    Inline(Vec<u8>),
}

pub use crate::owned_value::OwnedValue;

/// Reads and checks the manifest at `path`; relative data files are resolved against its directory.
///
/// # Errors
/// [`crate::error::Kind::Io`] if it cannot be read; [`crate::error::Kind::Input`] listing every problem.
pub fn load(path: &Path) -> Result<Plan> {
    let text = std::fs::read(path).map_err(|e| CliError::io("cannot read manifest", path, &e))?;
    let json: Json = serde_json::from_slice(&text)
        .map_err(|e| CliError::input(format!("{} is not valid JSON: {e}", path.display())))?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    check(&json, &base).map_err(|problems| {
        let mut message = match problems.len() {
            1 => format!("{}: {}", path.display(), problems[0]),
            n => format!("{} has {n} problems:", path.display()),
        };
        if problems.len() > 1 {
            for p in &problems {
                message.push_str("\n  ");
                message.push_str(p);
            }
        }
        CliError::input(message)
    })
}

/// Checks a parsed manifest; relative files are resolved against `base`. Returns every problem found.
///
/// # Errors
/// The problems, each one sentence naming the entry or record and the field.
pub fn check(json: &Json, base: &Path) -> std::result::Result<Plan, Vec<String>> {
    let mut problems = Vec::new();
    let Some(top) = json.as_object() else {
        return Err(vec!["the manifest must be a JSON object".to_owned()]);
    };
    unknown_fields(
        top,
        &["tpack_manifest", "address_bits", "compat_flags", "entries", "metadata"],
        "the manifest",
        &mut problems,
    );
    match top.get("tpack_manifest") {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => problems.push(format!("field \"tpack_manifest\" is {v}, but this tool reads version {VERSION}")),
        None => problems.push(format!(
            "field \"tpack_manifest\" is missing (it must be {VERSION}; it marks the file as a tpack manifest)"
        )),
    }
    let address_bits = match top.get("address_bits") {
        None => 64,
        Some(v) => match v.as_u64() {
            Some(bits @ 1..=64) => bits as u32,
            _ => {
                problems.push(format!("field \"address_bits\" is {v}; it must be an integer from 1 to 64"));
                64
            }
        },
    };
    let compat_flags = match top.get("compat_flags") {
        None => 0,
        Some(v) => integer(v).unwrap_or_else(|why| {
            problems.push(format!("field \"compat_flags\" {why}"));
            0
        }),
    };
    let entries = match top.get("entries") {
        Some(Json::Array(items)) => check_entries(items, base, address_bits, &mut problems),
        Some(_) => {
            problems.push("field \"entries\" must be an array".to_owned());
            Vec::new()
        }
        None => {
            problems.push("field \"entries\" is missing".to_owned());
            Vec::new()
        }
    };
    let metadata = match top.get("metadata") {
        None => Vec::new(),
        Some(Json::Array(items)) => check_metadata(items, &mut problems),
        Some(_) => {
            problems.push("field \"metadata\" must be an array".to_owned());
            Vec::new()
        }
    };
    if problems.is_empty() {
        Ok(Plan { compat_flags, entries, metadata })
    } else {
        Err(problems)
    }
}

fn unknown_fields(obj: &Map<String, Json>, known: &[&str], what: &str, problems: &mut Vec<String>) {
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
fn integer(v: &Json) -> std::result::Result<u64, String> {
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

const ENTRY_FIELDS: &[&str] = &["name", "dtype", "shape", "alignment", "target", "file", "data", "hex"];

/// Checks the `entries` array: each entry's fields on their own, then, once every field is well-formed, the
/// rules that tie them together. Problems about one entry come in field order, its unknown fields last.
fn check_entries(
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

/// A non-negative JSON integer (no strings), or why not.
fn integer_number(v: &Json) -> std::result::Result<u64, String> {
    match v {
        Json::Number(_) => integer(v),
        other => Err(format!("is {other}, which is not an integer")),
    }
}

/// Payload bytes that `dtype` and `shape` give (spec §4.1, [`Dtype::byte_len`]), or why they give none, in
/// words.
pub fn expected_length(dtype: Dtype, shape: &[u64]) -> std::result::Result<u64, String> {
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

/// Encodes inline numbers as little-endian elements of `dtype`.
fn encode_numbers(dtype: Dtype, items: &[Json]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let fail = |what: &str| format!("item {i} ({v}) {what}");
        let float = || v.as_f64().ok_or_else(|| fail("is not a number"));
        let int = |min: i128, max: i128| -> std::result::Result<i128, String> {
            let n = v
                .as_i64()
                .map(i128::from)
                .or_else(|| v.as_u64().map(i128::from))
                .ok_or_else(|| fail("is not an integer"))?;
            if n < min || n > max {
                return Err(fail(&format!("is out of range for {}", dtype_label(dtype))));
            }
            Ok(n)
        };
        match dtype {
            // NaN and ±∞ as in metadata, so an F64 `data` list can hold every bit pattern.
            Dtype::F64 => out.extend(f64_of(v).map_err(|why| format!("item {i}: {why}"))?.to_le_bytes()),
            Dtype::F32 => out.extend((float()? as f32).to_le_bytes()),
            Dtype::F16 => out.extend(half::f16::from_f64(float()?).to_le_bytes()),
            Dtype::BF16 => out.extend(half::bf16::from_f64(float()?).to_le_bytes()),
            Dtype::I64 => out.extend((int(i64::MIN.into(), i64::MAX.into())? as i64).to_le_bytes()),
            Dtype::I32 => out.extend((int(i32::MIN.into(), i32::MAX.into())? as i32).to_le_bytes()),
            Dtype::I16 => out.extend((int(i16::MIN.into(), i16::MAX.into())? as i16).to_le_bytes()),
            Dtype::I8 => out.extend((int(i8::MIN.into(), i8::MAX.into())? as i8).to_le_bytes()),
            Dtype::U64 => out.extend((int(0, u64::MAX.into())? as u64).to_le_bytes()),
            Dtype::U32 => out.extend((int(0, u32::MAX.into())? as u32).to_le_bytes()),
            Dtype::U16 => out.extend((int(0, u16::MAX.into())? as u16).to_le_bytes()),
            Dtype::U8 | Dtype::RAW => out.push(int(0, u8::MAX.into())? as u8),
            Dtype::BOOL => match v {
                Json::Bool(b) => out.push(u8::from(*b)),
                _ => out.push(int(0, 1)? as u8),
            },
            other => {
                return Err(format!(
                    "inline numbers cannot be encoded as {}; give the bytes as \"hex\" or \"file\"",
                    dtype_label(other)
                ))
            }
        }
    }
    Ok(out)
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

const META_FIELDS: &[&str] = &["key", "type", "value"];

fn check_metadata(items: &[Json], problems: &mut Vec<String>) -> Vec<(String, OwnedValue)> {
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
fn f64_of(v: &Json) -> std::result::Result<f64, String> {
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
fn meta_value(type_name: &str, v: &Json) -> std::result::Result<OwnedValue, (&'static str, String)> {
    meta_value_at(type_name, v, 1)
}

/// [`meta_value`] for a value nested `depth` levels of `array[]` deep (1 for a record's own value).
fn meta_value_at(
    type_name: &str,
    v: &Json,
    depth: u8,
) -> std::result::Result<OwnedValue, (&'static str, String)> {
    let value = |r: std::result::Result<OwnedValue, String>| r.map_err(|why| ("value", why));
    match type_name {
        "u64" => value(u64_of(v).map(OwnedValue::U64)),
        "i64" => value(i64_of(v).map(OwnedValue::I64)),
        "f64" => value(f64_of(v).map(OwnedValue::F64)),
        "bool" => value(bool_of(v).map(OwnedValue::Bool)),
        "string" => value(
            v.as_str()
                .map(|s| OwnedValue::String(s.to_owned()))
                .ok_or_else(|| format!("{v} is not a string")),
        ),
        "bytes" => value(
            v.as_str()
                .ok_or_else(|| format!("{v} is not a string of hex digits"))
                .and_then(|s| hex::decode(s).map_err(|e| format!("is not hex: {e}")))
                .map(OwnedValue::Bytes),
        ),
        "u64[]" => value(array_of(v, u64_of).map(OwnedValue::U64Array)),
        "i64[]" => value(array_of(v, i64_of).map(OwnedValue::I64Array)),
        "f64[]" => value(array_of(v, f64_of).map(OwnedValue::F64Array)),
        "string[]" => value(
            array_of(v, |x| x.as_str().map(str::to_owned).ok_or_else(|| format!("{x} is not a string")))
                .map(OwnedValue::StringArray),
        ),
        "u8" => value(narrow_of(v, "u8").map(OwnedValue::U8)),
        "i8" => value(narrow_of(v, "i8").map(OwnedValue::I8)),
        "u16" => value(narrow_of(v, "u16").map(OwnedValue::U16)),
        "i16" => value(narrow_of(v, "i16").map(OwnedValue::I16)),
        "u32" => value(narrow_of(v, "u32").map(OwnedValue::U32)),
        "i32" => value(narrow_of(v, "i32").map(OwnedValue::I32)),
        "f32" => value(f32_of(v).map(OwnedValue::F32)),
        "u8[]" => value(array_of(v, |x| narrow_of(x, "u8")).map(OwnedValue::U8Array)),
        "i8[]" => value(array_of(v, |x| narrow_of(x, "i8")).map(OwnedValue::I8Array)),
        "u16[]" => value(array_of(v, |x| narrow_of(x, "u16")).map(OwnedValue::U16Array)),
        "i16[]" => value(array_of(v, |x| narrow_of(x, "i16")).map(OwnedValue::I16Array)),
        "u32[]" => value(array_of(v, |x| narrow_of(x, "u32")).map(OwnedValue::U32Array)),
        "i32[]" => value(array_of(v, |x| narrow_of(x, "i32")).map(OwnedValue::I32Array)),
        "f32[]" => value(array_of(v, f32_of).map(OwnedValue::F32Array)),
        "bool[]" => value(array_of(v, bool_of).map(OwnedValue::BoolArray)),
        "array[]" => value(array_of(v, |item| array_item(item, depth)).map(OwnedValue::ArrayArray)),
        other => Err(("type", format!("{other:?} is not a metadata type (known: {})", type_names()))),
    }
}

/// One item of an `array[]` nested `depth` levels deep: `{"type": "<an array type>", "value": …}`, as spec
/// §13 writes it.
fn array_item(item: &Json, depth: u8) -> std::result::Result<OwnedValue, String> {
    let shape = || format!("{item} is not {{\"type\": \"<an array type>\", \"value\": …}}");
    let obj = item.as_object().filter(|o| o.len() == 2).ok_or_else(shape)?;
    let (Some(Json::String(t)), Some(v)) = (obj.get("type"), obj.get("value")) else { return Err(shape()) };
    if !MetaType::from_name(t).is_some_and(MetaType::is_array) {
        return Err(format!("type {t:?} is not an array type, and the items of an array[] are arrays"));
    }
    if t == "array[]" && depth >= tpack::format::MAX_ARRAY_DEPTH {
        return Err(format!(
            "nests array[] more than {} levels deep, the most tpack stores",
            tpack::format::MAX_ARRAY_DEPTH
        ));
    }
    meta_value_at(t, v, depth.saturating_add(1)).map_err(|(_, why)| why)
}
