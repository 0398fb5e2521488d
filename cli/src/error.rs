//! The one error type of the tool: a plain-words sentence and the exit code it maps to.

use std::fmt;
use std::io;
use std::path::Path;
use std::process::ExitCode;

/// What kind of failure ended a command; each kind has its own exit code (see `tpack --help`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A tpack file is invalid or corrupt (exit code 1).
    Invalid,
    /// A manifest, a foreign model file or a command-line value cannot be used (exit code 3).
    Input,
    /// Reading or writing a file failed, or an output exists and `--force` was not given (exit code 4).
    Io,
}

impl Kind {
    /// The process exit code of this kind; 2 is left to command-line syntax errors (clap's convention).
    #[must_use]
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::Invalid => 1,
            Kind::Input => 3,
            Kind::Io => 4,
        }
    }
}

/// A failure described in one plain sentence that names the file and what is wrong with it.
#[derive(Debug)]
pub struct CliError {
    kind: Kind,
    message: String,
}

impl CliError {
    /// A failure of `kind` described by `message`.
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    /// The tpack file is invalid or corrupt.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Kind::Invalid, message)
    }

    /// An input cannot be used.
    pub fn input(message: impl Into<String>) -> Self {
        Self::new(Kind::Input, message)
    }

    /// `action` (for example "cannot read") on `path` failed with `error`. When an output (an action of
    /// `OUTPUT_ACTIONS`) cannot be created because its directory is missing, the message names the directory
    /// and says to create it.
    pub fn io(action: &str, path: &Path, error: &io::Error) -> Self {
        let output = OUTPUT_ACTIONS.iter().any(|a| action.starts_with(a));
        match missing_directory(path) {
            Some(dir) if output && error.kind() == io::ErrorKind::NotFound => Self::no_directory(path, dir),
            _ => Self::new(Kind::Io, format!("{action} {}: {}", path.display(), io_words(error))),
        }
    }

    /// The output `path` cannot be created because its directory `dir` does not exist.
    pub fn no_directory(path: &Path, dir: &Path) -> Self {
        Self::new(
            Kind::Io,
            format!(
                "cannot create {}: the directory {} does not exist; create it first (`mkdir -p {}`) or choose another \
                 path",
                path.display(),
                dir.display(),
                dir.display()
            ),
        )
    }

    /// The kind, which gives the exit code.
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The process exit code.
    #[must_use]
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.kind.exit_code())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// The beginnings of [`CliError::io`] actions on an output, whose missing directory the user can create.
pub const OUTPUT_ACTIONS: &[&str] = &["cannot create", "cannot write", "cannot save", "cannot replace"];

/// The directory `path` would be in, when `path` names one and it does not exist.
#[must_use]
pub fn missing_directory(path: &Path) -> Option<&Path> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    matches!(dir.metadata(), Err(e) if e.kind() == io::ErrorKind::NotFound).then_some(dir)
}

/// ENOSPC and EDQUOT on Linux, for an error whose kind the standard library leaves uncategorized. Linux's
/// numbers only: on Windows 28 and 122 are other errors (ERROR_OUT_OF_PAPER, ERROR_INSUFFICIENT_BUFFER), and
/// there and on macOS a full disk is told by its kind.
#[cfg(target_os = "linux")]
const NO_SPACE_CODES: &[i32] = &[28, 122];
#[cfg(not(target_os = "linux"))]
const NO_SPACE_CODES: &[i32] = &[];

/// What a full disk reads as, on every path that writes (containers, safetensors files, unpacked payloads,
/// manifests): what happened and what to do.
pub const DISK_FULL: &str =
    "the disk is full; free some space or write to another disk, then run the command again";

/// An I/O error in words, without the `(os error N)` suffix users cannot act on.
#[must_use]
pub fn io_words(error: &io::Error) -> String {
    if error.raw_os_error().is_some_and(|code| NO_SPACE_CODES.contains(&code)) {
        return DISK_FULL.to_owned();
    }
    match error.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        io::ErrorKind::AlreadyExists => "it already exists".to_owned(),
        io::ErrorKind::IsADirectory => "it is a directory".to_owned(),
        io::ErrorKind::NotADirectory => "a part of the path is not a directory".to_owned(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => DISK_FULL.to_owned(),
        io::ErrorKind::ReadOnlyFilesystem => "the file system is read-only; write to another one".to_owned(),
        _ => {
            let text = error.to_string();
            match text.find(" (os error") {
                Some(cut) => text[..cut].to_lowercase(),
                None => text,
            }
        }
    }
}

/// Shorthand for results of the tool.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk reads the same whatever the error's origin: the kind, the raw code, a quota.
    #[test]
    fn a_full_disk_reads_the_same_on_every_path() {
        let path = Path::new("out/m.tpack");
        let mut errors =
            vec![io::Error::from(io::ErrorKind::StorageFull), io::Error::from(io::ErrorKind::QuotaExceeded)];
        // The raw codes: ENOSPC (28 on Linux and macOS alike), and Windows' ERROR_DISK_FULL.
        #[cfg(unix)]
        errors.push(io::Error::from_raw_os_error(28));
        #[cfg(windows)]
        errors.push(io::Error::from_raw_os_error(112));
        // A real ENOSPC from the kernel, where /dev/full exists.
        #[cfg(target_os = "linux")]
        if let Ok(mut full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
            use std::io::Write;
            errors.push(full.write_all(&[0; 4096]).and_then(|()| full.flush()).unwrap_err());
        }
        for e in &errors {
            for action in ["cannot write", "cannot save", "cannot create"] {
                assert_eq!(
                    CliError::io(action, path, e).to_string(),
                    format!("{action} out/m.tpack: {DISK_FULL}"),
                    "{e:?}"
                );
            }
        }
    }

    /// Linux's ENOSPC is Windows' ERROR_OUT_OF_PAPER: not a full disk there.
    #[cfg(windows)]
    #[test]
    fn windows_error_28_is_not_a_full_disk() {
        assert_ne!(io_words(&io::Error::from_raw_os_error(28)), DISK_FULL);
    }

    #[test]
    fn a_missing_output_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("no/such/m.tpack");
        let e = io::Error::from(io::ErrorKind::NotFound);
        let message = CliError::io("cannot create a file next to", &out, &e).to_string();
        let missing = dir.path().join("no/such");
        assert_eq!(
            message,
            format!(
                "cannot create {}: the directory {} does not exist; create it first (`mkdir -p {}`) or choose another \
                 path",
                out.display(),
                missing.display(),
                missing.display()
            )
        );
        // An input in a missing directory is only not found: there is nothing to create.
        let read = CliError::io("cannot open", &out, &e).to_string();
        assert_eq!(read, format!("cannot open {}: no such file or directory", out.display()));
        // A path without a directory part, or in one that exists, has no missing directory.
        assert_eq!(missing_directory(Path::new("m.tpack")), None);
        assert_eq!(missing_directory(&dir.path().join("m.tpack")), None);
    }
}
