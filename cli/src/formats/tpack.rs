//! tpack itself: telling a container from its first bytes, opening and verifying one, and the streaming
//! writer every command that produces a container shares.

use std::borrow::Cow;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use tpack::{Container, Dtype, Error};

use tpack::write::{EntryDecl, SeekWriter, VecBookkeeping, WriteError};

use super::{importer, Format, Model};
use crate::describe::dtype_name;
use crate::error::{CliError, Kind, Result};
use crate::fsutil::size_words;
use crate::output::TempOutput;

/// Whether `head` starts with the tpack magic.
pub(crate) fn sniff(head: &[u8]) -> bool {
    head.starts_with(&tpack::format::MAGIC)
}

/// Parses `bytes` (the content of `path`) as a container, or says in words why it is not one — and, for a
/// file in a format `tpack convert` reads, that `tpack convert` is what the user wants.
///
/// # Errors
/// [`Kind::Invalid`] naming the file and the broken rule.
pub(crate) fn open<'a>(path: &Path, bytes: &'a [u8]) -> Result<Container<'a>> {
    Container::parse(bytes).map_err(|err| {
        let hint = match Format::sniff(bytes).filter(|&f| importer(f).is_some()) {
            Some(format) => format!(" (it looks like a {} file; `tpack convert` reads those)", format.name()),
            None => String::new(),
        };
        CliError::invalid(format!("{} is not a valid tpack file: {err}{hint}", path.display()))
    })
}

/// Whether `e` is the signature entry of a signed container: the digests and signature, which describe this
/// container's bytes and no other file's, so a conversion or a manifest leaves it out.
#[must_use]
pub(crate) fn is_signature(e: &tpack::Entry<'_>) -> bool {
    e.dtype() == Dtype::SIGNATURE
}

/// The entries of `c` a conversion keeps: all but the signature entry.
pub(crate) fn content_entries<'a>(c: &Container<'a>) -> impl Iterator<Item = tpack::Entry<'a>> {
    c.entries().filter(|e| !is_signature(e))
}

/// Whether the metadata key `key` is a signed attribute, which a conversion leaves out with the signature.
#[must_use]
pub(crate) fn is_signed_attribute(key: &str) -> bool {
    key.starts_with(tpack::format::SIGNATURE_KEY_PREFIX)
}

/// The note that `c`'s signature is not carried into a file of `what` (such as `safetensors`), if it is signed.
#[must_use]
pub(crate) fn dropped_signature(c: &Container<'_>, what: &str) -> Option<String> {
    c.signed_attributes()?;
    Some(format!(
        "the signature (entry `tpack.signature` and the `tpack.sig.*` metadata) is dropped: it covers this container's \
         bytes, which {what} does not keep; sign the result again with `tpack sign` once it is a tpack file"
    ))
}

/// What verification found wrong with one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// Index in the table.
    pub entry: usize,
    /// The entry's name.
    pub name: String,
    /// What is wrong, in words.
    pub what: String,
    /// The rule of its first problem (`R37`, `R64`, `R50`, `R39` for a nested container), for `--json`.
    pub rule: Option<&'static str>,
}

/// Checks every entry of a parsed container with [`Container::verification`]: the padding before it is zero
/// (R37), its payload matches its checksum (R50), and a nested container verifies. `progress` receives
/// payload bytes as they are checked. Every corrupt entry is listed, with all that is wrong with it.
pub(crate) fn check(container: &Container<'_>, progress: &mut dyn FnMut(u64)) -> Vec<Problem> {
    let mut problems = Vec::new();
    for checked in container.verification().with_progress(progress) {
        let e = checked.entry;
        let mut what = Vec::new();
        let mut rule = None;
        if let Err(Error::PaddingNonZero { offset, .. }) = checked.padding {
            what.push(format!("padding byte {offset} before it is not zero (rule R37)"));
            rule.get_or_insert("R37");
        }
        match checked.payload {
            Ok(()) => {}
            // This entry's own checksum; one inside the container it holds is placed by its nesting (this arm
            // took it for the entry's own, with the nested entry's checksums).
            Err(Error::EntryChecksum { stored, computed, nesting, .. }) if nesting.depth() == 0 => {
                what.push(checksum_words(&e, stored, computed));
                rule.get_or_insert("R50");
            }
            // Found inside the container this entry holds: whose structure was checked when it was parsed, so
            // this is a payload-integrity rule, R37 or R50, which spec §6 reports as itself (not R39).
            Err(err) => {
                rule.get_or_insert(err.rule().id());
                what.push(nested_words(err));
            }
        }
        if !what.is_empty() {
            problems.push(Problem {
                entry: e.position(),
                name: e.name().to_owned(),
                what: what.join("; "),
                rule,
            });
        }
    }
    problems
}

