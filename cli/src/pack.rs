//! `tpack pack`, and the one streaming write path every command that produces a container shares.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use tpack::{AtomicFile, Dtype, EntryDecl, SeekWriter, VecTables, WriteError};

use crate::error::{CliError, Kind, Result};
use crate::fsutil::{check_overwrite, size_words};
use crate::manifest::{self, OwnedValue, Source};

/// Bytes read from a data file per write call.
const CHUNK: usize = 1024 * 1024;

/// Where one output entry's payload comes from.
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    /// Bytes already in memory or mapped.
    Bytes(&'a [u8]),
    /// A file streamed in chunks; it must still have `length` bytes.
    File(&'a Path),
    /// Big-endian elements of `width` bytes, byte-swapped to little-endian in chunks on the way through.
    Swapped {
        /// The stored elements.
        bytes: &'a [u8],
        /// Bytes per element (1, 2, 4 or 8).
        width: usize,
    },
}

/// One entry to write.
#[derive(Debug, Clone)]
pub struct OutEntry<'a> {
    /// Entry name.
    pub name: &'a str,
    /// Element type.
    pub dtype: Dtype,
    /// Shape, outermost first.
    pub shape: &'a [u64],
    /// Payload alignment.
    pub alignment: u32,
    /// Load address.
    pub target: Option<u64>,
    /// Payload length in bytes.
    pub length: u64,
    /// The payload.
    pub payload: Payload<'a>,
}

/// Streams a container to `out` through [`SeekWriter`] and an [`AtomicFile`]: memory stays O(table), and
/// `out` holds either its old content or the complete new container.
///
/// # Errors
/// [`Kind::Io`] for I/O failures; [`Kind::Input`] for what the writer refuses (its message names the rule).
pub fn write_container(
    out: &Path,
    compat_flags: u64,
    entries: &[OutEntry<'_>],
    metadata: &[(String, OwnedValue)],
    quiet: bool,
) -> Result<()> {
    let writer_error = |e: WriteError<std::io::Error>| match e {
        WriteError::Io(io) => CliError::io("cannot write", out, &io),
        other => CliError::input(format!("cannot write {}: {other}", out.display())),
    };
    let mut file =
        AtomicFile::create(out).map_err(|e| CliError::io("cannot create a file next to", out, &e))?;
    {
        let mut w = SeekWriter::new(file.sink(), VecTables::new());
        w.set_compat_flags(compat_flags);
        for e in entries {
            let mut decl = EntryDecl::new(e.name, e.dtype, e.shape).with_alignment(e.alignment);
            if let Some(t) = e.target {
                decl = decl.with_target(t);
            }
            w.declare(decl).map_err(|err| {
                CliError::input(format!("cannot write entry {:?} to {}: {err}", e.name, out.display()))
            })?;
        }
        for (key, value) in metadata {
            value.with_value(|v| w.meta(key, v)).map_err(|err| {
                CliError::input(format!("cannot write metadata {key:?} to {}: {err}", out.display()))
            })?;
        }
        let total = entries.iter().map(|e| e.length).sum();
        let bar = crate::progress::bytes(total, "writing", quiet);
        let mut buffer = Vec::new();
        for e in entries {
            match e.payload {
                Payload::Bytes(bytes) => {
                    for chunk in bytes.chunks(CHUNK) {
                        w.write(chunk).map_err(writer_error)?;
                        bar.inc(chunk.len() as u64);
                    }
                }
                Payload::Swapped { bytes, width } => {
                    for chunk in bytes.chunks(CHUNK - CHUNK % width.max(1)) {
                        buffer.clear();
                        buffer.extend_from_slice(chunk);
                        for element in buffer.chunks_mut(width.max(1)) {
                            element.reverse();
                        }
                        w.write(&buffer).map_err(writer_error)?;
                        bar.inc(chunk.len() as u64);
                    }
                }
                Payload::File(path) => {
                    buffer.resize(CHUNK, 0);
                    let mut f = File::open(path).map_err(|err| CliError::io("cannot read", path, &err))?;
                    let mut seen = 0u64;
                    loop {
                        let n = f.read(&mut buffer).map_err(|err| CliError::io("cannot read", path, &err))?;
                        if n == 0 {
                            break;
                        }
                        seen += n as u64;
                        if seen > e.length {
                            break;
                        }
                        w.write(&buffer[..n]).map_err(writer_error)?;
                        bar.inc(n as u64);
                    }
                    if seen != e.length {
                        return Err(CliError::new(
                            Kind::Input,
                            format!(
                                "{} changed while it was being packed: it was {} and is now {} or more",
                                path.display(),
                                size_words(e.length),
                                size_words(seen)
                            ),
                        ));
                    }
                }
            }
            w.end_entry().map_err(writer_error)?;
        }
        w.finish().map_err(writer_error)?;
        bar.finish_and_clear();
    }
    file.commit().map_err(|e| CliError::io("cannot save", out, &e))
}

/// Runs `tpack pack MANIFEST -o OUT`.
///
/// # Errors
/// Every manifest problem ([`Kind::Input`]), an existing output without `force`, I/O failures.
pub fn run(manifest_path: &Path, out: &Path, force: bool, quiet: bool) -> Result<String> {
    let plan = manifest::load(manifest_path)?;
    check_overwrite(out, force)?;
    let entries: Vec<OutEntry<'_>> = plan
        .entries
        .iter()
        .map(|e| OutEntry {
            name: &e.name,
            dtype: e.dtype,
            shape: &e.shape,
            alignment: e.alignment,
            target: e.target,
            length: e.length,
            payload: match &e.source {
                Source::File(p) => Payload::File(p),
                Source::Inline(b) => Payload::Bytes(b),
            },
        })
        .collect();
    write_container(out, plan.compat_flags, &entries, &plan.metadata, quiet)?;
    let bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    Ok(format!(
        "packed {} entries and {} metadata values into {} ({})\n",
        plan.entries.len(),
        plan.metadata.len(),
        out.display(),
        crate::fsutil::size_short(bytes)
    ))
}
