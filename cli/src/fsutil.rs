//! Reading inputs through memory maps and writing outputs without clobbering what the user did not ask to
//! replace.

use std::fs::File;
use std::path::Path;

use crate::error::{CliError, Kind, Result};

/// Maps `path` read-only.
///
/// # Errors
/// An I/O failure to open or map it, in words.
pub fn map(path: &Path) -> Result<memmap2::Mmap> {
    let file = File::open(path).map_err(|e| CliError::io("cannot open", path, &e))?;
    map_file(&file, path)
}

/// Maps `file`, open at `path` (which names it in messages and for the SIGBUS handler), read-only.
///
/// # Errors
/// As [`map`].
pub fn map_file(file: &File, path: &Path) -> Result<memmap2::Mmap> {
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(CliError::new(Kind::Io, format!("cannot read {}: it is a directory", path.display())));
    }
    // SAFETY: a shared read-only mapping. Another process truncating the file while it is mapped raises
    // SIGBUS, as for every mmap-based reader: `crate::signals` turns that into an error message and exit code.
    // Every byte read through the map is validated, never trusted.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(file) }.map_err(|e| CliError::io("cannot map", path, &e))?;
    crate::signals::watch_input(path, &map);
    Ok(map)
}

/// Refuses to go on when `path` exists (as anything, a dangling symlink included) and `force` is off.
///
/// # Errors
/// [`Kind::Io`] naming the path and the `--force` flag.
pub fn check_overwrite(path: &Path, force: bool) -> Result<()> {
    if !force && path.symlink_metadata().is_ok() {
        return Err(CliError::new(
            Kind::Io,
            format!("{} already exists; pass --force to replace it", path.display()),
        ));
    }
    Ok(())
}

/// Human-readable size: `1.5 MiB (1572864 bytes)`, or just `N bytes` below 1 KiB.
#[must_use]
pub fn size_words(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{} ({bytes} bytes)", size_short(bytes))
    }
}

/// Short human-readable size: `1.5 MiB`, `12 B`.
#[must_use]
pub fn size_short(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}
