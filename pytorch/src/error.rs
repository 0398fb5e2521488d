//! Why a checkpoint is refused: one variant per kind of rule, each with what locates the problem.

use std::fmt;

/// Why bytes are not a PyTorch checkpoint this crate reads. Names and strings taken from the file are
/// escaped (`escape_debug`) when displayed, so no control character of the file reaches a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The zip archive is malformed or holds what a checkpoint must not (`..` names, duplicates, ...).
    Zip(String),
    /// The pickle stream is malformed at byte `offset` of the pickle named `pickle`.
    Pickle {
        /// Which pickle (`data.pkl`, `the object pickle`, ...).
        pickle: String,
        /// Where the opcode starts, in that pickle.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// The pickle names a global that is not one of the few this crate builds; nothing was imported or
    /// called.
    ForbiddenGlobal {
        /// Which pickle.
        pickle: String,
        /// Where the opcode that names it starts.
        offset: u64,
        /// `module.name`, as the pickle spells it.
        global: String,
        /// The opcode that named it (`GLOBAL`, `STACK_GLOBAL`, `INST`).
        opcode: &'static str,
    },
    /// A limit that bounds time or memory was reached.
    Limit {
        /// What was counted.
        what: &'static str,
        /// The limit.
        limit: u64,
    },
    /// The objects are valid pickle but not a checkpoint of tensors as PyTorch writes one (a tensor over a
    /// storage that is missing or shorter than its view, ...).
    Checkpoint(String),
}

/// `text` with control characters and quotes escaped, for messages.
pub(crate) fn escaped(text: &str) -> String {
    text.escape_debug().to_string()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Zip(what) => write!(f, "invalid zip archive: {what}"),
            Error::Pickle { pickle, offset, what } => write!(f, "{pickle}, byte {offset}: {what}"),
            Error::ForbiddenGlobal { pickle, offset, global, opcode } => write!(
                f,
                "pickle global {} is not allowed ({opcode} at byte {offset} of {pickle}); tpack builds only \
                 tensors, storages, ordered dicts and plain values from a checkpoint, and imports or calls nothing",
                escaped(global)
            ),
            Error::Limit { what, limit } => write!(f, "{what} exceeds the limit of {limit}"),
            Error::Checkpoint(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {}

/// A result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
