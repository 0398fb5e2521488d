//! Writer errors: generic over the sink's I/O error, like `embedded_io`'s own wrappers.

use core::fmt;

use super::bookkeeping::Buffer;
use crate::error::Error;

/// Why a writer stopped. After any error the writer is poisoned: every later call returns
/// [`WriteError::Poisoned`], and the output is not a valid container (the seekable mode writes the magic
/// last; the one-pass mode never writes the trailer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError<E> {
    /// The sink failed.
    Io(E),
    /// The container would break this spec rule (a bad name, shape, alignment, a duplicate name or key, …).
    Format(Error),
    /// A bookkeeping buffer is full.
    BufferFull(Buffer),
    /// The container would be larger than 2^64 bytes, or an offset or length in it would overflow.
    TooLarge,
    /// The seekable sink stands at `position` after the container's `written` bytes: it was moved behind the
    /// writer's back, so the writer cannot tell where the container starts.
    SinkPosition {
        /// Where the sink stood.
        position: u64,
        /// Bytes the writer wrote.
        written: u64,
    },
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

/// What a [`WriteError`] means to a caller that maps writer errors to codes or exception classes of its own
/// (the C API's result codes, the Python package's exceptions), as [`WriteError::class`] gives it.
///
/// Exhaustive on purpose, while `WriteError` is not: a variant added to `WriteError` must be given its class
/// in `class`, whose match is exhaustive, before the crate compiles; a class added here fails to compile in
/// every binding until it maps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteErrorClass<'a, E> {
    /// The sink failed with this error.
    Io(&'a E),
    /// The container would break this rule.
    Format(Error),
    /// This bookkeeping buffer is full.
    BufferFull(Buffer),
    /// The container would overflow 64-bit offsets.
    TooLarge,
    /// The writer was used out of order or against its declarations: `entry` is the entry concerned, `value`
    /// the number the misuse is about (the entry's declared byte length; for a finish before every entry was
    /// written, `entry` counts the entries written and `value` those declared).
    Misuse {
        /// The entry concerned.
        entry: Option<u32>,
        /// The number the misuse is about.
        value: Option<u64>,
    },
    /// An earlier error stopped the writer.
    Poisoned,
}

impl<E> WriteError<E> {
    /// The error's class, with the context a binding copies (see [`WriteErrorClass`]).
    #[must_use]
    pub fn class(&self) -> WriteErrorClass<'_, E> {
        let misuse = |entry: Option<u32>, value: Option<u64>| WriteErrorClass::Misuse { entry, value };
        match self {
            WriteError::Io(e) => WriteErrorClass::Io(e),
            WriteError::Format(e) => WriteErrorClass::Format(*e),
            WriteError::BufferFull(buffer) => WriteErrorClass::BufferFull(*buffer),
            WriteError::TooLarge => WriteErrorClass::TooLarge,
            WriteError::SinkPosition { .. } | WriteError::TooManyEntries | WriteError::AlreadyStarted => {
                misuse(None, None)
            }
            WriteError::PayloadTooLong { entry, expected }
            | WriteError::PayloadTooShort { entry, expected, .. } => misuse(Some(*entry), Some(*expected)),
            WriteError::UnknownLength { entry } | WriteError::UnsizedNotBytes { entry } => {
                misuse(Some(*entry), None)
            }
            WriteError::EntriesMissing { written, declared } => {
                misuse(Some(*written), Some(u64::from(*declared)))
            }
            WriteError::Poisoned => WriteErrorClass::Poisoned,
        }
    }
}

impl<E: fmt::Debug> fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Io(e) => write!(f, "the output failed: {e:?}"),
            WriteError::Format(e) => write!(f, "the container would be invalid: {e}"),
            WriteError::BufferFull(buffer) => write!(f, "the writer's {buffer:?} buffer is full"),
            WriteError::TooLarge => f.write_str("the container would overflow 64-bit offsets"),
            WriteError::SinkPosition { position, written } => {
                write!(
                    f,
                    "the sink stands at byte {position} after {written} bytes were written: it was moved"
                )
            }
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

/// An error when the sink's error is one (`std::io::Error`, `Infallible`, …). `Display` repeats the wrapped
/// error's message, since most callers print one line; `source` gives the wrapped error itself.
impl<E: core::error::Error + 'static> core::error::Error for WriteError<E> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            WriteError::Io(e) => Some(e),
            WriteError::Format(e) => Some(e),
            WriteError::BufferFull(_)
            | WriteError::TooLarge
            | WriteError::SinkPosition { .. }
            | WriteError::TooManyEntries
            | WriteError::PayloadTooLong { .. }
            | WriteError::PayloadTooShort { .. }
            | WriteError::UnknownLength { .. }
            | WriteError::UnsizedNotBytes { .. }
            | WriteError::EntriesMissing { .. }
            | WriteError::AlreadyStarted
            | WriteError::Poisoned => None,
        }
    }
}
