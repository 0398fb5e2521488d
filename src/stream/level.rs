//! One container's state machine in a stream: its header, its prefix, its payloads (passing a nested
//! container's bytes to the level below), its trailer, and its verdict in the spec's order.
//!
//! Every field is a plain number or error, so a level (and the decoder) can be copied, saved and restored.
//! Its bytes — the prefix, the trailer and the checksums computed so far — live in the caller's buffer at
//! `base`: `[prefix][trailer: 4n + 4][computed checksums: 4n]`.

use zerocopy::little_endian::U32;
use zerocopy::FromBytes;

use super::{DecodeError, Event};
use crate::checksum::Crc32;
use crate::error::{Error, Nesting};
use crate::format::{
    Descriptor, Dtype, Header, DESCRIPTOR_LEN, FLAG_HAS_TARGET, HEADER_LEN_V1, MAX_NESTING_DEPTH,
    TRAILER_SLOT_LEN,
};
use crate::layout::len_u64;
use crate::read::header::{
    check_fields, check_length, check_sections, check_trailer, diagnosable, diagnose, read_header, read_magic,
};
use crate::Container;

/// How far a level has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Collecting the first 160 bytes.
    Header,
    /// R10–R12 failed: only the length (R8, R9) can still matter, so bytes are only counted.
    Counting,
    /// Collecting the prefix, up to the end of the metadata.
    Prefix,
    /// The payload section, entry by entry.
    Payloads,
    /// Collecting the trailer.
    Trailer,
    /// Every declared byte has arrived.
    Complete,
    /// A definite error, or the level was finished.
    Over,
}

/// The state of one container of the stream, the outermost or a nested one.
#[derive(Clone, Copy, Debug)]
pub(super) struct Level {
    /// Nesting depth (0 for the outermost).
    depth: u8,
    /// Where this level's bytes start in the buffer.
    base: usize,
    /// Bytes of this container consumed.
    count: u64,
    phase: Phase,
    /// `total_len`, `header_len`, entry count, and the end of the prefix and of the payload section, from a
    /// header whose sections R10–R12 accepted.
    total: u64,
    header_len: u32,
    entries: u32,
    prefix_end: u64,
    payloads_end: u64,
    /// The broken structural rule that waits for the verdict (which checks R8, R9 and R14 first): the first
    /// found, except that a nested container's (the group *nesting*, found as payloads pass) replaces a held
    /// metadata error, since it comes before it in the spec's order.
    held: Option<Error>,
    /// The first payload-integrity error found as the payloads passed: the entry, whether it comes after that
    /// entry's own checksum (a nested container's) or before it (R37 for its padding), and the error.
    integrity: Option<(u32, bool, Error)>,
    /// Whether the payloads are walked (the prefix's groups up to *payloads* passed), and whether events are
    /// given (the outermost level, with a valid prefix).
    walk: bool,
    loud: bool,
    /// The entry being received, and the CRC of its bytes so far.
    entry: u32,
    crc: u32,
    /// Whether the current entry has begun (its first byte, or its place for an empty one, was reached), and
    /// whether the level below receives it (a `CONTAINER` entry within the depth limit).
    started: bool,
    child_live: bool,
}

/// A nested container's verdict, as the level above uses it: its structural rules (R1–R36, R38–R49, R51–R53)
/// and, when they hold, its payload integrity (R37, R50, and deeper containers').
pub(super) struct Verdict {
    pub(super) structural: Result<(), Error>,
    pub(super) integrity: Result<(), Error>,
}

impl Level {
    /// A level that has received nothing, at `depth`, with its bytes at `base` in the buffer.
    pub(super) const fn new(depth: u8, base: usize) -> Self {
        Level {
            depth,
            base,
            count: 0,
            phase: Phase::Header,
            total: 0,
            header_len: 0,
            entries: 0,
            prefix_end: 0,
            payloads_end: 0,
            held: None,
            integrity: None,
            walk: false,
            loud: false,
            entry: 0,
            crc: 0,
            started: false,
            child_live: false,
        }
    }

    pub(super) fn phase(&self) -> Phase {
        self.phase
    }

    /// Bytes of this container consumed.
    pub(super) fn count(&self) -> u64 {
        self.count
    }

