//! Push decoding: validating a container as its bytes arrive, in chunks of any size, in bounded memory (spec
//! §11.3).
//!
//! A [`Decoder`] is fed the stream chunk by chunk ([`Decoder::decode`]) and answers with [`Event`]s: the
//! prefix (header, table, index, names, metadata) is complete and valid, so every entry is known before its
//! first byte; payload bytes, as slices of the caller's chunk; an entry's last byte; the last declared byte.
//! [`Decoder::finish`] then gives the verdict, which is always the one [`Container::parse`] and
//! [`Container::verify`] give the same bytes: the same [`Error`], for the first rule broken in the spec's
//! order.
//!
//! # When errors come
//!
//! Some rules can only be judged late: the length (R8, R9) at the end of the stream, the trailer's checksums
//! (R14, R50) after the last payload, the structure of a nested container (R39) after its bytes. Since a rule
//! reported must be the first one broken in the spec's order, a broken rule is only returned as soon as it is
//! found when nothing later in the stream could change that: the header's own rules (R2–R7), and bytes past
//! the declared end (R9). R3 and R5 ("needs a newer reader") of a header that is otherwise sound wait for the
//! prefix, whose checksum decides between them and R13 (a damaged header: the header diagnosis of spec §12). Any other is held until [`Decoder::finish`]; [`Decoder::is_doomed`] says at once
//! that one is held, so that a caller can stop the transfer, and events stop when the prefix is invalid.
//!
//! # Signed streams
//!
//! [`SignedDecoder`] wraps a decoder with a [`crate::auth::Policy`] (spec §14): a stream the policy refuses from
//! its prefix (no signature where one is required, an untrusted key, another algorithm or subject, a counter
//! below the floor) releases no event after the prefix, and the signature and the entries' digests are judged
//! when the signature entry arrives. [`Placer::commit`] copies bytes staged in a [`ReadRegion`] to their final
//! region only with the [`Authentic`] proof its `finish` returns.
//!
//! # Memory
//!
//! The decoder holds no bytes itself; its state ([`DecoderState`], [`DecoderState::SIZE`] bytes) is plain
//! numbers that can be copied and saved. The caller's buffer holds, for the container and for each nested
//! container being received, its prefix, its trailer and the checksums computed so far: `prefix + 8n + 4`
//! bytes for `n` entries. Which number sizes it:
//!
//! - [`Decoder::buffer_needed`], from the header (the first 160 bytes): what the outermost container needs.
//!   Enough for the whole stream when it has no `CONTAINER` entry.
//! - [`Decoder::stream_buffer_needed`], from [`Event::Prefix`] on: enough for the whole stream, nested
//!   containers included (an upper bound; exact without them). Grow the buffer to it before the first payload
//!   ([`Decoder::grow`]) and no [`DecodeError::BufferTooSmall`] can come.
//! - [`DecodeError::BufferTooSmall`]'s `needed`: what the decoder needs to go on, when a nested container's
//!   header has told it. It consumes nothing it cannot keep: [`Decoder::grow`] to at least `needed` bytes and
//!   feed the stream from [`Decoder::position`] on; nothing is lost.
//!
//! A device whose RAM cannot hold the prefix (a model with very many entries or much metadata) does not
//! decode the stream; it writes the stream as raw bytes to a staging slot of readable flash and validates it
//! there afterwards with [`Container::parse`] and [`Container::verify`] on the memory-mapped slot (which
//! need no buffer at all), as MCUboot validates an image in its secondary slot before it swaps it in.
//!
//! # Resuming
//!
//! An interrupted transfer resumes at the byte where it stopped: keep [`Decoder::state`] and the buffer's
//! contents, and later [`Decoder::resume`] with them and feed the stream from [`Decoder::position`] on. The
//! buffer may then be longer than it was, as after [`DecodeError::BufferTooSmall`], or shorter, down to
//! [`DecoderState::kept_len`] bytes (the ones the state uses); a shorter one is refused with
//! [`DecodeError::BufferTooSmall`].

