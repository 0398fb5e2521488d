//! The group *payload integrity* (R37, R50, spec §12): zero padding and payload checksums, entry by entry,
//! nested containers included.

use core::iter::FusedIterator;

use super::entry::{Entries, Entry};
use super::payloads::check_padding;
use super::Container;
use crate::checksum::Crc32;
use crate::error::Error;

/// Payload bytes checksummed between two calls of a progress hook: small enough that a bar moves smoothly
/// through a gigabyte-sized entry, large enough that the calls cost nothing.
const PROGRESS_STEP: usize = 4 << 20;

impl<'a> Container<'a> {
    /// Verifies the payload section: for each entry in table order, the padding before it is zero (R37), its
    /// payload matches its checksum (R50), and a nested container verifies likewise (spec §9). Reads every
    /// payload and padding byte once; [`Container::parse`] reads none of them.
    ///
    /// # Errors
    /// [`Error::PaddingNonZero`] or [`Error::EntryChecksum`] for the first problem in that order. For a problem
    /// inside a nested container, its `entry` and `offset` are within the nested container, and its
    /// [`Nesting`](crate::Nesting) (in [`Error::context`]: `depth` and `outer_entry`) says how deep that
    /// container is and which entry of this one holds it.
    pub fn verify(&self) -> Result<(), Error> {
        // The same checks as `verification`, without its progress steps: on a microcontroller this is the
        // path that runs, and it is a few hundred bytes smaller.
        let [.., payloads, _] = &self.header.sections;
        let mut cursor = payloads.offset.get();
        for entry in self.entries() {
            check_padding(self.bytes, cursor, entry.offset())?;
            entry.verify()?;
            verify_nested(&entry)?;
            cursor = entry.range().end;
        }
        Ok(())
    }

    /// Verification entry by entry, in table order: one [`EntryVerification`] per entry, so that a caller can
    /// collect every corrupt entry rather than stop at the first, or stop early. With
    /// [`Verification::with_progress`] it also reports the payload bytes checked as it goes.
    /// [`Container::verify`] is its first error.
    #[must_use]
    pub fn verification(&self) -> Verification<'a> {
        let [.., payloads, _] = &self.header.sections;
        let progress: fn(u64) = ignore_progress;
        Verification { entries: self.entries(), bytes: self.bytes, cursor: payloads.offset.get(), progress }
    }
}

/// The payload-integrity group of the container `entry` holds, if it holds one, with its errors placed a level
/// deeper inside `entry` ([`Error::held_by`]).
pub(crate) fn verify_nested(entry: &Entry<'_>) -> Result<(), Error> {
    let Some(nested) = entry.nested() else { return Ok(()) };
    nested.verify().map_err(|e| e.held_by(entry.index()))
}

/// What [`Container::verification`] found for one entry.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct EntryVerification<'a> {
    /// The entry checked.
    pub entry: Entry<'a>,
    /// R37 for the padding between the previous payload (or the section's start) and this one:
    /// [`Error::PaddingNonZero`] at the first non-zero byte.
    pub padding: Result<(), Error>,
    /// R50 for the payload — [`Error::EntryChecksum`] — and, when it matches, the verification of the
    /// container a `CONTAINER` entry holds (that container's own first error, placed inside this entry by its
    /// [`Nesting`](crate::Nesting)).
    pub payload: Result<(), Error>,
}

impl EntryVerification<'_> {
    /// The entry's first problem in the spec's order (padding, then payload), or `Ok`.
    ///
    /// # Errors
    /// The first of [`EntryVerification::padding`] and [`EntryVerification::payload`] that is an error.
    pub fn result(&self) -> Result<(), Error> {
        self.padding.and(self.payload)
    }
}

/// The iterator returned by [`Container::verification`]; `P` is its progress hook.
#[derive(Clone, Debug)]
pub struct Verification<'a, P = fn(u64)> {
    entries: Entries<'a>,
    bytes: &'a [u8],
    /// End of the previous payload: where the padding before the next entry starts.
    cursor: u64,
    progress: P,
}

fn ignore_progress(_: u64) {}

impl<'a> Verification<'a> {
    /// The same verification, calling `progress` with the number of payload bytes checked since its last
    /// call, every few megabytes and at the end of each entry; the numbers add up to the payloads' total
    /// length.
    #[must_use]
    pub fn with_progress<P: FnMut(u64)>(self, progress: P) -> Verification<'a, P> {
        Verification { entries: self.entries, bytes: self.bytes, cursor: self.cursor, progress }
    }
}

impl<'a, P: FnMut(u64)> Iterator for Verification<'a, P> {
    type Item = EntryVerification<'a>;

    fn next(&mut self) -> Option<EntryVerification<'a>> {
        let entry = self.entries.next()?;
        let padding = check_padding(self.bytes, self.cursor, entry.offset());
        self.cursor = entry.range().end;
        let mut crc = Crc32::new();
        for piece in entry.payload().chunks(PROGRESS_STEP) {
            crc.update(piece);
            (self.progress)(u64::try_from(piece.len()).unwrap_or(u64::MAX));
        }
        let payload = entry.check_checksum(crc.finish()).and_then(|()| verify_nested(&entry));
        Some(EntryVerification { entry, padding, payload })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl<P: FnMut(u64)> ExactSizeIterator for Verification<'_, P> {}
impl<P: FnMut(u64)> FusedIterator for Verification<'_, P> {}
