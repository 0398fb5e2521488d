//! [`Builder`] (feature `alloc`): a container built in memory, for content that fits there — the writer
//! plus a check of the result by the reader.
//!
//! It sits above both `write` and `read` (which do not import each other): it encodes through the one-pass
//! writer, then parses what it wrote, which catches what no streaming writer can check as it goes (a
//! `CONTAINER` payload that is not a valid container).

use alloc::vec::Vec;
use core::convert::Infallible;

use super::{EntryDecl, NewEntry, StreamWriter, VecBookkeeping, WriteError};
use crate::error::Error;
use crate::layout::len_u64;
use crate::meta_value::MetaValue;
use crate::read::Container;

/// Builds a container in memory.
///
/// ```
/// use tpack::write::{Builder, NewEntry};
/// use tpack::{Container, Dtype, MetaValue};
/// let weights: Vec<u8> = [1.0f32, 2.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let mut builder = Builder::new();
/// builder.push(NewEntry::new("layer0.weight", Dtype::F32, &[3], &weights))?;
/// builder.metadata("layers", MetaValue::U64(1))?;
/// let bytes = builder.finish()?;
/// let container = Container::parse(&bytes)?;
/// assert_eq!(container.get("layer0.weight").unwrap().byte_len(), 12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Builder {
    writer: StreamWriter<Vec<u8>, VecBookkeeping>,
    payloads: Vec<Vec<u8>>,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for Builder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Builder").field("entries", &self.payloads.len()).finish_non_exhaustive()
    }
}

impl Builder {
    /// An empty builder.
    #[must_use]
    pub fn new() -> Self {
        Self { writer: StreamWriter::new(Vec::new(), VecBookkeeping), payloads: Vec::new() }
    }

    /// Sets the compatible-feature flags to write (none are defined in 1.0).
    pub fn compat_flags(&mut self, flags: u64) -> &mut Self {
        self.writer.set_compat_flags(flags);
        self
    }

    /// Appends an entry (copying its payload); payloads are laid out in the order entries are pushed. An
    /// open-ended declaration ([`EntryDecl::open_ended`]) takes the payload's length as its shape.
    ///
    /// # Errors
    /// [`WriteError::Format`] with the rule the entry would break, [`Error::LengthMismatch`] included.
    /// Duplicate names are reported by [`Builder::finish`].
    pub fn push(&mut self, e: NewEntry<'_>) -> Result<&mut Self, WriteError<Infallible>> {
        let entry = u32::try_from(self.payloads.len()).unwrap_or(u32::MAX);
        let stored = len_u64(e.data.len());
        let byte_shape = [stored];
        let decl = EntryDecl { shape: Some(e.decl.shape.unwrap_or(&byte_shape)), ..e.decl };
        if let Some(shape) = decl.shape {
            match decl.dtype.byte_len(shape) {
                Ok(expected) if expected != stored => {
                    return Err(WriteError::Format(Error::LengthMismatch { entry, expected }));
                }
                // The writer reports a bad shape with the rule it breaks.
                Ok(_) | Err(_) => {}
            }
        }
        self.writer.declare(decl)?;
        self.payloads.push(e.data.to_vec());
        Ok(self)
    }

    /// Sets metadata `key` to `value`.
    ///
    /// # Errors
    /// As [`crate::write::Writer::metadata`]. Duplicate keys are reported by [`Builder::finish`].
    pub fn metadata(&mut self, key: &str, value: MetaValue<'_>) -> Result<&mut Self, WriteError<Infallible>> {
        self.writer.metadata(key, value)?;
        Ok(self)
    }

    /// Signs the container with `key` (feature `sign`; see [`crate::write::Writer::sign`]).
    ///
    /// # Errors
    /// As [`crate::write::Writer::sign`].
    #[cfg(feature = "sign")]
    pub fn sign(
        &mut self,
        key: &crate::sign::SigningKey,
        options: &crate::sign::SignOptions,
    ) -> Result<&mut Self, WriteError<Infallible>> {
        self.writer.sign(key, options)?;
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
