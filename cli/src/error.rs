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

    /// `action` (for example "cannot read") on `path` failed with `error`.
    pub fn io(action: &str, path: &Path, error: &io::Error) -> Self {
        Self::new(Kind::Io, format!("{action} {}: {}", path.display(), io_words(error)))
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

/// An I/O error in words, without the `(os error N)` suffix users cannot act on.
#[must_use]
pub fn io_words(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        io::ErrorKind::AlreadyExists => "it already exists".to_owned(),
        io::ErrorKind::IsADirectory => "it is a directory".to_owned(),
        io::ErrorKind::StorageFull => "the disk is full".to_owned(),
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
