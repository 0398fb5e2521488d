//! Writer errors: generic over the sink's I/O error, like `embedded_io`'s own wrappers.

use core::fmt;

use super::storage::Table;
use crate::error::Error;

/// Why a writer stopped. After any error the writer is poisoned: every later call returns
/// [`WriteError::Poisoned`], and the output is not a valid container (its header is written last, or — for
/// the one-pass writer — its trailer never is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError<E> {
    /// The sink failed.
    Io(E),
    /// The container would break this spec rule (a bad name, shape, alignment, a duplicate name or key, …).
    Format(Error),
    /// A bookkeeping buffer is full.
    Capacity(Table),
    /// Payload bytes were written after every declared entry was complete.
    TooManyEntries,
    /// More payload bytes than the entry's shape allows.
    PayloadTooLong {
        /// The entry being written.
        entry: u32,
        /// Its length from dtype and shape.
        expected: u64,
    },
    /// The entry was ended before its shape's length was written.
    PayloadTooShort {
        /// The entry being written.
        entry: u32,
        /// Its length from dtype and shape.
        expected: u64,
        /// What was written.
        written: u64,
    },
    /// The one-pass writer needs every length before the first byte; this entry has none.
    UnknownLength {
        /// The entry without a shape.
        entry: u32,
    },
    /// Unknown lengths are for byte entries (`RAW`, `CONTAINER`) only.
    UnsizedNotBytes {
        /// The entry declared without a shape.
        entry: u32,
    },
    /// `finish` was called before every declared entry was written.
    EntriesMissing {
        /// Entries completed.
        written: u32,
        /// Entries declared.
        declared: u32,
    },
    /// Entries and metadata must all be declared before the first payload byte.
    AlreadyStarted,
    /// An earlier error stopped this writer.
    Poisoned,
}

impl<E: fmt::Debug> fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Io(e) => write!(f, "the output failed: {e:?}"),
            WriteError::Format(e) => write!(f, "the container would be invalid: {e}"),
            WriteError::Capacity(table) => write!(f, "the writer's {table:?} storage is full"),
            WriteError::TooManyEntries => f.write_str("payload bytes written after the last declared entry"),
            WriteError::PayloadTooLong { entry, expected } => {
                write!(f, "entry {entry}: more than the {expected} bytes its shape gives")
            }
            WriteError::PayloadTooShort { entry, expected, written } => {
                write!(f, "entry {entry}: {written} bytes written, its shape gives {expected}")
            }
            WriteError::UnknownLength { entry } => {
                write!(f, "entry {entry}: the one-pass writer needs every payload length up front")
            }
            WriteError::UnsizedNotBytes { entry } => {
                write!(f, "entry {entry}: only RAW and CONTAINER entries may be declared without a shape")
            }
            WriteError::EntriesMissing { written, declared } => {
                write!(f, "finished after {written} of {declared} declared entries")
            }
            WriteError::AlreadyStarted => {
                f.write_str("entries and metadata must be declared before payloads")
            }
            WriteError::Poisoned => f.write_str("the writer stopped after an earlier error"),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for WriteError<E> {}
