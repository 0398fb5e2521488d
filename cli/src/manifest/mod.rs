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
//! Every problem is reported, each naming the entry (or metadata record) and the field. This module checks
//! the top-level fields; `entries` checks the entries, `numbers` encodes inline `data`, and the metadata
//! records are read by [`crate::metadata_json::parse`], which reads them wherever the tool takes metadata as
//! JSON.

mod entries;
mod numbers;

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use tpack::{Dtype, OwnedMetaValue};

use crate::error::{CliError, Result};
use crate::json_fields::{integer, unknown_fields};
use crate::metadata_json::parse::records;

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
    pub metadata: Vec<(String, OwnedMetaValue)>,
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
        Some(Json::Array(items)) => entries::check_entries(items, base, address_bits, &mut problems),
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
        Some(Json::Array(items)) => records(items, &mut problems),
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
