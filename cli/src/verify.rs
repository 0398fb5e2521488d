//! `tpack verify`: full structural and checksum verification, naming every corrupt entry.

use std::fmt::Write as _;
use std::path::Path;

use tpack::checksum::Crc32;
use tpack::{Container, Entry};

use crate::describe::dtype_name;
use crate::error::{CliError, Result};
use crate::fsutil::size_words;
use crate::open_container;

/// Bytes checksummed between progress updates.
const CHUNK: usize = 8 * 1024 * 1024;

/// What verification found wrong with one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Index in the table.
    pub entry: usize,
    /// The entry's name.
    pub name: String,
    /// What is wrong, in words.
    pub what: String,
}

/// Runs `tpack verify`: `Ok(report)` when the file is intact.
///
/// # Errors
/// [`crate::error::Kind::Invalid`] listing every corrupt entry, or the structural rule the file breaks;
/// [`crate::error::Kind::Io`] when it cannot be read.
pub fn run(path: &Path, quiet: bool) -> Result<String> {
    let map = crate::fsutil::map(path)?;
    let container = open_container(path, &map)?;
    let total: u64 = container.entries().map(|e| e.byte_len()).sum();
    let bar = crate::progress::bytes(total, "verifying", quiet);
    let problems = check(&container, &mut |n| bar.inc(n));
    bar.finish_and_clear();
    if problems.is_empty() {
        return Ok(format!(
            "{}: intact: {} entries, {} of payload, every checksum matches\n",
            path.display(),
            container.len(),
            size_words(total)
        ));
    }
    let mut message = format!(
        "{} is corrupt: {} of {} entries fail verification",
        path.display(),
        problems.len(),
        container.len()
    );
    for p in &problems {
        let _ = write!(message, "\n  entry {} {:?}: {}", p.entry, p.name, p.what);
    }
    Err(CliError::invalid(message))
}

/// Checks every entry of a parsed container: the padding before it is zero (R37), its payload matches its
/// checksum (R50), and a nested container verifies. `progress` receives payload bytes as they are checked.
pub fn check(container: &Container<'_>, progress: &mut dyn FnMut(u64)) -> Vec<Problem> {
    let bytes = container.as_bytes();
    let mut problems = Vec::new();
    let mut cursor = container.header().sections[4].offset.get();
    for e in container.entries() {
        let mut what = Vec::new();
        let padding = usize::try_from(cursor).ok().zip(usize::try_from(e.offset()).ok());
        if let Some(at) =
            padding.and_then(|(from, to)| bytes.get(from..to)).and_then(|p| p.iter().position(|&b| b != 0))
        {
            what.push(format!("padding byte {} before it is not zero (rule R37)", cursor + at as u64));
        }
        let computed = checksum(&e, progress);
        if computed != e.checksum() {
            what.push(format!(
                "its {} payload of {} does not match its checksum (stored {:#010x}, computed {computed:#010x}; rule R50)",
                dtype_name(e.dtype()),
                size_words(e.byte_len()),
                e.checksum()
            ));
        } else if let Some(nested) = e.nested() {
            if let Err(err) = nested.verify() {
                what.push(format!("its nested container is corrupt: {err}"));
            }
        }
        if !what.is_empty() {
            problems.push(Problem { entry: e.index(), name: e.name().to_owned(), what: what.join("; ") });
        }
        cursor = e.range().end;
    }
    problems
}

fn checksum(e: &Entry<'_>, progress: &mut dyn FnMut(u64)) -> u32 {
    let mut crc = Crc32::new();
    for chunk in e.payload().chunks(CHUNK) {
        crc.update(chunk);
        progress(chunk.len() as u64);
    }
    crc.finish()
}
