//! An in-memory writer (feature `alloc`) for containers that fit in memory: collects entries and metadata,
//! then encodes them through the one-pass writer into a `Vec<u8>`.

use alloc::vec::Vec;
use core::convert::Infallible;

use super::error::WriteError;
use super::storage::VecTables;
use super::stream::{EntryDecl, StreamWriter};
use super::value::Value;
use crate::error::Error;
use crate::format::{Descriptor, Dtype, DEFAULT_ALIGNMENT};
use crate::read::{expected_length, Container};

/// One entry to write: what it is and its payload bytes.
#[derive(Clone, Copy, Debug)]
pub struct NewEntry<'a> {
    /// Name: UTF-8, 1 to 1024 bytes, unique in the container.
    pub name: &'a str,
    /// Element type; not [`Dtype::Unknown`].
    pub dtype: Dtype,
    /// Shape, outermost first, at most 8 dimensions.
    pub shape: &'a [u64],
    /// Payload alignment: a power of two up to 65536.
    pub alignment: u32,
    /// Load address, if any.
    pub target: Option<u64>,
    /// Payload; its length must be what `dtype` and `shape` give.
    pub data: &'a [u8],
}

impl<'a> NewEntry<'a> {
    /// An entry with the default alignment (64) and no target.
    #[must_use]
    pub fn new(name: &'a str, dtype: Dtype, shape: &'a [u64], data: &'a [u8]) -> Self {
        Self { name, dtype, shape, alignment: DEFAULT_ALIGNMENT, target: None, data }
    }

    /// The same entry with another alignment.
    #[must_use]
    pub fn with_alignment(self, alignment: u32) -> Self {
        Self { alignment, ..self }
    }

    /// The same entry with a load address.
    #[must_use]
    pub fn with_target(self, target: u64) -> Self {
        Self { target: Some(target), ..self }
    }
}

/// Builds a container in memory.
///
/// ```
/// use tpack::{Builder, Container, Dtype, NewEntry, Value};
/// let weights: Vec<u8> = [1.0f32, 2.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let mut builder = Builder::new();
/// builder.push(NewEntry::new("layer0.weight", Dtype::F32, &[3], &weights))?;
/// builder.meta("layers", Value::U64(1))?;
/// let bytes = builder.finish()?;
/// let container = Container::parse(&bytes)?;
/// assert_eq!(container.get("layer0.weight").unwrap().byte_len(), 12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Builder {
    writer: StreamWriter<Vec<u8>, Vec<Descriptor>, Vec<u8>, Vec<u32>>,
    payloads: Vec<Vec<u8>>,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// An empty builder.
    #[must_use]
    pub fn new() -> Self {
        Self { writer: StreamWriter::new(Vec::new(), VecTables::new()), payloads: Vec::new() }
    }

    /// Sets the compatible-feature flags to write (none are defined in 1.0).
    pub fn compat_flags(&mut self, flags: u64) -> &mut Self {
        self.writer.set_compat_flags(flags);
        self
    }

    /// Appends an entry; payloads are laid out in the order entries are pushed.
    ///
    /// # Errors
    /// [`WriteError::Format`] with the rule the entry would break, [`Error::LengthMismatch`] included.
    /// Duplicate names are reported by [`Builder::finish`].
    pub fn push(&mut self, e: NewEntry<'_>) -> Result<&mut Self, WriteError<Infallible>> {
        let entry = u32::try_from(self.payloads.len()).unwrap_or(u32::MAX);
        let stored = u64::try_from(e.data.len()).unwrap_or(u64::MAX);
        if let Ok(Some(expected)) = expected_length(entry, e.dtype, e.shape.iter().copied()) {
            if expected != stored {
                return Err(WriteError::Format(Error::LengthMismatch { entry, expected }));
            }
        }
        let mut decl = EntryDecl::new(e.name, e.dtype, e.shape).with_alignment(e.alignment);
        decl.target = e.target;
        self.writer.declare(decl)?;
        self.payloads.push(e.data.to_vec());
        Ok(self)
    }

    /// Sets metadata `key` to `value`.
    ///
    /// # Errors
    /// [`WriteError::Format`] for an empty or over-long key or a value too large for the pool. Duplicate keys
    /// are reported by [`Builder::finish`].
    pub fn meta(&mut self, key: &str, value: Value<'_>) -> Result<&mut Self, WriteError<Infallible>> {
        self.writer.meta(key, value)?;
        Ok(self)
    }

    /// Encodes the container.
    ///
    /// # Errors
    /// [`WriteError::Format`] for duplicate names or keys, or any rule the output would break — found by
    /// parsing the output before returning it (a nested container that is invalid, say).
    pub fn finish(mut self) -> Result<Vec<u8>, WriteError<Infallible>> {
        for payload in &self.payloads {
            self.writer.write_entry(payload)?;
        }
        let bytes = self.writer.finish()?;
        Container::parse(&bytes).map_err(WriteError::Format)?;
        Ok(bytes)
    }
}