mod authenticate;
mod level;
mod place;
mod prefix;

use core::fmt;

pub use authenticate::{Authentic, SignedDecoder, Signer};
use level::{Level, Phase};
pub use place::{Layout, PlaceError, Placer, ReadRegion, Region};
pub use prefix::{Prefix, PrefixEntry};

/// Whether `rule` is one of the payload-integrity group (spec §12), which comes after the signature rules.
fn is_integrity(rule: crate::Rule) -> bool {
    matches!(rule, crate::Rule::PaddingNonZero | crate::Rule::EntryChecksum)
}

use crate::error::Error;
use crate::format::MAX_NESTING_DEPTH;
use crate::layout;
use crate::read::header::{check_fields, check_sections, diagnosable, read_magic};
#[allow(unused_imports)] // for the docs
use crate::Container;

/// Nested containers decoded at once below the outermost: one for each depth up to the limit.
#[allow(clippy::as_conversions)] // u8 to usize, lossless; `From` is not callable in a const
const NESTED: usize = MAX_NESTING_DEPTH as usize;

/// What the stream has shown, returned by [`Decoder::decode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// The prefix — header, table, index, names and metadata — has arrived and every structural rule that it
    /// alone decides holds: [`Decoder::prefix`] shows the entries, their dtypes, shapes and targets, before
    /// any payload byte. Not given when the prefix breaks a rule (then no event follows but [`Event::End`]).
    Prefix,
    /// Bytes of an entry's payload, in order, borrowed from the chunk given to [`Decoder::decode`].
    Payload {
        /// The entry's position in the table.
        entry: u32,
        /// Where `bytes` start within the entry's payload.
        offset: u64,
        /// The entry's load address, if it has one.
        target: Option<u64>,
        /// The bytes.
        bytes: &'a [u8],
    },
    /// An entry's last byte has arrived (also for an empty entry). Its checksum is compared with the
    /// trailer's, which comes last, by [`Decoder::finish`].
    EntryEnd {
        /// The entry's position in the table.
        entry: u32,
    },
    /// The last byte the header declares (`total_len`) has arrived; [`Decoder::finish`] gives the verdict.
    End,
}

/// Why a [`Decoder`] stopped.
///
/// Exhaustive on purpose: a rule, the buffer and use after the end are the three ways the decoding protocol
/// stops, and a fourth would change the protocol, so every binding that maps them to its own codes (the C
/// API) matches them exhaustively and fails to compile until it maps a new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The container breaks a rule: the error `Container::parse` and `verify` give.
    Invalid(Error),
    /// The buffer cannot hold what the stream needs kept (the prefix, trailer and checksums of the container,
    /// and of a nested container being received); `needed` bytes would, for the stream so far. Not final:
    /// the bytes before [`Decoder::position`] were consumed and the others were not, and once the decoder has
    /// at least `needed` bytes ([`Decoder::grow`], or [`Decoder::resume`] over a larger buffer holding the
    /// same bytes) it goes on from there.
    BufferTooSmall {
        /// The buffer length that would do for the stream so far: a later nested container may need more
        /// ([`Decoder::stream_buffer_needed`] covers them all).
        needed: u64,
    },
    /// [`Decoder::decode`] was called after [`Decoder::finish`].
    Finished,
}

impl From<Error> for DecodeError {
    fn from(e: Error) -> Self {
        DecodeError::Invalid(e)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Invalid(e) => fmt::Display::fmt(e, f),
            DecodeError::BufferTooSmall { needed } => {
                write!(f, "the decoder's buffer is too small: the stream needs {needed} bytes kept")
            }
            DecodeError::Finished => f.write_str("the decoder was fed after it finished"),
        }
    }
}

// `Display` repeats the wrapped rule's message, since most callers print one line; `source` gives the rule's
// `Error` itself, for callers that walk the chain or downcast.
impl core::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            DecodeError::Invalid(e) => Some(e),
            DecodeError::BufferTooSmall { .. } | DecodeError::Finished => None,
        }
    }
}