    /// Whether this level gives events: the outermost, with a valid prefix.
    pub(super) fn loud(&self) -> bool {
        self.loud
    }

    /// What changes when a step does something, so that a caller looping over steps knows when to stop.
    pub(super) fn progress(&self) -> (u64, u32, Phase, bool) {
        (self.count, self.entry, self.phase, self.started)
    }

    /// Whether a rule is known to be broken already (the verdict will be an error).
    pub(super) fn doomed(&self) -> bool {
        self.held.is_some() || self.integrity.is_some()
    }

    /// Where the bytes this level keeps end in the buffer (`base` included): a buffer shorter than this lost
    /// some of them, or cannot take those [`Level::header`] made room for. The header as it arrives; once it
    /// has been read, what [`Level::header`] checked the buffer for (the header alone while only bytes are
    /// counted; the prefix while R3 or R5 waits for the header diagnosis; else the prefix, trailer and
    /// checksums); after a verdict or a final error, the prefix if it was valid (the signed decoder reads it
    /// then), else nothing.
    pub(super) fn kept_end(&self) -> u64 {
        let kept = match self.phase {
            Phase::Header => Some(self.count),
            Phase::Counting => Some(u64::from(HEADER_LEN_V1)),
            Phase::Prefix if self.held.is_some() => Some(self.prefix_end),
            Phase::Prefix | Phase::Payloads | Phase::Trailer | Phase::Complete => self.walk_region_len(),
            Phase::Over => Some(if self.loud { self.prefix_end } else { 0 }),
        };
        kept.map_or(u64::MAX, |kept| kept.saturating_add(len_u64(self.base)))
    }

    /// Whether the level below receives the current entry: a nested container being decoded.
    pub(super) fn child_live(&self) -> bool {
        self.child_live
    }

