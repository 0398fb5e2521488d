//! Reading: parsing and complete validation of a container (spec §12), then infallible accessors.
//!
//! [`Container::parse`] runs the validation groups in the spec's order — each group in its own module, named
//! after the spec's sections — and after it every accessor is infallible. Untrusted bytes are only ever
//! reached through `get(..)` and zerocopy casts, and every sum or product of offsets is checked.

mod descriptors;
mod entry;
mod extension;
pub(crate) mod header;
mod metadata;
mod names;
mod nested;
mod payloads;
mod signature;
mod verify;

#[cfg(feature = "sign")]
pub(crate) use signature::MAX_SUBJECT_LEN;
pub(crate) use signature::{KEY_ALGORITHM, KEY_COUNTER, KEY_KEY_ID, KEY_PUBLIC_KEY, KEY_SUBJECT};

use core::fmt;

use zerocopy::little_endian::U32;
use zerocopy::FromBytes;

use crate::error::Error;
use crate::format::{Descriptor, Dtype, Header, Packing};

pub use entry::{Entries, Entry, LeElement, NativeElement, Shape};
pub use metadata::{MetaIter, Metadata};
pub(crate) use payloads::check_padding;
pub(crate) use verify::verify_nested;
pub use verify::{EntryVerification, Verification};

/// A validated container borrowed from its bytes.
///
/// Obtained from [`Container::parse`]; cheap to copy (a few slices). All offsets it reports are relative to
/// the container's first byte.
#[derive(Clone, Copy)]
pub struct Container<'a> {
    bytes: &'a [u8],
    header: &'a Header,
    table: &'a [Descriptor],
    index: &'a [U32],
    names: &'a [u8],
    metadata: Metadata<'a>,
    /// One stored CRC per entry (the trailer without its own checksum).
    checksums: &'a [U32],
    depth: u8,
}

/// Reads just enough of `prefix` to learn how long the container starting there is (`total_len`).
///
/// For a loader that holds a larger region (a flash partition, a file with something after it) and must slice
/// out the container before [`Container::parse`]. Nothing but the magic and the major version is validated.
///
/// # Errors
/// [`Error::TooShort`], [`Error::BadMagic`] or [`Error::UnsupportedVersion`].
pub fn declared_len(prefix: &[u8]) -> Result<u64, Error> {
    Ok(header::read_header(prefix)?.total_len.get())
}