/// Everything a [`Decoder`] knows but the buffer's bytes: plain numbers, to copy or save and
/// [`Decoder::resume`] from.
#[derive(Clone, Copy, Debug)]
pub struct DecoderState {
    /// The outermost container, and the nested ones being received, by depth.
    top: Level,
    nested: [Level; NESTED],
    /// The error the decoder stopped with, returned again by every later call.
    stopped: Option<DecodeError>,
    finished: bool,
}

impl DecoderState {
    /// The size of the state in bytes: 1112 on 64-bit targets (a test holds the README's figure to it).
    pub const SIZE: usize = core::mem::size_of::<DecoderState>();

    /// The buffer length this state keeps bytes in: a decoder [`Decoder::resume`]d from it needs a buffer at
    /// least this long that holds the saved decoder's first `kept_len()` bytes. That is the header bytes come
    /// so far, then, once the header has come, the room for the prefix, trailer and checksums
    /// ([`Decoder::buffer_needed`]), and the same for each nested container being received. Never more than
    /// the buffer the state was taken from.
    #[must_use]
    pub fn kept_len(&self) -> u64 {
        let mut end = self.top.kept_end();
        let mut parent = &self.top;
        for level in &self.nested {
            if !parent.child_live() {
                break;
            }
            end = end.max(level.kept_end());
            parent = level;
        }
        end
    }

    const fn new() -> Self {
        DecoderState {
            top: Level::new(0, 0),
            nested: [Level::new(1, 0); NESTED],
            stopped: None,
            finished: false,
        }
    }
}

/// A push decoder: feed it a container's bytes as they arrive, get [`Event`]s, then [`Decoder::finish`].
///
/// ```
/// # use tpack::write::{Builder, EntryDecl};
/// # use tpack::{Dtype, MetaValue};
/// use tpack::stream::{Decoder, Event};
/// # let mut b = Builder::new();
/// # b.push(EntryDecl::new("w", Dtype::U8, &[3]).with_data(&[1, 2, 3]))?;
/// # let bytes = b.finish()?;
/// let mut buffer = [0u8; 1024];
/// let mut decoder = Decoder::new(&mut buffer);
/// let mut received = Vec::new();
/// for chunk in bytes.chunks(7) {
///     let mut rest = chunk;
///     while let (used, Some(event)) = decoder.decode(rest)? {
///         rest = &rest[used..];
///         if let Event::Payload { bytes, .. } = event {
///             received.extend_from_slice(bytes);
///         }
///     }
/// }
/// decoder.finish()?;
/// assert_eq!(received, [1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Decoder<'b> {
    buffer: &'b mut [u8],
    state: DecoderState,
}

impl fmt::Debug for Decoder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("buffer_len", &self.buffer.len())
            .field("position", &self.position())
            .field("doomed", &self.is_doomed())
            .finish_non_exhaustive()
    }
}

impl<'b> Decoder<'b> {
    /// A decoder keeping what it must in `buffer` (see the module docs for how much that is).
    pub fn new(buffer: &'b mut [u8]) -> Self {
        Decoder { buffer, state: DecoderState::new() }
    }

    /// A decoder that goes on from `state`, with `buffer` holding what it held when the state was taken (its
    /// first bytes: a larger buffer with the same bytes at its start does too). Feed it the stream from
    /// [`Decoder::position`] on. A buffer shorter than [`DecoderState::kept_len`] lost bytes the state needs:
    /// [`Decoder::decode`] and [`Decoder::finish`] then refuse with [`DecodeError::BufferTooSmall`] (never a
    /// wrong verdict) until the decoder has a buffer that long holding them ([`Decoder::replace_buffer`]).
    pub fn resume(buffer: &'b mut [u8], state: DecoderState) -> Self {
        let mut decoder = Decoder { buffer, state };
        decoder.refuse_if_short();
        decoder
    }

