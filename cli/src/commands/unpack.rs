//! `tpack unpack`: every payload to a file, and a manifest from which `tpack pack` rebuilds the identical
//! container.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};
use tpack::{Container, Dtype};

use crate::describe::dtype_name;
use crate::error::{CliError, Kind, Result};
use crate::formats::tpack::{content_entries, dropped_signature, is_signed_attribute};
use crate::fsutil::check_overwrite;
use crate::manifest::VERSION;
use crate::metadata_json::render::{self, Style};
use crate::output::StagingDir;
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

    // The signature describes this file's bytes; the manifest rebuilds the unsigned content, which
    // `tpack sign` signs again.
    let count = content_entries(&container).count();
    let files: Vec<(PathBuf, String)> = content_entries(&container)
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
    let manifest_path = dir.join(MANIFEST);
    for p in files.iter().map(|(p, _)| p).chain([&manifest_path]) {
        check_overwrite(p, force)?;
        refuse_directory(p)?;
    }
    // Everything is written in a staging directory next to DIR and moved into place at the end, so a failure
    // or an interrupt leaves DIR as it was.
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| CliError::io("cannot create directory", parent, &e))?;
    }
    let staging =
        StagingDir::create(dir).map_err(|e| CliError::io("cannot create a directory next to", dir, &e))?;

    let mut entries = Vec::new();
    for (e, (_, name)) in content_entries(&container).zip(&files) {
        write_new(&staging, name, e.payload())?;
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
        .filter(|(key, _)| !is_signed_attribute(key))
        .map(|(key, value)| render::holder(Some(key), value, Style::EXACT).0)
        .collect();
    let mut doc = Map::new();
    doc.insert("tpack_manifest".into(), json!(VERSION));
    // The SIGNED flag goes with the signature (in a file before 1.2, bit 0 is no flag of ours and stays).
    let signed_flag = if container.signed_attributes().is_some() { tpack::format::COMPAT_SIGNED } else { 0 };
    let compat_flags = container.compat_flags() & !signed_flag;
    if compat_flags != 0 {
        doc.insert("compat_flags".into(), json!(compat_flags));
    }
    doc.insert("entries".into(), Json::Array(entries));
    doc.insert("metadata".into(), Json::Array(metadata));
    let text = serde_json::to_string_pretty(&Json::Object(doc)).unwrap_or_default() + "\n";
    write_new(&staging, MANIFEST, text.as_bytes())?;
    let names: Vec<String> = files.into_iter().map(|(_, name)| name).chain([MANIFEST.to_owned()]).collect();
    staging.commit_into(&names, dir).map_err(|e| CliError::io("cannot save", dir, &e))?;
    if dropped_signature(&container, "a manifest").is_some() {
        return Ok(format!(
            "unpacked {count} entries into {}, without the signature (entry `tpack.signature` and the `tpack.sig.*` \
             metadata), which covers this file's bytes; `tpack pack {} -o FILE` rebuilds the unsigned container, and \
             `tpack sign FILE -o SIGNED --key KEY.pem` signs it again\n",
            dir.display(),
            manifest_path.display()
        ));
    }
    Ok(format!(
        "unpacked {count} entries into {}; `tpack pack {} -o FILE` rebuilds the identical container\n",
        dir.display(),
        manifest_path.display()
    ))
}

/// Refuses what `pack` could not write back byte for byte: codes this tool does not know, and a file of a
/// newer minor version.
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
    // A writer gives content the lowest minor that expresses it (spec §11.1), and in a minor-1 file a header
    // of 160 bytes plus the block geometry item (8 bytes and 16 per block dtype used); anything else (an older
    // writer's choice, an extension item of a tag this tool does not know) would not come back the same.
    // For a signed file, what `pack` rebuilds is its unsigned content (the signature is left out), so that is
    // what is compared; a signed file is always of minor 2 and its content may be of a lower one.
    let signed = c.signed_attributes().is_some();
    let (_, minor) = c.version();
    let dtypes = content_entries(c).map(|e| e.dtype().since_minor());
    let types = c
        .metadata()
        .iter()
        .filter(|(key, _)| !is_signed_attribute(key))
        .map(|(_, v)| v.value_type().since_minor());
    let canonical = dtypes.chain(types).map(|m| m.unwrap_or(0)).max().unwrap_or(0);
    let mut block_dtypes: Vec<u16> = c
        .entries()
        .filter(|e| matches!(e.dtype().packing(), Some(tpack::format::Packing::Block { .. })))
        .map(|e| e.dtype().code())
        .collect();
    block_dtypes.sort_unstable();
    block_dtypes.dedup();
    let header_len = match (canonical, block_dtypes.len()) {
        (0, _) | (_, 0) => 160,
        (_, k) => 160 + 8 + 16 * k as u64,
    };
    if !signed && (minor != canonical || u64::from(c.header().header_len.get()) != header_len) {
        return Err(CliError::input(format!(
            "{} is tpack 1.{minor} with a {}-byte header; this tool would write its content as tpack 1.{canonical} \
             with a {header_len}-byte header, so it cannot repack it byte for byte",
            path.display(),
            c.header().header_len.get()
        )));
    }
    Ok(())
}

/// Refuses a directory at `path`, which `--force` does not replace.
fn refuse_directory(path: &Path) -> Result<()> {
    if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return Err(CliError::new(
            Kind::Io,
            format!("{} is a directory; it is not replaced", path.display()),
        ));
    }
    Ok(())
}

/// Writes the new file `name` in the staging directory. The file it replaces in DIR, if `--force` allows one,
/// is replaced by a rename, so a planted symlink is replaced, never written through.
fn write_new(staging: &StagingDir, name: &str, bytes: &[u8]) -> Result<()> {
    let path = staging.path().join(name);
    let path = path.as_path();
    let mut file = staging.create_file(name).map_err(|e| CliError::io("cannot create", path, &e))?;
    file.write_all(bytes).map_err(|e| CliError::io("cannot write", path, &e))?;
    Ok(())
}
