//! `tpack inspect`: what a tpack, safetensors or GGUF file holds, as a tree of name components or as JSON.
//!
//! Any input — a container, a GGUF or safetensors file, a shard set — is first read into one [`Model`] of what
//! inspect shows (`model`): its entries, and its metadata
//! as lazy views of the file. The model is then rendered as text (`text`, with the entry table in `table`),
//! as JSON (`json`), or, for `--entry`, as one entry's details (`detail`). Metadata values are never built
//! in full: each renderer walks as much of a value as it shows, so memory is bounded by the output plus the
//! mapped file, however large a value the file holds.
//!
//! Text output is for a terminal: every name, key and string is escaped ([`crate::text`]), no line is wider
//! than [`WIDTH`] columns, and a 100,000-entry file costs O(n log n). JSON is for scripts: complete, except
//! that long metadata arrays are cut (and marked) unless `--full` is given.

use std::path::Path;

use crate::error::{CliError, Result};
use crate::formats::safetensors::INDEX_SUFFIX;
use crate::formats::{importer, tpack::open, Format};
use crate::shards::hf_index::BIN_INDEX_SUFFIX;
use crate::shards::{Found, ShardSet};
use crate::text::quoted;

mod detail;
mod glob;
mod json;
mod model;
mod table;
mod text;

use model::Model;

/// Schema tag of `inspect --json` output; bumped only for incompatible changes (see docs/cli.md).
pub const JSON_SCHEMA: &str = "tpack-inspect/3";

/// No line of text output is wider than this many columns.
pub const WIDTH: usize = 100;

/// Items of a metadata array (or bytes of a `bytes` value) `--json` shows without `--full`.
pub const JSON_ITEMS: usize = 32;

/// What `tpack inspect` shows, from its flags.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only the entry with this exact name (`--entry`).
    pub entry: Option<String>,
    /// JSON instead of text (`--json`).
    pub json: bool,
    /// JSON with every metadata array whole (`--full`).
    pub full: bool,
    /// Draw every repeated layer instead of one group (`--expand`).
    pub expand: bool,
    /// Only entries whose name matches: a glob when it has `*` or `?`, else a substring (`--filter`).
    pub filter: Option<String>,
    /// No entry list, only the header, totals and metadata (`--no-tensors`).
    pub no_tensors: bool,
    /// Tree rows below this depth are summarised (`--depth`).
    pub depth: Option<usize>,
    /// One row per entry with its whole name, no tree (`--flat`).
    pub flat: bool,
}

/// Runs `tpack inspect` with only `--entry` and `--json`; see [`run_with`].
///
/// # Errors
/// As [`run_with`].
pub fn run(path: &Path, entry: Option<&str>, as_json: bool) -> Result<String> {
    run_with(path, &Options { entry: entry.map(str::to_owned), json: as_json, ..Options::default() })
}

/// Runs `tpack inspect` on a tpack, safetensors or GGUF file (told from its first bytes, as `convert` does),
/// or on a shard set `convert` reads (a Hugging Face index, or the first split of a split GGUF).
///
/// # Errors
/// The file cannot be read ([`crate::error::Kind::Io`]), is not a valid container
/// ([`crate::error::Kind::Invalid`]) or a valid foreign file ([`crate::error::Kind::Input`]); `--entry` names
/// no entry ([`crate::error::Kind::Input`]).
pub fn run_with(path: &Path, opts: &Options) -> Result<String> {
    // A TensorFlow checkpoint by its directory or prefix: its `.index` file, as `convert` finds it.
    let located = crate::formats::tensorflow::locate(path);
    let path = located.as_deref().unwrap_or(path);
    let map = match find(path)? {
        Found::Set(set) => {
            // A shard set (a Hugging Face index, or the first split of a split GGUF), read and merged as
            // `convert` reads it.
            let files: Vec<&Path> = set.files().collect();
            let length = files.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).sum();
            let read = set.read()?;
            let mut model = Model::of_import(set.format(), &read, length);
            model.files = files.len();
            return show(path, &model, opts).map(with_newline);
        }
        Found::File(map) => map,
    };
    let file_length = map.len() as u64;
    // Each input is read into the one model; what the model borrows (the map, a parsed GGUF file, a model
    // another importer read) lives here. A GGUF file is parsed here rather than imported, as the importer
    // copies every metadata value into an owned one for the writer.
    let format = Format::sniff(&map);
    let out = match (format, format.and_then(importer)) {
        (Some(Format::Gguf), _) => {
            let file = crate::formats::gguf::parse(path, &map)?;
            show(path, &Model::of_gguf(&file, path, file_length)?, opts)?
        }
        (Some(format), Some(import)) => {
            let imported = import.read(path, &map)?;
            show(path, &Model::of_import(format, &imported, file_length), opts)?
        }
        _ => show(path, &Model::of_container(&open(path, &map)?), opts)?,
    };
    Ok(with_newline(out))
}

/// What `path` names, as `convert` finds it: a shard set, or one file, mapped; a directory without a Hugging
/// Face index is refused as a directory, as any other input that is no file.
///
/// # Errors
/// As [`ShardSet::find`]; [`crate::error::Kind::Io`] for a directory without an index.
fn find(path: &Path) -> Result<Found> {
    if path.is_dir() {
        let listing = std::fs::read_dir(path).map_err(|e| CliError::io("cannot list", path, &e))?;
        let has_index = listing
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .any(|name| name.ends_with(INDEX_SUFFIX) || name.ends_with(BIN_INDEX_SUFFIX));
        if !has_index {
            return crate::fsutil::map(path).map(Found::File);
        }
    }
    ShardSet::find(path)
}

/// `out`, ending with a newline.
fn with_newline(mut out: String) -> String {
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The output `opts` asks for, from `model`.
fn show(path: &Path, model: &Model<'_>, opts: &Options) -> Result<String> {
    match &opts.entry {
        Some(name) => {
            let item = model.entries.iter().find(|i| i.name == *name).ok_or_else(|| {
                let hint =
                    crate::suggest::did_you_mean("; ", name, model.entries.iter().map(|i| i.name.as_ref()));
                CliError::input(format!("{} has no entry named {}{hint}", path.display(), quoted(name)))
            })?;
            Ok(if opts.json {
                json::pretty(&json::entry(item, json::ENTRY_STYLE).0)
            } else {
                detail::text(item)
            })
        }
        None if opts.json => Ok(json::pretty(&json::document(model, path, opts))),
        None => Ok(text::report(model, path, opts)),
    }
}
