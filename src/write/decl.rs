//! What a writer is told about an entry before its payload: [`EntryDecl`], and [`NewEntry`] — a declaration
//! with its payload, for writers that take whole entries.

use crate::format::{Dtype, DEFAULT_ALIGNMENT};

/// One entry to declare: everything but its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryDecl<'a> {
    /// Name: UTF-8, 1 to 1024 bytes, unique in the container.
    pub name: &'a str,
    /// Element type; one this crate knows.
    pub dtype: Dtype,
    /// Shape, outermost first, at most 8 dimensions; `None` only for a `RAW` or `CONTAINER` entry whose
    /// length is whatever gets written (which only the seekable writer can do).
    pub shape: Option<&'a [u64]>,
    /// Payload alignment: a power of two from 1 to 65536.
    pub alignment: u32,
    /// Load address, if any.
    pub target: Option<u64>,
}

impl<'a> EntryDecl<'a> {
    /// An entry of known shape, with the default alignment (64) and no target.
    #[must_use]
    pub fn new(name: &'a str, dtype: Dtype, shape: &'a [u64]) -> Self {
        Self { name, dtype, shape: Some(shape), alignment: DEFAULT_ALIGNMENT, target: None }
    }

    /// A `RAW` (or `CONTAINER`) entry whose length is decided by what is written to it.
    #[must_use]
    pub fn open_ended(name: &'a str, dtype: Dtype) -> Self {
        Self { name, dtype, shape: None, alignment: DEFAULT_ALIGNMENT, target: None }
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

    /// The entry with its payload.
    #[must_use]
    pub fn with_data(self, data: &'a [u8]) -> NewEntry<'a> {
        NewEntry { decl: self, data }
    }
}

/// One whole entry: its declaration and its payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewEntry<'a> {
    /// What the entry is.
    pub decl: EntryDecl<'a>,
    /// The payload: exactly as long as `decl`'s dtype and shape give (any length for an open-ended entry).
    pub data: &'a [u8],
}

impl<'a> NewEntry<'a> {
    /// An entry of known shape with the default alignment (64) and no target: shorthand for
    /// `EntryDecl::new(name, dtype, shape).with_data(data)`.
    #[must_use]
    pub fn new(name: &'a str, dtype: Dtype, shape: &'a [u64], data: &'a [u8]) -> Self {
        EntryDecl::new(name, dtype, shape).with_data(data)
    }
}