    /// Moves the decoder to `buffer`, at least as long as its own: copies its bytes to the start of `buffer`
    /// and returns the old buffer, which the decoder no longer uses. After
    /// [`DecodeError::BufferTooSmall`], a buffer of at least its `needed` bytes lets the decoder go on.
    ///
    /// ```
    /// # use tpack::stream::Decoder;
    /// let (mut small, mut large) = ([0u8; 160], [0u8; 4096]);
    /// let mut decoder = Decoder::new(&mut small);
    /// // ... `decode` returned `DecodeError::BufferTooSmall { needed }`, with `needed` <= 4096 ...
    /// decoder.grow(&mut large)?;
    /// # Ok::<(), tpack::stream::DecodeError>(())
    /// ```
    ///
    /// # Errors
    /// [`DecodeError::BufferTooSmall`] with the current buffer's length, when `buffer` is shorter (the
    /// decoder is unchanged).
    pub fn grow(&mut self, buffer: &'b mut [u8]) -> Result<&'b mut [u8], DecodeError> {
        let Some(dest) = buffer.get_mut(..self.buffer.len()) else {
            return Err(DecodeError::BufferTooSmall { needed: layout::len_u64(self.buffer.len()) });
        };
        dest.copy_from_slice(self.buffer);
        Ok(self.replace_buffer(buffer))
    }

    /// Gives the decoder `buffer` in place of its own, which is returned, without copying anything: `buffer`
    /// must hold the old buffer's bytes at its start (as [`Decoder::resume`] asks), or the verdict is wrong
    /// (never undefined); one shorter than [`DecoderState::kept_len`] is refused as [`Decoder::resume`]
    /// refuses it. For a binding whose new buffer may be the old one, longer; [`Decoder::grow`] copies.
    pub fn replace_buffer(&mut self, buffer: &'b mut [u8]) -> &'b mut [u8] {
        let old = core::mem::replace(&mut self.buffer, buffer);
        self.refuse_if_short();
        old
    }

    /// Stops the decoder with [`DecodeError::BufferTooSmall`] when its buffer is shorter than the bytes its
    /// state keeps: such a buffer lost some of them, and the decoder would give a wrong verdict of a valid
    /// stream. Like any `BufferTooSmall`, it is returned until the buffer has the `needed` bytes, then
    /// forgotten. A final error stands (the buffer is not read again), and so does a finished decoder.
    /// Checked where a buffer is given, not in [`Decoder::decode`]: a device that never resumes pays nothing
    /// for it, in time or flash.
    fn refuse_if_short(&mut self) {
        let needed = self.state.kept_len();
        if layout::len_u64(self.buffer.len()) >= needed || self.state.finished {
            return;
        }
        self.state.stopped = match self.state.stopped {
            None => Some(DecodeError::BufferTooSmall { needed }),
            Some(DecodeError::BufferTooSmall { needed: asked }) => {
                Some(DecodeError::BufferTooSmall { needed: asked.max(needed) })
            }
            stopped @ Some(DecodeError::Invalid(_) | DecodeError::Finished) => stopped,
        };
    }

    /// The buffer, and the state to [`Decoder::resume`] from: the decoder taken apart.
    #[must_use]
    pub fn into_parts(self) -> (&'b mut [u8], DecoderState) {
        (self.buffer, self.state)
    }

    /// The decoder's state, to [`Decoder::resume`] from later (with the buffer's contents).
    #[must_use]
    pub fn state(&self) -> DecoderState {
        self.state
    }

    /// How many bytes of the stream the decoder has consumed.
    #[must_use]
    pub fn position(&self) -> u64 {
        self.state.top.count()
    }

    /// Whether a broken rule has been found already, to be reported by [`Decoder::finish`] (or a later
    /// decode): the stream can be abandoned.
    #[must_use]
    pub fn is_doomed(&self) -> bool {
        let stopped = self.state.stopped.is_some_and(|e| !matches!(e, DecodeError::BufferTooSmall { .. }));
        stopped || self.state.top.doomed()
    }

    /// The error the decoder stopped with, if it still stands: a [`DecodeError::BufferTooSmall`] whose
    /// `needed` bytes the buffer now has is forgotten, so that the decoder goes on.
    fn stopped(&mut self) -> Option<DecodeError> {
        let stopped = self.state.stopped?;
        if let DecodeError::BufferTooSmall { needed } = stopped {
            if layout::len_u64(self.buffer.len()) >= needed {
                self.state.stopped = None;
                return None;
            }
        }
        Some(stopped)
    }

    /// The validated prefix, after [`Event::Prefix`]: every entry's name, dtype, shape, alignment, target and
    /// place, and the metadata. `None` before it, or when the prefix is invalid.
    #[must_use]
    pub fn prefix(&self) -> Option<Prefix<'_>> {
        let level = &self.state.top;
        if !level.loud() {
            return None;
        }
        Prefix::new(level.prefix(self.buffer)?)
    }

    /// The validated prefix, also after [`Decoder::finish`] (which [`Decoder::prefix`] is not).
    fn prefix_kept(&self) -> Option<Prefix<'_>> {
        Prefix::new(self.state.top.prefix_kept(self.buffer)?)
    }

