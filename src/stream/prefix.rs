//! The view of a validated prefix: what a stream has told of its entries before their payloads.

use core::fmt;
use core::ops::Range;

use crate::{Container, Dtype, Entry, Metadata, Shape};

/// A container's prefix as a [`super::Decoder`] validated it: its entries (without their payloads, which the
/// stream brings later) and its metadata.
#[derive(Clone, Copy)]
pub struct Prefix<'a> {
    container: Container<'a>,
}

impl fmt::Debug for Prefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prefix").field("entries", &self.len()).field("total_len", &self.total_len()).finish()
    }
}

impl<'a> Prefix<'a> {
    /// The view of prefix bytes that the decoder validated (O(1): they are not checked again).
    pub(super) fn new(bytes: &'a [u8]) -> Option<Self> {
        Container::from_checked_prefix(bytes).map(|container| Prefix { container })
    }

    /// `(major, minor)` version of the stream's container.
    #[must_use]
    pub fn version(&self) -> (u16, u16) {
        self.container.version()
    }

    /// The signed attributes the prefix declares, or `None` for an unsigned container: claims, not yet
    /// authenticated (see [`super::SignedDecoder`]).
    #[must_use]
    pub fn signed_attributes(&self) -> Option<crate::auth::SignedAttributes<'a>> {
        self.container.signed_attributes()
    }

    /// The container's whole length, as its header declares it.
    #[must_use]
    pub fn total_len(&self) -> u64 {
        self.container.header().total_len.get()
    }

    /// The prefix's bytes: header, table, index, names and metadata (the container's first bytes).
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.container.as_bytes()
    }

    /// Number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.container.len()
    }

    /// Whether the container has no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.container.is_empty()
    }

    /// The entry at `position` in table (payload) order.
    #[must_use]
    pub fn entry(&self, position: usize) -> Option<PrefixEntry<'a>> {
        self.container.entry(position).map(|entry| PrefixEntry { entry })
    }

    /// Every entry, in table (payload, and so stream) order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = PrefixEntry<'a>> + 'a {
        self.container.entries().map(|entry| PrefixEntry { entry })
    }

    /// The entry called `name` (binary search over the name index).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<PrefixEntry<'a>> {
        self.container.get(name).map(|entry| PrefixEntry { entry })
    }

    /// The metadata.
    #[must_use]
    pub fn metadata(&self) -> Metadata<'a> {
        self.container.metadata()
    }
}

/// An entry as the prefix describes it; its payload is still to come in the stream.
#[derive(Clone, Copy)]
pub struct PrefixEntry<'a> {
    entry: Entry<'a>,
}

impl fmt::Debug for PrefixEntry<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrefixEntry")
            .field("name", &self.name())
            .field("dtype", &self.dtype())
            .field("range", &self.range())
            .finish()
    }
}

impl<'a> PrefixEntry<'a> {
    /// Position in the table (payload order).
    #[must_use]
    pub fn position(&self) -> usize {
        self.entry.position()
    }

    /// The entry's name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.entry.name()
    }

    /// Element type.
    #[must_use]
    pub fn dtype(&self) -> Dtype {
        self.entry.dtype()
    }

    /// Shape, outermost first.
    #[must_use]
    pub fn shape(&self) -> Shape {
        self.entry.shape()
    }

    /// Payload alignment.
    #[must_use]
    pub fn alignment(&self) -> u32 {
        self.entry.alignment()
    }

    /// Load address, if any.
    #[must_use]
    pub fn target(&self) -> Option<u64> {
        self.entry.target()
    }

    /// Payload length in bytes.
    #[must_use]
    pub fn byte_len(&self) -> u64 {
        self.entry.byte_len()
    }

    /// Where the payload lies in the container.
    #[must_use]
    pub fn range(&self) -> Range<u64> {
        self.entry.range()
    }
}