impl<'a> Container<'a> {
    /// Parses and validates a container that occupies exactly `bytes`, at any address alignment.
    ///
    /// Every structural rule — all but R37 (zero padding) and R50 (payload checksums), which
    /// [`Container::verify`] checks — is checked, nested containers included, in the spec's order. The time is
    /// linear in the size of the header, table, index, names and metadata (and of nested containers'); no
    /// payload or padding byte of a plain entry is read. Nothing is allocated.
    ///
    /// # Errors
    /// The first broken rule in the spec's order, as an [`Error`] naming the rule and where it is broken.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse_at(bytes, 0)
    }

    /// Parses a container nested at `depth` (0 for the outermost).
    fn parse_at(bytes: &'a [u8], depth: u8) -> Result<Self, Error> {
        let sections = header::check(bytes)?;
        let container = Self::check_entries(bytes, &sections, depth)?;
        nested::check(&container)?;
        Self::check_metadata(container, &sections)
    }

    /// The groups *extension* to *payloads* of spec §12 on `sections` of `bytes` (a whole container, or the
    /// prefix of a stream): the container without its metadata, which [`Container::check_metadata`] adds.
    fn check_entries(bytes: &'a [u8], sections: &header::Sections<'a>, depth: u8) -> Result<Self, Error> {
        let header = sections.header;
        let geometry = extension::geometry(bytes, header)?;
        names::check_names(sections.table, sections.names)?;
        names::check_index(sections.table, sections.index, sections.names)?;
        descriptors::check(sections.table, header.version_minor.get(), geometry)?;
        payloads::check(sections.table, sections.payloads)?;
        Ok(Container {
            bytes,
            header,
            table: sections.table,
            index: sections.index,
            names: sections.names,
            metadata: Metadata::EMPTY,
            checksums: sections.checksums,
            depth,
        })
    }

    /// The groups *metadata* and *signature* of spec §12 on `sections`, completing `container`.
    fn check_metadata(container: Self, sections: &header::Sections<'a>) -> Result<Self, Error> {
        let header = sections.header;
        let metadata =
            metadata::check(sections.metadata, header.meta_count.get(), header.version_minor.get())?;
        let container = Container { metadata, ..container };
        signature::check(&container)?;
        Ok(container)
    }

    /// The view of prefix `bytes` that [`Container::check_prefix`] accepted, without checking again: slices
    /// only, O(1). Like the container `check_prefix` gives, it has no payloads or checksums.
    pub(crate) fn from_checked_prefix(bytes: &'a [u8]) -> Option<Self> {
        let header = header::read_header(bytes).ok()?;
        let [table, index, names, metadata, ..] = header.sections.each_ref().map(header::Bounds::from);
        let part = |b: header::Bounds| crate::layout::slice(bytes, b.offset, b.end.checked_sub(b.offset)?);
        let count = usize::try_from(header.entry_count.get()).ok()?;
        Some(Container {
            bytes,
            header,
            table: <[Descriptor]>::ref_from_bytes_with_elems(part(table)?, count).ok()?,
            index: <[U32]>::ref_from_bytes_with_elems(part(index)?, count).ok()?,
            names: part(names)?,
            metadata: Metadata::from_checked(part(metadata)?, header.meta_count.get())?,
            checksums: &[],
            depth: 0,
        })
    }

    /// The view of `bytes` that [`Container::parse`] accepted, without checking again: slices only, O(1).
    /// `None` when the header's sections no longer fit `bytes` (they changed since they were parsed).
    #[cfg(feature = "std")]
    pub(crate) fn from_checked(bytes: &'a [u8]) -> Option<Self> {
        let container = Self::from_checked_prefix(bytes)?;
        let trailer = header::Bounds::from(container.header.sections.last()?);
        let trailer = crate::layout::slice(bytes, trailer.offset, trailer.end.checked_sub(trailer.offset)?)?;
        let (checksums, _) = <[U32]>::ref_from_prefix_with_elems(trailer, container.table.len()).ok()?;
        Some(Container { checksums, ..container })
    }

    /// The prefix of a stream (spec §11.2), `bytes` from the container's first byte to at least the end of its
    /// metadata, for a `header` that R1–R12 accepted: the structural rules it can be checked for — R13, then
    /// the groups *extension* to *payloads* (the first error), and the groups *metadata* and *signature* (their error kept apart,
    /// since the group *nesting*, which comes before it, needs the payloads). The container it gives has no
    /// payloads or checksums: only its table, names and metadata may be read.
    pub(crate) fn check_prefix(
        bytes: &'a [u8],
        header: &'a Header,
        depth: u8,
    ) -> Result<(Self, Result<(), Error>), Error> {
        let sections = header::check_prefix(bytes, header)?;
        let container = Self::check_entries(bytes, &sections, depth)?;
        match Self::check_metadata(container, &sections) {
            Ok(full) => Ok((full, Ok(()))),
            Err(e) => Ok((container, Err(e))),
        }
    }

    /// The container's bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The fixed header.
    #[must_use]
    pub fn header(&self) -> &'a Header {
        self.header
    }

    /// `(major, minor)` version of the file.
    #[must_use]
    pub fn version(&self) -> (u16, u16) {
        (self.header.version_major.get(), self.header.version_minor.get())
    }

    /// Compatible-feature flags as stored (bits this crate does not know are kept, not interpreted).
    #[must_use]
    pub fn compat_flags(&self) -> u64 {
        self.header.compat_flags.get()
    }

    /// Nesting depth: 0 for a container parsed with [`Container::parse`].
    #[must_use]
    pub fn depth(&self) -> u8 {
        self.depth
    }

    /// Number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the container has no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The entry at `position` in table (payload) order, or `None` past the last one.
    #[must_use]
    pub fn entry(&self, position: usize) -> Option<Entry<'a>> {
        let descriptor = self.table.get(position)?;
        Some(Entry::new(self, u32::try_from(position).ok()?, descriptor))
    }

    /// Every entry, in table (payload) order.
    #[must_use]
    pub fn entries(&self) -> Entries<'a> {
        Entries::new(*self)
    }

    /// The entry called `name`: a binary search over the name index, O(log n), no allocation.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<Entry<'a>> {
        let position = names::find(self.table, self.index, self.names, name.as_bytes())?;
        self.entry(usize::try_from(position).ok()?)
    }

    /// The geometry this file's header extension gives `dtype` (spec §3.4), if it has a record for it. For a
    /// dtype this crate knows the record equals [`Dtype::packing`] (the reader checked, R52); for one it does
    /// not know, it is how the reader checked the entries' lengths.
    #[must_use]
    pub fn geometry(&self, dtype: Dtype) -> Option<Packing> {
        // Read again rather than kept in `Container`: it is rarely asked for, and a smaller `Container` keeps
        // the reader's code small on a microcontroller (copies of it stay inline, without a `memcpy`).
        let records = extension::geometry(self.bytes, self.header).ok()?;
        extension::find(records, dtype).map(extension::packing_of)
    }

    /// The metadata: lookups by key and iteration in key order.
    #[must_use]
    pub fn metadata(&self) -> Metadata<'a> {
        self.metadata
    }
}

impl fmt::Debug for Container<'_> {
    /// A summary — version, length, counts, depth — never the bytes (which may be gigabytes of a mapped file).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Container")
            .field("version", &self.version())
            .field("byte_len", &self.bytes.len())
            .field("entries", &self.len())
            .field("metadata", &self.metadata.len())
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}