    /// The trailer's bytes, once [`Event::End`] has come.
    #[must_use]
    pub fn trailer(&self) -> Option<&[u8]> {
        self.state.top.trailer(self.buffer)
    }

    /// The buffer length a container needs whose header (its first 160 bytes) is `header`: its prefix,
    /// trailer and checksums — the whole stream's need when it has no `CONTAINER` entry. Nested containers
    /// need their own on top while they are received: [`Decoder::stream_buffer_needed`] tells how much once
    /// the prefix has come.
    ///
    /// A header that breaks R3 (`version_major`) or R5 (`incompat_flags`) but is otherwise sound (R4, R6, R7
    /// and R10–R12 hold) gets a length, not an error: its rule is not known from the header. The header
    /// diagnosis of spec §12 compares `header_crc` with the prefix to tell a newer file (R3 or R5) from a
    /// damaged header (R13), so a decoder keeps the prefix, and asks for this length, and reports R3, R5 or
    /// R13 when the prefix is complete (R3 or R5 at [`Decoder::finish`] if the stream ends before it);
    /// [`Decoder::is_doomed`] is true from the header on.
    ///
    /// # Errors
    /// The rule `header` breaks when it is not a header whose sections hold together, but for the R3 or R5
    /// above: the error a decoder fed it reports at once (R2–R7), or at [`Decoder::finish`] (R1 for fewer
    /// than 160 bytes, R10–R12).
    pub fn buffer_needed(header: &[u8]) -> Result<u64, Error> {
        let header = read_magic(header)?;
        if let Err(error) = check_fields(header) {
            // A header whose R3 or R5 the diagnosis of spec §12 looks into needs its prefix held too.
            if !diagnosable(header, &error) {
                return Err(error);
            }
        }
        check_sections(header)?;
        // `region_len` fails only past `u64::MAX`, which R10 (sections inside `total_len`) has excluded.
        Ok(level::region_len(header).unwrap_or(u64::MAX))
    }

    /// A buffer length that suffices for the rest of the stream, nested containers included, from
    /// [`Event::Prefix`] on: the outermost container's need ([`Decoder::buffer_needed`]) plus, for the largest
    /// `CONTAINER` entry of `len` bytes, `len + 4 × ⌊len / 108⌋` (what it and the containers nested in it can
    /// keep at once: their prefixes and trailers lie in its bytes, plus 4 bytes of computed checksum per entry,
    /// and an entry takes at least 108 bytes of descriptor and trailer slot). Exact for a stream without
    /// `CONTAINER` entries. With a buffer this long, [`DecodeError::BufferTooSmall`] does not come. `None`
    /// before the prefix, or when it broke a rule (then nothing nested is decoded, and the buffer holds enough).
    #[must_use]
    pub fn stream_buffer_needed(&self) -> Option<u64> {
        self.state.top.stream_bound(self.buffer)
    }

