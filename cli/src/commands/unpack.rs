//! `tpack unpack`: every payload to a file, and a manifest from which `tpack pack` rebuilds the identical
//! container.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};
use tpack::{AtomicFile, Container, Dtype, MetaValue};

use crate::describe::{dtype_name, meta_type_json, meta_value_json};
use crate::error::{CliError, Kind, Result};
use crate::fsutil::check_overwrite;
use crate::manifest::VERSION;
use crate::safe_names::file_name;

/// Name of the manifest `unpack` writes.
pub const MANIFEST: &str = "manifest.json";

/// Runs `tpack unpack FILE -o DIR`.
///
/// # Errors
/// An invalid or corrupt input ([`Kind::Invalid`]); one this tool cannot reproduce ([`Kind::Input`]); an
/// existing output file without `force`, or an I/O failure ([`Kind::Io`]).
pub fn run(path: &Path, dir: &Path, force: bool) -> Result<String> {
    let map = crate::fsutil::map(path)?;
    let container = crate::formats::tpack::open(path, &map)?;
    // Full verification entry by entry (what `Container::verify` checks), so the message can name the entry.
    if let Some(p) = crate::formats::tpack::check(&container, &mut |_| {}).first() {
        return Err(CliError::invalid(format!(
            "{} is corrupt, so it is not unpacked: entry {} {:?}: {} (`tpack verify` lists every problem)",
            path.display(),
            p.entry,
            p.name,
            p.what
        )));
    }
    check_reproducible(path, &container)?;

    let count = container.len();
    let files: Vec<(PathBuf, String)> = container
        .entries()
        .map(|e| {
            let ext = if e.dtype() == Dtype::CONTAINER { ".tpack" } else { ".bin" };
            let name = file_name(e.position(), count, e.name(), ext);
            (dir.join(&name), name)
        })
        .collect();
    // Every refusal happens before the first byte is written.
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::new(Kind::Io, format!("{} exists and is not a directory", dir.display())));
    }
    for (p, _) in &files {
        check_overwrite(p, force)?;
    }
    let manifest_path = dir.join(MANIFEST);
    check_overwrite(&manifest_path, force)?;
    fs::create_dir_all(dir).map_err(|e| CliError::io("cannot create directory", dir, &e))?;

    let mut entries = Vec::new();
    for (e, (p, name)) in container.entries().zip(&files) {
        write_new(p, e.payload(), force)?;
        let mut m = Map::new();
        m.insert("name".into(), json!(e.name()));
        m.insert("dtype".into(), json!(dtype_name(e.dtype())));
        m.insert("shape".into(), json!(e.shape().dims()));
        m.insert("alignment".into(), json!(e.alignment()));
        if let Some(t) = e.target() {
            m.insert("target".into(), json!(format!("{t:#x}")));
        }
        m.insert("file".into(), json!(name));
        entries.push(Json::Object(m));
    }
    let metadata: Vec<Json> = container
        .metadata()
        .iter()
        .map(|(key, value)| json!({"key": key, "type": meta_type_json(&value), "value": manifest_value(&value)}))
        .collect();
    let mut doc = Map::new();
    doc.insert("tpack_manifest".into(), json!(VERSION));
    if container.compat_flags() != 0 {
        doc.insert("compat_flags".into(), json!(container.compat_flags()));
    }
    doc.insert("entries".into(), Json::Array(entries));
    doc.insert("metadata".into(), Json::Array(metadata));
    let text = serde_json::to_string_pretty(&Json::Object(doc)).unwrap_or_default() + "\n";
    let mut out =
        AtomicFile::create(&manifest_path).map_err(|e| CliError::io("cannot create", &manifest_path, &e))?;
    {
        let mut sink = out.sink();
        embedded_io_write(&mut sink, text.as_bytes())
            .map_err(|e| CliError::io("cannot write", &manifest_path, &e))?;
    }
    out.commit().map_err(|e| CliError::io("cannot save", &manifest_path, &e))?;
    Ok(format!(
        "unpacked {count} entries into {}; `tpack pack {} -o FILE` rebuilds the identical container\n",
        dir.display(),
        manifest_path.display()
    ))
}

fn embedded_io_write(sink: &mut tpack::FileSink<'_>, bytes: &[u8]) -> std::io::Result<()> {
    embedded_io::Write::write_all(sink, bytes)?;
    embedded_io::Write::flush(sink)
}

/// A metadata value as the manifest writes it: spec §13's form, except that finite f64s are plain numbers
/// (JSON numbers round-trip f64 exactly); NaN and infinities keep their bit patterns.
fn manifest_value(value: &MetaValue<'_>) -> Json {
    let f = |v: f64| if v.is_finite() { json!(v) } else { crate::describe::f64_bits(v) };
    match value {
        MetaValue::F64(v) => f(*v),
        MetaValue::F64Array(a) => Json::Array(a.iter().map(|v| f(v.get())).collect()),
        other => meta_value_json(other),
    }
}

/// Refuses what `pack` could not write back byte for byte: codes from a newer minor version, and a header
/// longer than 1.0's.
fn check_reproducible(path: &Path, c: &Container<'_>) -> Result<()> {
    if let Some(e) = c.entries().find(|e| e.dtype().name().is_none()) {
        return Err(CliError::input(format!(
            "{}: entry {:?} has dtype code {}, which this tool does not know, so it cannot repack it",
            path.display(),
            e.name(),
            e.dtype().code()
        )));
    }
    if let Some((key, v)) = c.metadata().iter().find(|(_, v)| v.value_type().name().is_none()) {
        return Err(CliError::input(format!(
            "{}: metadata {key:?} has type code {}, which this tool does not know, so it cannot repack it",
            path.display(),
            v.value_type().code()
        )));
    }
    let (_, minor) = c.version();
    if minor != tpack::format::VERSION_MINOR {
        return Err(CliError::input(format!(
            "{} is tpack 1.{minor}; this tool writes 1.{}, so it cannot repack it byte for byte",
            path.display(),
            tpack::format::VERSION_MINOR
        )));
    }
    Ok(())
}

/// Writes a new file at `path`. Without `force` the file must not exist (as anything, a symlink included:
/// `create_new` never follows one); with `force` an existing file or symlink is removed first, so a planted
/// symlink is replaced, never written through.
fn write_new(path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    if force {
        if let Ok(meta) = path.symlink_metadata() {
            if meta.is_dir() {
                return Err(CliError::new(
                    Kind::Io,
                    format!("{} is a directory; it is not replaced", path.display()),
                ));
            }
            fs::remove_file(path).map_err(|e| CliError::io("cannot replace", path, &e))?;
        }
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| CliError::io("cannot create", path, &e))?;
    file.write_all(bytes).map_err(|e| CliError::io("cannot write", path, &e))?;
    Ok(())
}
