//! `tpack verify`: full structural and checksum verification, naming every corrupt entry.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{CliError, Result};
use crate::formats::tpack::{check, open};
use crate::fsutil::size_words;

/// Runs `tpack verify`: `Ok(report)` when the file is intact.
///
/// # Errors
/// [`crate::error::Kind::Invalid`] listing every corrupt entry, or the structural rule the file breaks;
/// [`crate::error::Kind::Io`] when it cannot be read.
pub fn run(path: &Path, quiet: bool) -> Result<String> {
    let map = crate::fsutil::map(path)?;
    let container = open(path, &map)?;
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