/// An error found inside the container an entry holds, in words: how far down, and the error as that
/// container reports it (its own entry and offset, and where it is in the nesting).
pub(crate) fn nested_words(err: Error) -> String {
    match err.context().depth {
        Some(depth @ 2..) => format!("a container nested in it, {depth} levels down, is corrupt: {err}"),
        _ => format!("its nested container is corrupt: {err}"),
    }
}

/// R50 for entry `e` in words: its payload, stored and computed checksums.
pub(crate) fn checksum_words(e: &tpack::Entry<'_>, stored: u32, computed: u32) -> String {
    format!(
        "its {} payload of {} does not match its checksum (stored {stored:#010x}, computed {computed:#010x}; rule R50)",
        dtype_name(e.dtype()),
        size_words(e.byte_len()),
    )
}

/// Bytes read from a data file per write call.
const WRITE_CHUNK: usize = 1024 * 1024;

/// Where one output entry's payload comes from.
#[derive(Debug, Clone)]
pub(crate) enum Payload<'a> {
    /// Bytes already in memory or mapped.
    Bytes(&'a [u8]),
    /// Bytes the reader made (a PyTorch view gathered from its storage), owned by the entry.
    Owned(Vec<u8>),
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
pub(crate) struct OutEntry<'a> {
    /// Entry name: borrowed from the input, or owned when the input's parser gives owned names.
    pub name: Cow<'a, str>,
    /// Element type.
    pub dtype: Dtype,
    /// Shape, outermost first.
    pub shape: Vec<u64>,
    /// Payload alignment.
    pub alignment: u32,
    /// Load address.
    pub target: Option<u64>,
    /// Payload length in bytes.
    pub length: u64,
    /// The payload.
    pub payload: Payload<'a>,
}

/// Streams `model` as a container to `out` through [`SeekWriter`] and a [`TempOutput`]: memory stays
/// O(table), and `out` holds either its old content or the complete new container. This is the one write
/// path of every command that produces a container.
///
/// # Errors
/// [`Kind::Io`] for I/O failures; [`Kind::Input`] for what the writer refuses (its message names the rule).
pub(crate) fn write(model: &Model<'_>, out: &Path, quiet: bool) -> Result<()> {
    let Model { compat_flags, entries, metadata, .. } = model;
    let writer_error = |e: WriteError<std::io::Error>| match e {
        WriteError::Io(io) => CliError::io("cannot write", out, &io),
        other => CliError::input(format!("cannot write {}: {other}", out.display())),
    };
    let mut file =
        TempOutput::create(out).map_err(|e| CliError::io("cannot create a file next to", out, &e))?;
    {
        let mut w = SeekWriter::new(file.sink(), VecBookkeeping);
        w.set_compat_flags(*compat_flags);
        for e in entries {
            let mut decl = EntryDecl::new(&e.name, e.dtype, &e.shape).with_alignment(e.alignment);
            if let Some(t) = e.target {
                decl = decl.with_target(t);
            }
            w.declare(decl).map_err(|err| {
                CliError::input(format!("cannot write entry {:?} to {}: {err}", e.name, out.display()))
            })?;
        }
        for (key, value) in metadata {
            w.metadata(key, value.as_value()).map_err(|err| {
                CliError::input(format!("cannot write metadata {key:?} to {}: {err}", out.display()))
            })?;
        }
        let total = entries.iter().map(|e| e.length).sum();
        let bar = crate::progress::bytes(total, "writing", quiet);
        let mut buffer = Vec::new();
        for e in entries {
            match &e.payload {
                Payload::Bytes(bytes) => {
                    for chunk in bytes.chunks(WRITE_CHUNK) {
                        w.write(chunk).map_err(writer_error)?;
                        bar.inc(chunk.len() as u64);
                    }
                }
                Payload::Owned(bytes) => {
                    for chunk in bytes.chunks(WRITE_CHUNK) {
                        w.write(chunk).map_err(writer_error)?;
                        bar.inc(chunk.len() as u64);
                    }
                }
                Payload::Swapped { bytes, width } => {
                    let width = *width;
                    for chunk in bytes.chunks(WRITE_CHUNK - WRITE_CHUNK % width.max(1)) {
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
                    buffer.resize(WRITE_CHUNK, 0);
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
