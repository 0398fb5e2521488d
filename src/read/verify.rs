//! The group *payload integrity* (R37, R50, spec §12): zero padding and payload checksums, entry by entry,
//! nested containers included.

use core::iter::FusedIterator;

use super::entry::Entry;
use super::payloads::check_padding;
use super::Container;
use crate::error::Error;

impl<'a> Container<'a> {
    /// Verifies the payload section: for each entry in table order, the padding before it is zero (R37), its
    /// payload matches its checksum (R50), and a nested container verifies likewise (spec §9). Reads every
    /// payload and padding byte once; [`Container::parse`] reads none of them.
    ///
    /// # Errors
    /// [`Error::PaddingNonZero`] or [`Error::EntryChecksum`] for the first problem in that order. For a problem
    /// inside a nested container, the error is the nested container's own (its `entry` and `offset` are
    /// within the nested container); [`Container::verification`] says which outer entry holds it.
    pub fn verify(&self) -> Result<(), Error> {
        self.verification().find_map(|checked| checked.result.err()).map_or(Ok(()), Err)
    }

    /// Verification entry by entry, in table order: one [`EntryVerification`] per entry, so a caller can
    /// report progress (each entry's [`Entry::byte_len`] is done when it is yielded), collect every corrupt
    /// entry rather than stop at the first, or stop early. [`Container::verify`] is its first error.
    #[must_use]
    pub fn verification(&self) -> Verification<'a> {
        let [.., payloads, _] = &self.header.sections;
        Verification { entries: self.entries(), bytes: self.bytes, cursor: payloads.offset.get() }
    }
}

/// What [`Container::verification`] found for one entry.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct EntryVerification<'a> {
    /// The entry checked.
    pub entry: Entry<'a>,
    /// `Ok` when the padding before it is zero, its payload matches its checksum and, for a nested
    /// container, that container verifies; otherwise the first problem, as [`Container::verify`] reports it.
    pub result: Result<(), Error>,
}

/// The iterator returned by [`Container::verification`].
#[derive(Clone, Debug)]
pub struct Verification<'a> {
    entries: super::Entries<'a>,
    bytes: &'a [u8],
    /// End of the previous payload: where the padding before the next entry starts.
    cursor: u64,
}

impl<'a> Iterator for Verification<'a> {
    type Item = EntryVerification<'a>;

    fn next(&mut self) -> Option<EntryVerification<'a>> {
        let entry = self.entries.next()?;
        let padding = check_padding(self.bytes, self.cursor, entry.offset());
        self.cursor = entry.range().end;
        let result = padding.and_then(|()| entry.verify()).and_then(|()| match entry.nested() {
            Some(nested) => nested.verify(),
            None => Ok(()),
        });
        Some(EntryVerification { entry, result })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl ExactSizeIterator for Verification<'_> {}
impl FusedIterator for Verification<'_> {}