    /// The prefix bytes in `buffer`, once the prefix is complete.
    pub(super) fn prefix<'b>(&self, buffer: &'b [u8]) -> Option<&'b [u8]> {
        matches!(self.phase, Phase::Payloads | Phase::Trailer | Phase::Complete)
            .then(|| buffer.get(self.base..self.base.checked_add(to_usize(self.prefix_end)?)?))
            .flatten()
    }

    /// The prefix bytes in `buffer` once they were validated, also after the verdict (which ends the level's
    /// phases): what the signed decoder reads to place an integrity error among the entries.
    pub(super) fn prefix_kept<'b>(&self, buffer: &'b [u8]) -> Option<&'b [u8]> {
        (self.loud && self.prefix_end > 0)
            .then(|| buffer.get(self.base..self.base.checked_add(to_usize(self.prefix_end)?)?))
            .flatten()
    }

    /// The trailer bytes in `buffer`, once the container is complete.
    pub(super) fn trailer<'b>(&self, buffer: &'b [u8]) -> Option<&'b [u8]> {
        if self.phase != Phase::Complete || self.walk_region_len().is_none() {
            return None;
        }
        let start = self.base.checked_add(to_usize(self.prefix_end)?)?;
        buffer.get(start..start.checked_add(to_usize(self.trailer_len()?)?)?)
    }

    /// Consumes a run of `input` in the current phase; returns how much, and an event for the outermost
    /// level. `below` are the levels for nested containers; `left` is how many bytes of this container can
    /// still come from `input` on (the rest of the outer entry for a nested container, `u64::MAX` for the
    /// outermost). [`DecodeError::BufferTooSmall`] is returned before the level changes: the same input,
    /// given again with a larger buffer, goes on from the same byte. A definite error (one that no later byte can
    /// change: R2–R7 on the header — R3 or R5 of a sound header once the prefix has given the header diagnosis,
    /// or R13 in their place —, R9 once too many bytes came) is returned; every other broken rule waits in
    /// the state for [`Level::verdict`].
    pub(super) fn step<'a>(
        &mut self,
        buffer: &mut [u8],
        below: &mut [Level],
        input: &'a [u8],
        left: u64,
    ) -> Result<(usize, Option<Event<'a>>), DecodeError> {
        match self.phase {
            Phase::Header => self.header(buffer, input, left),
            Phase::Counting => self.count_only(input),
            Phase::Prefix => self.prefix_bytes(buffer, input),
            Phase::Payloads => self.payloads(buffer, below, input),
            Phase::Trailer => self.trailer_bytes(buffer, input),
            Phase::Complete | Phase::Over => self.past_end(input),
        }
    }

    /// Feeds all of `input` to this (nested) level, ignoring events; a definite error ends the level. `left`
    /// is as for [`Level::step`].
    ///
    /// # Errors
    /// [`DecodeError::BufferTooSmall`], with how many bytes of `input` were consumed before it: the level
    /// goes on from there when given the rest with a larger buffer.
    pub(super) fn feed_all(
        &mut self,
        buffer: &mut [u8],
        below: &mut [Level],
        input: &[u8],
        left: u64,
    ) -> Result<(), (usize, DecodeError)> {
        let mut fed = 0usize;
        while let Some(rest) = input.get(fed..).filter(|rest| !rest.is_empty()) {
            if self.phase == Phase::Over {
                break;
            }
            match self.step(buffer, below, rest, left.saturating_sub(len_u64(fed))) {
                Ok((used, _)) => fed = fed.saturating_add(used),
                Err(DecodeError::Invalid(e)) => {
                    // Final for this level: R2–R7, R9 or a diagnosed R13, before anything held.
                    self.held = Some(e);
                    self.phase = Phase::Over;
                }
                Err(other) => return Err((fed, other)),
            }
        }
        Ok(())
    }

    fn header<'a>(
        &mut self,
        buffer: &mut [u8],
        input: &'a [u8],
        left: u64,
    ) -> Result<(usize, Option<Event<'a>>), DecodeError> {
        let header_len = u64::from(HEADER_LEN_V1);
        let have = to_usize(self.count).unwrap_or(usize::MAX);
        let want = to_usize(header_len).unwrap_or(usize::MAX).saturating_sub(have);
        let used = want.min(input.len());
        let at = self.base.saturating_add(have);
        // The bytes this container can still bring: a nested container shorter than a header needs no more.
        let room = self.count.saturating_add(left);
        let dest = buffer.get_mut(at..at.saturating_add(used)).ok_or(DecodeError::BufferTooSmall {
            needed: len_u64(self.base).saturating_add(room.min(header_len)),
        })?;
        dest.copy_from_slice(input.get(..used).unwrap_or(&[]));
        let before = self.count;
        self.count = self.count.saturating_add(len_u64(used));
        if self.count < header_len {
            return Ok((used, None));
        }
        let bytes = buffer.get(self.base..).unwrap_or(&[]);
        let header = read_magic(bytes)?;
        // R3 or R5 of an otherwise sound header waits for the prefix, whose checksum tells a newer file from a
        // damaged one (the header diagnosis, spec §12); it is final if the sections do not hold together.
        let newer = match check_fields(header) {
            Err(error) if !diagnosable(header, &error) => return Err(DecodeError::Invalid(error)),
            checked => checked.err(),
        };
        self.total = header.total_len.get();
        self.header_len = header.header_len.get();
        if let Err(e) = check_sections(header) {
            if let Some(newer) = newer {
                return Err(DecodeError::Invalid(newer));
            }
            self.held = Some(e);
            self.phase = Phase::Counting;
            return Ok((used, None));
        }
        let [.., metadata, payloads, _] = &header.sections;
        let prefix_end = metadata.offset.get().saturating_add(metadata.length.get());
        // A nested container that claims more bytes than its entry holds is judged by its length (R8) — or,
        // for a held R3 or R5, by the header diagnosis if its prefix fits — whatever its prefix says: so it
        // keeps no more than its header, or its prefix, and never asks for more than its entry's length.
        let (keep, phase) = match (self.total > room, newer) {
            (false, _) => (region_len(header), Phase::Prefix),
            (true, Some(_)) if prefix_end <= room => (Some(prefix_end), Phase::Prefix),
            (true, _) => (Some(header_len), Phase::Counting),
        };
        let needed = keep.map_or(u64::MAX, |n| n.saturating_add(len_u64(self.base)));
        if needed > len_u64(buffer.len()) {
            // Nothing consumed: the same bytes, given again with a larger buffer, go on from here.
            self.count = before;
            return Err(DecodeError::BufferTooSmall { needed });
        }
        self.held = newer;
        self.entries = header.entry_count.get();
        self.prefix_end = prefix_end;
        self.payloads_end = payloads.offset.get().saturating_add(payloads.length.get());
        self.phase = phase;
        Ok((used, None))
    }

    /// An upper bound on the buffer length the rest of the stream needs, once the prefix has been walked: this
    /// level's bytes, and for the largest `CONTAINER` entry the most that it and the containers nested in it
    /// can keep at once ([`nested_bound`]). `None` before the prefix, or when it does not hold together.
    pub(super) fn stream_bound(&self, buffer: &[u8]) -> Option<u64> {
        if !matches!(self.phase, Phase::Payloads | Phase::Trailer | Phase::Complete) {
            return None;
        }
        let own = len_u64(self.base).checked_add(self.walk_region_len()?)?;
        let mut nested = 0u64;
        if self.walk {
            for entry in 0..self.entries {
                let d = self.descriptor(buffer, entry)?;
                if Dtype::from_code(d.dtype.get()) == Dtype::CONTAINER {
                    nested = nested.max(nested_bound(d.length.get())?);
                }
            }
        }
        own.checked_add(nested)
    }

    /// The bytes this level keeps: prefix, trailer, computed checksums.
    fn walk_region_len(&self) -> Option<u64> {
        let n = u64::from(self.entries);
        self.prefix_end.checked_add(self.trailer_len()?)?.checked_add(n.checked_mul(TRAILER_SLOT_LEN)?)
    }

    fn trailer_len(&self) -> Option<u64> {
        u64::from(self.entries).checked_add(1)?.checked_mul(TRAILER_SLOT_LEN)
    }

    /// Where the level below keeps its bytes.
    fn child_base(&self) -> usize {
        self.walk_region_len().and_then(to_usize).map_or(usize::MAX, |n| self.base.saturating_add(n))
    }

    fn count_only<'a>(&mut self, input: &'a [u8]) -> Result<(usize, Option<Event<'a>>), DecodeError> {
        // Up to the declared end at most, so that a byte past it is seen by `past_end`.
        let room = self.total.saturating_sub(self.count);
        let used = to_usize(room).unwrap_or(usize::MAX).min(input.len());
        self.count = self.count.saturating_add(len_u64(used));
        if used == 0 {
            return self.past_end(input);
        }
        Ok((used, None))
    }

    fn prefix_bytes<'a>(
        &mut self,
        buffer: &mut [u8],
        input: &'a [u8],
    ) -> Result<(usize, Option<Event<'a>>), DecodeError> {
        let used =
            to_usize(self.prefix_end.saturating_sub(self.count)).unwrap_or(usize::MAX).min(input.len());
        let at = self.base.saturating_add(to_usize(self.count).unwrap_or(usize::MAX));
        let dest = buffer
            .get_mut(at..at.saturating_add(used))
            .ok_or(DecodeError::BufferTooSmall { needed: len_u64(at).saturating_add(len_u64(used)) })?;
        dest.copy_from_slice(input.get(..used).unwrap_or(&[]));
        self.count = self.count.saturating_add(len_u64(used));
        if self.count < self.prefix_end {
            return Ok((used, None));
        }
        if let Some(newer) = self.held {
            // The header diagnosis: the prefix is the checksummed region; R3, R5 or R13 is final.
            let prefix =
                buffer.get(self.base..).and_then(|b| b.get(..to_usize(self.prefix_end)?)).unwrap_or(&[]);
            self.phase = Phase::Over;
            return Err(DecodeError::Invalid(diagnose(newer, prefix)));
        }
        self.check_prefix(buffer);
        self.phase = Phase::Payloads;
        Ok((used, self.loud.then_some(Event::Prefix)))
    }

    /// The structural rules of the prefix, each group's first error kept for the verdict.
    fn check_prefix(&mut self, buffer: &[u8]) {
        let bytes = buffer.get(self.base..).unwrap_or(&[]);
        let Some(prefix) = to_usize(self.prefix_end).and_then(|end| bytes.get(..end)) else { return };
        let Ok(header) = read_header(prefix) else { return };
        match Container::check_prefix(prefix, header, self.depth) {
            Err(e) => self.held = Some(e),
            Ok((container, metadata)) => {
                self.held = metadata.err();
                self.walk = true;
                if self.depth >= MAX_NESTING_DEPTH {
                    // R38 for the first nested container, which is not decoded; the group *nesting* comes
                    // before *metadata*.
                    if let Some(entry) = container.entries().find(|e| e.dtype() == Dtype::CONTAINER) {
                        let entry = u32::try_from(entry.position()).unwrap_or(u32::MAX);
                        self.held = Some(Error::NestingTooDeep { entry });
                    }
                }
                self.loud = self.depth == 0 && self.held.is_none();
            }
        }
    }

    /// Descriptor `entry` of this level's prefix in `buffer`, in place: it is looked at for every chunk, and a
    /// copy of its 104 bytes was a tenth of the decoder's time per 4 KiB chunk (and a `memcpy` on a Cortex-M).
    fn descriptor<'b>(&self, buffer: &'b [u8], entry: u32) -> Option<&'b Descriptor> {
        // The table starts right after the header (R11).
        let at = u64::from(self.header_len)
            .checked_add(u64::from(entry).checked_mul(u64::from(DESCRIPTOR_LEN))?)?;
        let start = self.base.checked_add(to_usize(at)?)?;
        Descriptor::ref_from_prefix(buffer.get(start..)?).ok().map(|(d, _)| d)
    }

    fn start_child(&mut self, below: &mut [Level]) {
        if self.depth >= MAX_NESTING_DEPTH {
            return;
        }
        if let Some(child) = below.first_mut() {
            *child = Level::new(self.depth.saturating_add(1), self.child_base());
            self.child_live = true;
        }
    }

    /// The current entry's last byte has come: its checksum is stored, a nested container judged.
    fn end_entry(&mut self, buffer: &mut [u8], below: &mut [Level]) -> Result<(), DecodeError> {
        let entry = self.entry;
        let slot = self
            .walk_region_len()
            .zip(self.trailer_len())
            .and_then(|(_, trailer)| {
                let at =
                    self.prefix_end.checked_add(trailer)?.checked_add(u64::from(entry).checked_mul(4)?)?;
                self.base.checked_add(to_usize(at)?)
            })
            .and_then(|at| buffer.get_mut(at..at.checked_add(4)?));
        if let Some(slot) = slot {
            slot.copy_from_slice(&self.crc.to_le_bytes());
        }
        if self.child_live {
            self.child_live = false;
            if let Some((child, deeper)) = below.split_first_mut() {
                let verdict = child.verdict(buffer, deeper);
                let depth = self.depth.saturating_add(1);
                match verdict.structural {
                    Err(e) => {
                        // The first nested container's error in table order; it comes before a metadata
                        // error (the only other one a walked level can hold).
                        let held_nesting = self.held.is_some_and(|h| matches!(h.rule().number(), 38 | 39));
                        if !held_nesting {
                            self.held = Some(match e {
                                Error::NestingTooDeep { .. } => Error::NestingTooDeep { entry },
                                // As the reader: the depth of the container that breaks `inner`.
                                Error::NestedInvalid { inner, depth, .. } => {
                                    Error::NestedInvalid { entry, depth, inner }
                                }
                                other => Error::NestedInvalid { entry, depth, inner: other.rule() },
                            });
                        }
                    }
                    Ok(()) => {
                        if let (Err(e), None) = (verdict.integrity, self.integrity) {
                            // As the reader: placed a level deeper, inside this container's entry.
                            self.integrity = Some((entry, true, e.held_by(entry)));
                        }
                    }
                }
            }
        }
        self.entry = self.entry.saturating_add(1);
        self.crc = 0;
        self.started = false;
        Ok(())
    }

    fn payloads<'a>(
        &mut self,
        buffer: &mut [u8],
        below: &mut [Level],
        input: &'a [u8],
    ) -> Result<(usize, Option<Event<'a>>), DecodeError> {
        if !self.walk || self.entry >= self.entries {
            // Nothing to walk (the prefix failed), or every entry is in: on to the trailer.
            let used =
                to_usize(self.payloads_end.saturating_sub(self.count)).unwrap_or(usize::MAX).min(input.len());
            self.count = self.count.saturating_add(len_u64(used));
            if self.count >= self.payloads_end {
                self.phase = Phase::Trailer;
            }
            return Ok((used, None));
        }
        let Some(d) = self.descriptor(buffer, self.entry) else {
            self.walk = false;
            return Ok((0, None));
        };
        let start = d.offset.get();
        let end = start.saturating_add(d.length.get());
        let container = Dtype::from_code(d.dtype.get()) == Dtype::CONTAINER;
        let target = (d.flags & FLAG_HAS_TARGET != 0).then(|| d.target.get());
        if self.count < start {
            // Padding before the entry: it must be zero (R37).
            let used = to_usize(start.saturating_sub(self.count)).unwrap_or(usize::MAX).min(input.len());
            let run = input.get(..used).unwrap_or(&[]);
            if let (Some(at), None) = (run.iter().position(|&b| b != 0), self.integrity) {
                let offset = self.count.saturating_add(len_u64(at));
                self.integrity =
                    Some((self.entry, false, Error::PaddingNonZero { offset, nesting: Nesting::OUTERMOST }));
            }
            self.count = self.count.saturating_add(len_u64(used));
            return Ok((used, None));
        }
        if !self.started {
            self.started = true;
            if container {
                self.start_child(below);
            }
        }
        if self.count >= end {
            // Its last byte has come (or it has none): one step of its own, so that its event is one too.
            let entry = self.entry;
            self.end_entry(buffer, below)?;
            return Ok((0, self.loud.then_some(Event::EntryEnd { entry })));
        }
        if input.is_empty() {
            // The call after each payload event: nothing to checksum or pass on.
            return Ok((0, None));
        }
        let left = end.saturating_sub(self.count);
        let used = to_usize(left).unwrap_or(usize::MAX).min(input.len());
        let mut bytes = input.get(..used).unwrap_or(&[]);
        if self.child_live {
            if let Some((child, deeper)) = below.split_first_mut() {
                if let Err((fed, e)) = child.feed_all(buffer, deeper, bytes, left) {
                    if fed == 0 {
                        return Err(e);
                    }
                    // The bytes the nested container took are passed on; the error comes with the next step,
                    // which consumes nothing.
                    bytes = bytes.get(..fed).unwrap_or(&[]);
                }
            }
        }
        let used = bytes.len();
        let mut crc = Crc32::resume(self.crc);
        crc.update(bytes);
        self.crc = crc.finish();
        let event = (self.loud && used > 0).then(|| Event::Payload {
            entry: self.entry,
            offset: self.count.saturating_sub(start),
            target,
            bytes,
        });
        self.count = self.count.saturating_add(len_u64(used));
        Ok((used, event))
    }

    fn trailer_bytes<'a>(
        &mut self,
        buffer: &mut [u8],
        input: &'a [u8],
    ) -> Result<(usize, Option<Event<'a>>), DecodeError> {
        let used = to_usize(self.total.saturating_sub(self.count)).unwrap_or(usize::MAX).min(input.len());
        let offset = self.count.saturating_sub(self.payloads_end);
        let at = to_usize(self.prefix_end.saturating_add(offset))
            .map_or(usize::MAX, |o| self.base.saturating_add(o));
        if let Some(dest) = buffer.get_mut(at..at.saturating_add(used)) {
            dest.copy_from_slice(input.get(..used).unwrap_or(&[]));
        }
        self.count = self.count.saturating_add(len_u64(used));
        if self.count < self.total {
            return Ok((used, None));
        }
        self.phase = Phase::Complete;
        Ok((used, (self.depth == 0).then_some(Event::End)))
    }

    /// Bytes past `total_len`: R9, unless the header is longer than the container claims (then R8 at the
    /// end, which comes first).
    fn past_end<'a>(&mut self, input: &'a [u8]) -> Result<(usize, Option<Event<'a>>), DecodeError> {
        if input.is_empty() {
            return Ok((0, None));
        }
        let used = input.len();
        self.count = self.count.saturating_add(len_u64(used));
        if self.count >= u64::from(self.header_len) {
            self.phase = Phase::Over;
            return Err(DecodeError::Invalid(Error::TrailingBytes { declared: self.total }));
        }
        Ok((used, None))
    }

    /// The verdict on everything received, in the spec's order: what `Container::parse` and `verify` say of
    /// the same bytes. `below` finishes a nested container still open.
    pub(super) fn verdict(&mut self, buffer: &mut [u8], below: &mut [Level]) -> Verdict {
        if self.phase == Phase::Payloads && self.child_live {
            // Bytes ended inside a nested container: it is judged as it stands, like the outer entry.
            self.child_live = false;
        }
        let structural = self.structural(buffer);
        let integrity = match structural {
            Ok(()) => self.integrity(buffer),
            Err(_) => Ok(()),
        };
        let _ = below;
        self.phase = Phase::Over;
        Verdict { structural, integrity }
    }

    fn structural(&self, buffer: &[u8]) -> Result<(), Error> {
        if self.count < u64::from(HEADER_LEN_V1) {
            return Err(Error::TooShort { len: self.count });
        }
        // The rule number of what is held decides where it comes in the spec's order.
        let held = self.held.map(|e| (e.rule().number(), e));
        match (self.phase, held) {
            // A final error met earlier (a nested level's R2–R7 or R9, or the R13 of the header diagnosis).
            (Phase::Over, Some((2..=7 | 9 | 13, e))) => return Err(e),
            // R3 or R5 waiting for a prefix that never came: the diagnosis cannot overturn it.
            (_, Some((3 | 5, e))) => return Err(e),
            _ => {}
        }
        let header = buffer.get(self.base..).and_then(|b| Header::ref_from_prefix(b).ok()).map(|(h, _)| h);
        let Some(header) = header else { return Err(Error::TooShort { len: self.count }) };
        check_length(header, self.count)?;
        if let Some((10..=13, e)) = held {
            return Err(e);
        }
        let trailer = self.trailer(buffer).unwrap_or(&[]);
        check_trailer(trailer, to_usize(u64::from(self.entries)).unwrap_or(usize::MAX))?;
        self.held.map_or(Ok(()), Err)
    }

    fn integrity(&self, buffer: &[u8]) -> Result<(), Error> {
        let trailer = self.trailer(buffer).unwrap_or(&[]);
        let computed_at =
            self.base.saturating_add(to_usize(self.prefix_end).unwrap_or(0)).saturating_add(trailer.len());
        let computed = buffer.get(computed_at..).unwrap_or(&[]);
        let stored = <[U32]>::ref_from_prefix(trailer).map(|(s, _)| s).unwrap_or(&[]);
        let computed = <[U32]>::ref_from_prefix(computed).map(|(s, _)| s).unwrap_or(&[]);
        for entry in 0..self.entries {
            if let Some((at, false, e)) = self.integrity {
                if at == entry {
                    return Err(e);
                }
            }
            let i = to_usize(u64::from(entry)).unwrap_or(usize::MAX);
            let (Some(s), Some(c)) = (stored.get(i), computed.get(i)) else { break };
            if s.get() != c.get() {
                return Err(Error::EntryChecksum {
                    entry,
                    stored: s.get(),
                    computed: c.get(),
                    nesting: Nesting::OUTERMOST,
                });
            }
            if let Some((at, true, e)) = self.integrity {
                if at == entry {
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

/// The bytes a level keeps for a container with this `header` (sections valid): its prefix, its trailer and
/// the checksums it computes.
pub(super) fn region_len(header: &Header) -> Option<u64> {
    let [.., metadata, _, _] = &header.sections;
    let n = u64::from(header.entry_count.get());
    let prefix = metadata.offset.get().checked_add(metadata.length.get())?;
    prefix.checked_add(n.checked_mul(2 * TRAILER_SLOT_LEN)?)?.checked_add(TRAILER_SLOT_LEN)
}

/// The most buffer a nested container received as an entry of `len` bytes keeps at once, with the containers
/// nested in it: its prefix and trailer are bytes of the entry, and those of a container nested in it are bytes
/// of its payloads, so together they are at most `len`; each adds 4 bytes per entry of checksums computed, and
/// every entry takes a descriptor and a trailer slot in its container, so there are at most
/// `len / (DESCRIPTOR_LEN + TRAILER_SLOT_LEN)` of them. A nested container that claims more than its entry
/// keeps no more than its entry's length (see [`Level::step`]).
pub(super) fn nested_bound(len: u64) -> Option<u64> {
    let per_entry = u64::from(DESCRIPTOR_LEN).checked_add(TRAILER_SLOT_LEN)?;
    len.checked_add(len.checked_div(per_entry)?.checked_mul(TRAILER_SLOT_LEN)?)
}

fn to_usize(v: u64) -> Option<usize> {
    usize::try_from(v).ok()
}