    /// Consumes a prefix of `input` and returns how many bytes, with the event they make, if any. Call it
    /// again with the rest of the chunk while it returns an event; `(n, None)` means the whole chunk was
    /// consumed (`n == input.len()`).
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] for a broken rule that nothing later could change (R2–R7, R9, and R13 for a
    /// header the diagnosis of spec §12 finds damaged): the decoder is stopped and returns it again.
    /// [`DecodeError::BufferTooSmall`] when the buffer cannot hold what the stream needs kept: `input` was
    /// consumed up to [`Decoder::position`] (its first `position() - p` bytes, where `p` is the position before
    /// the call) and no further; it is returned again until the buffer has `needed` bytes
    /// ([`Decoder::grow`]), and then the decoder goes on from that position. Also, consuming nothing, when the
    /// decoder was resumed over a buffer shorter than the bytes its state keeps ([`DecoderState::kept_len`],
    /// the `needed`): such a buffer lost some of them, and the decoder refuses it rather than give a wrong
    /// verdict.
    pub fn decode<'a>(&mut self, input: &'a [u8]) -> Result<(usize, Option<Event<'a>>), DecodeError> {
        if let Some(e) = self.stopped() {
            return Err(e);
        }
        if self.state.finished {
            return Err(DecodeError::Finished);
        }
        let mut used = 0usize;
        loop {
            let rest = input.get(used..).unwrap_or(&[]);
            let state = &mut self.state;
            let before = state.top.progress();
            match state.top.step(self.buffer, &mut state.nested, rest, u64::MAX) {
                Ok((n, event)) => {
                    used = used.saturating_add(n);
                    if event.is_some() {
                        return Ok((used, event));
                    }
                    if state.top.progress() == before && used >= input.len() {
                        return Ok((used, None));
                    }
                }
                Err(e) => {
                    state.stopped = Some(e);
                    return Err(e);
                }
            }
        }
    }

    /// Ends the stream and gives the verdict on it: what `Container::parse` and `Container::verify` say of
    /// the bytes fed.
    ///
    /// # Errors
    /// The first broken rule, as [`DecodeError::Invalid`]; the error the decoder stopped with, if it did (a
    /// [`DecodeError::BufferTooSmall`] only while the buffer is still short: the decoder could not follow the
    /// stream, so it has no verdict), or [`DecodeError::BufferTooSmall`] when it was resumed over a buffer
    /// shorter than [`DecoderState::kept_len`] (as for [`Decoder::decode`]).
    pub fn finish(&mut self) -> Result<(), DecodeError> {
        if let Some(e) = self.stopped() {
            return Err(e);
        }
        if self.state.finished {
            return Err(DecodeError::Finished);
        }
        // Entries whose end was reached with the last bytes are closed first, as one more byte would.
        let state = &mut self.state;
        while state.top.phase() == Phase::Payloads {
            let before = state.top.progress();
            let stepped = state.top.step(self.buffer, &mut state.nested, &[], u64::MAX);
            if stepped.is_err() || state.top.progress() == before {
                break;
            }
        }
        state.finished = true;
        let verdict = state.top.verdict(self.buffer, &mut state.nested);
        verdict.structural.and(verdict.integrity).map_err(DecodeError::Invalid)
    }

    /// [`Decoder::finish`], with the structural verdict and the payload-integrity verdict apart (for
    /// [`SignedDecoder`], whose signature rules come between them in the spec's order).
    fn finish_parts(&mut self) -> Result<level::Verdict, DecodeError> {
        let (structural, integrity) = match self.finish() {
            Ok(()) => (Ok(()), Ok(())),
            Err(DecodeError::Invalid(e)) if is_integrity(e.rule()) => (Ok(()), Err(e)),
            Err(DecodeError::Invalid(e)) => (Err(e), Ok(())),
            Err(e) => return Err(e),
        };
        Ok(level::Verdict { structural, integrity })
    }
}
