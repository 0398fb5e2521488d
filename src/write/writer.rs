//! [`Writer`]: declare entries and metadata, stream payloads, finish — one type, two modes of sink.
//!
//! Protocol: declare every entry ([`EntryDecl`]) and metadata value, then write each entry's payload in
//! declaration order — in chunks of any size, each entry closed with `end_entry` — then `finish`. The mode
//! decides only when the prefix (header to metadata) goes out: first, for a sink that cannot seek
//! ([`OnePass`]); last, back-patched over zeros, for one that can ([`Seekable`]). Both write the one
//! canonical layout of spec §11, byte for byte.

use core::fmt;
use core::marker::PhantomData;

use embedded_io::{Seek, SeekFrom, Write};

use super::bookkeeping::Bookkeeping;
use super::error::WriteError;
use super::native::NativeArray;
use super::plan::Plan;
use super::EntryDecl;
use crate::checksum::Crc32;
use crate::error::Error;
use crate::format::{Dtype, COMPAT_SIGNED, MAGIC, SIGNATURE_ENTRY_NAME, SIGNATURE_KEY_PREFIX};
use crate::layout::len_u64;
use crate::meta_value::MetaValue;

mod sealed {
    pub trait Sealed {}
}

/// When a [`Writer`] writes the prefix. Sealed; the modes are [`Seekable`] and [`OnePass`].
pub trait Mode: sealed::Sealed {
    /// Whether the prefix is written before the first payload byte (so every length must be declared).
    #[doc(hidden)]
    const PREFIX_FIRST: bool;
}

/// The mode for sinks that can seek: payload lengths need not be known in advance
/// ([`EntryDecl::open_ended`]); zeros stand in for the prefix until `finish` back-patches it.
#[derive(Clone, Copy, Debug)]
pub enum Seekable {}

/// The mode for sinks that cannot seek (a pipe, a UART, a socket): every length is declared first, so the
/// whole prefix, checksum included, goes out before the first payload byte (spec §11.2).
#[derive(Clone, Copy, Debug)]
pub enum OnePass {}

impl sealed::Sealed for Seekable {}
impl sealed::Sealed for OnePass {}

impl Mode for Seekable {
    const PREFIX_FIRST: bool = false;
}

impl Mode for OnePass {
    const PREFIX_FIRST: bool = true;
}

/// A writer over a seekable sink: see [`Writer`] and [`Seekable`].
pub type SeekWriter<S, K> = Writer<S, K, Seekable>;
/// A one-pass writer over any sink: see [`Writer`] and [`OnePass`].
pub type StreamWriter<S, K> = Writer<S, K, OnePass>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Declaring,
    Streaming,
    Done,
    Poisoned,
}

/// A streaming writer: bookkeeping in `K` ([`crate::write::FixedBookkeeping`] or [`crate::write::VecBookkeeping`]), never
/// a payload in memory; output to an `embedded-io` sink `S`; mode `M` ([`SeekWriter`] and
/// [`StreamWriter`] name the two).
///
/// The container is written where the sink stands when writing begins, so it may follow a preamble (a file
/// header, a partition offset): all its offsets are relative to its own first byte. The seekable mode asks the
/// sink where it stands when it finishes (`Seek::stream_position`, which is `seek(SeekFrom::Current(0))`) and
/// seeks to absolute positions from there, so its sink must support both.
///
/// After any error the writer is poisoned: every later call returns [`WriteError::Poisoned`] and the output
/// is not a valid container — the seekable mode writes the magic last, the one-pass mode never writes the
/// trailer.
///
/// ```
/// use tpack::write::{EntryDecl, SeekWriter, VecBookkeeping};
/// use tpack::{Container, Dtype};
/// let mut out = embedded_io_adapters::std::FromStd::new(std::io::Cursor::new(Vec::new()));
/// let mut w = SeekWriter::new(&mut out, VecBookkeeping);
/// w.declare(EntryDecl::new("w", Dtype::U8, &[4]))?;
/// w.declare(EntryDecl::open_ended("code", Dtype::RAW))?;
/// w.write(&[1, 2])?;
/// w.write(&[3, 4])?;
/// w.end_entry()?;
/// w.write(b"any length")?;
/// w.end_entry()?;
/// w.finish()?;
/// let bytes = out.into_inner().into_inner();
/// assert_eq!(Container::parse(&bytes)?.get("code").unwrap().payload(), b"any length");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Writer<S, K: Bookkeeping, M: Mode> {
    sink: S,
    plan: Plan<K>,
    state: State,
    /// Bytes of this container written so far, counted from its first byte.
    cursor: u64,
    /// The entry being written: the first not yet ended.
    current: usize,
    /// Whether `current` has been placed (its padding written).
    open: bool,
    /// Payload bytes of `current` so far.
    written: u64,
    crc: Crc32,
    /// The signing state, when [`Writer::sign`] was called.
    #[cfg(feature = "sign")]
    signing: Option<alloc::boxed::Box<crate::sign::state::Signing>>,
    mode: PhantomData<M>,
}

impl<S, K: Bookkeeping, M: Mode> fmt::Debug for Writer<S, K, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("prefix_first", &M::PREFIX_FIRST)
            .field("state", &self.state)
            .field("entries", &self.plan.entry_count())
            .field("current", &self.current)
            .field("position", &self.cursor)
            .finish_non_exhaustive()
    }
}

impl<S: Write, K: Bookkeeping, M: Mode> Writer<S, K, M> {
    /// A writer that will write a container to `sink`, from where it stands, keeping its bookkeeping as
    /// `bookkeeping` says (a value of [`crate::write::FixedBookkeeping`] or [`crate::write::VecBookkeeping`]).
    pub fn new(sink: S, bookkeeping: K) -> Self {
        Self {
            sink,
            plan: Plan::new(bookkeeping),
            state: State::Declaring,
            cursor: 0,
            current: 0,
            open: false,
            written: 0,
            crc: Crc32::new(),
            #[cfg(feature = "sign")]
            signing: None,
            mode: PhantomData,
        }
    }

    /// Runs `f`, poisoning the writer if it fails.
    fn guard<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, WriteError<S::Error>>,
    ) -> Result<T, WriteError<S::Error>> {
        if self.state == State::Poisoned {
            return Err(WriteError::Poisoned);
        }
        let result = f(self);
        if result.is_err() {
            self.state = State::Poisoned;
        }
        result
    }

    /// Sets the compatible-feature flags. Bit 0 is `SIGNED` in a file of minor version ≥ 2 (spec §14), and
    /// only a signed file is of minor 2: [`Writer::sign`] sets it, and it is kept here. In an unsigned file
    /// (minor 0 or 1) bit 0 means nothing to a reader, and is written as given.
    pub fn set_compat_flags(&mut self, flags: u64) {
        let signed = self.plan.compat_flags & COMPAT_SIGNED;
        self.plan.compat_flags = flags | signed;
    }

    /// Whether [`Writer::sign`] was called.
    fn is_signing(&self) -> bool {
        #[cfg(feature = "sign")]
        return self.signing.is_some();
        #[cfg(not(feature = "sign"))]
        false
    }

    /// Signs the container with `key` (feature `sign`): declares the signed attributes of `options` as
    /// metadata and sets the `SIGNED` flag now, and at the first payload call declares the signature entry
    /// after every entry declared. Payloads are hashed as they are written; `finish` then writes the signature
    /// entry — the entries' digests and the signature over the prefix and them — before the trailer. The file is
    /// of format 1.2.
    ///
    /// # Errors
    /// [`WriteError::AlreadyStarted`] after the first payload call; [`WriteError::Format`] with
    /// [`Error::SignatureMeta`] for a subject that is not 1 to 255 bytes, and with [`Error::MetaDuplicateKey`]
    /// (at the first payload call) if the writer was already signing.
    #[cfg(feature = "sign")]
    pub fn sign(
        &mut self,
        key: &crate::sign::SigningKey,
        options: &crate::sign::SignOptions,
    ) -> Result<(), WriteError<S::Error>> {
        self.guard(|w| {
            w.declaring()?;
            let subject_len = options.subject.as_ref().map_or(1, alloc::string::String::len);
            if !(1..=crate::read::MAX_SUBJECT_LEN).contains(&subject_len) {
                let attribute = crate::error::SignedAttribute::Subject;
                return Err(WriteError::Format(Error::SignatureMeta { attribute }));
            }
            crate::sign::state::declare_attributes(key, options, |k, v| w.plan.declare_metadata(k, &v))?;
            w.plan.compat_flags |= COMPAT_SIGNED;
            w.signing = Some(crate::sign::state::Signing::new(key));
            Ok(())
        })
    }

    /// Declares the next entry. Payloads are laid out in declaration order.
    ///
    /// # Errors
    /// [`WriteError::Format`] with the rule the entry would break (name length, unknown dtype, rank, shape,
    /// alignment, target); [`WriteError::BufferFull`]; [`WriteError::UnsizedNotBytes`];
    /// [`WriteError::UnknownLength`] for an entry without a shape in one-pass mode, which needs every length
    /// before the first byte; [`WriteError::AlreadyStarted`] once payloads have begun. Duplicate names are
    /// reported when payloads begin (or at `finish`).
    pub fn declare(&mut self, entry: EntryDecl<'_>) -> Result<(), WriteError<S::Error>> {
        self.guard(|w| {
            w.declaring()?;
            let index = u32::try_from(w.plan.entry_count()).unwrap_or(u32::MAX);
            // The signature entry is the signing writer's own (spec §14): declared by `sign`, never by hand.
            if entry.dtype == Dtype::SIGNATURE || entry.name == SIGNATURE_ENTRY_NAME {
                return Err(WriteError::Format(Error::SignatureEntry { entry: index }));
            }
            // Refused here rather than when payloads begin, where nothing points back at this declaration.
            if M::PREFIX_FIRST && entry.shape.is_none() {
                return Err(WriteError::UnknownLength { entry: index });
            }
            w.plan.declare(&entry)
        })
    }

    /// The number of entries declared so far: the index the next declared entry will have.
    #[must_use]
    pub fn entry_count(&self) -> usize {
        self.plan.entry_count()
    }

    /// The number of metadata values declared so far (in declaration order, the signed attributes
    /// included): the record number a rule broken by the next one names until the keys are sorted.
    #[must_use]
    pub fn metadata_count(&self) -> usize {
        self.plan.metadata_count()
    }

    /// Declares metadata `key` = `value`.
    ///
    /// # Errors
    /// [`WriteError::Format`] for an empty or over-long key (R42), a value too long for the pool (R40) or a
    /// [`MetaValue::Unknown`] (R46: the writers write format 1.1 at most, which does not define its type);
    /// [`WriteError::BufferFull`];
    /// [`WriteError::AlreadyStarted`]. Duplicate keys are reported when payloads begin (or at `finish`).
    pub fn metadata(&mut self, key: &str, value: MetaValue<'_>) -> Result<(), WriteError<S::Error>> {
        self.guard(|w| {
            w.declaring()?;
            // The signed attributes are the signing writer's own (spec §14), whatever the minor version.
            if key.starts_with(SIGNATURE_KEY_PREFIX) {
                return Err(WriteError::Format(Error::SignedFlag));
            }
            w.plan.declare_metadata(key, &value)
        })
    }

    /// Declares metadata `key` = `value`, a numeric array in the host's byte order, encoded little-endian as
    /// it is stored: what [`Writer::metadata`] does with the same numbers as a little-endian slice, without
    /// the copy.
    ///
    /// # Errors
    /// As [`Writer::metadata`].
    pub fn metadata_native(&mut self, key: &str, value: NativeArray<'_>) -> Result<(), WriteError<S::Error>> {
        self.guard(|w| {
            w.declaring()?;
            if key.starts_with(SIGNATURE_KEY_PREFIX) {
                return Err(WriteError::Format(Error::SignedFlag));
            }
            w.plan.declare_native(key, &value)
        })
    }

    fn declaring(&self) -> Result<(), WriteError<S::Error>> {
        if self.state == State::Declaring {
            Ok(())
        } else {
            Err(WriteError::AlreadyStarted)
        }
    }

    /// Ends declaration on the first payload call: seals the plan and, in one-pass mode, writes the prefix;
    /// in seekable mode, zeros in its place (so an interrupted file has no magic).
    fn start(&mut self) -> Result<(), WriteError<S::Error>> {
        if self.state != State::Declaring {
            return Ok(());
        }
        self.guard(|w| {
            w.declare_signature_entry()?;
            w.plan.seal()?;
            if M::PREFIX_FIRST {
                let payload_end = w.plan.place_all()?;
                let header = w.plan.header(payload_end)?;
                let sink = &mut w.sink;
                w.plan.emit_prefix(&header, &mut |b: &[u8]| sink.write_all(b)).map_err(WriteError::Io)?;
            } else {
                write_zeros(&mut w.sink, w.plan.payload_start()).map_err(WriteError::Io)?;
            }
            w.cursor = w.plan.payload_start();
            w.state = State::Streaming;
            Ok(())
        })
    }

    fn streaming(&self) -> Result<(), WriteError<S::Error>> {
        match self.state {
            State::Poisoned => Err(WriteError::Poisoned),
            State::Done => Err(WriteError::TooManyEntries),
            _ => Ok(()),
        }
    }

    /// Places the current entry if it is not yet, writing the padding before it.
    fn open_entry(&mut self) -> Result<(), WriteError<S::Error>> {
        if self.open {
            return Ok(());
        }
        let start = self.plan.open(self.current, self.cursor)?;
        write_zeros(&mut self.sink, start.saturating_sub(self.cursor)).map_err(WriteError::Io)?;
        self.cursor = start;
        self.open = true;
        self.written = 0;
        self.crc = Crc32::new();
        Ok(())
    }

    /// Appends `chunk` to the current entry's payload (the first entry not yet ended). The first call ends
    /// declaration.
    ///
    /// # Errors
    /// [`WriteError::PayloadTooLong`] past the entry's length, [`WriteError::TooManyEntries`] after the last
    /// entry, [`WriteError::Io`], and the errors of ending declaration (duplicate names or keys, an
    /// open-ended entry in one-pass mode).
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), WriteError<S::Error>> {
        self.start()?;
        self.guard(|w| {
            w.streaming()?;
            w.open_entry()?;
            w.plan.check_room(w.current, w.written, chunk.len())?;
            w.user_entry()?;
            w.sink.write_all(chunk).map_err(WriteError::Io)?;
            w.crc.update(chunk);
            #[cfg(feature = "sign")]
            if let Some(signing) = &mut w.signing {
                signing.update(chunk);
            }
            w.written = w.written.saturating_add(len_u64(chunk.len()));
            w.cursor = w.cursor.saturating_add(len_u64(chunk.len()));
            Ok(())
        })
    }

    /// Ends the current entry.
    ///
    /// # Errors
    /// [`WriteError::PayloadTooShort`] if fewer bytes were written than its shape gives,
    /// [`WriteError::Format`] for a target that overflows, [`WriteError::TooManyEntries`], I/O errors.
    pub fn end_entry(&mut self) -> Result<(), WriteError<S::Error>> {
        self.start()?;
        self.guard(|w| {
            w.streaming()?;
            w.user_entry()?;
            w.open_entry()?;
            w.close_entry()?;
            #[cfg(feature = "sign")]
            if let Some(signing) = &mut w.signing {
                signing.end_entry();
            }
            Ok(())
        })
    }

    /// Writes a whole entry: declared shape, one chunk, ended.
    ///
    /// # Errors
    /// As [`Writer::write`] and [`Writer::end_entry`].
    pub fn write_entry(&mut self, payload: &[u8]) -> Result<(), WriteError<S::Error>> {
        self.write(payload)?;
        self.end_entry()
    }

    /// Ends the current entry, whose payload is complete.
    fn close_entry(&mut self) -> Result<(), WriteError<S::Error>> {
        let crc = core::mem::take(&mut self.crc).finish();
        self.plan.close(self.current, self.written, crc)?;
        self.current = self.current.saturating_add(1);
        self.open = false;
        Ok(())
    }

    /// Refuses payload calls for the signature entry, which `finish` writes.
    fn user_entry(&self) -> Result<(), WriteError<S::Error>> {
        let signature_next = self.current.checked_add(1) == Some(self.plan.entry_count());
        if self.is_signing() && signature_next {
            return Err(WriteError::TooManyEntries);
        }
        Ok(())
    }

    /// Declares the signature entry after the others, when signing.
    fn declare_signature_entry(&mut self) -> Result<(), WriteError<S::Error>> {
        #[cfg(feature = "sign")]
        if let Some(signing) = &self.signing {
            let length = signing.signature_len(self.plan.entry_count()).ok_or(WriteError::TooLarge)?;
            let shape = [length];
            let decl = EntryDecl::new(SIGNATURE_ENTRY_NAME, Dtype::SIGNATURE, &shape)
                .with_alignment(crate::format::SIGNATURE_ALIGNMENT);
            self.plan.declare(&decl)?;
        }
        Ok(())
    }

    /// Writes the signature entry, when signing and every other entry is written: the prefix is hashed as it
    /// will be written (both modes write the same bytes), then the digests and the signature go out.
    #[cfg(feature = "sign")]
    fn write_signature(&mut self) -> Result<(), WriteError<S::Error>> {
        use crate::auth::Sha256;
        let signature_next = self.current.checked_add(1) == Some(self.plan.entry_count());
        if self.signing.is_none() || !signature_next || self.open {
            return Ok(());
        }
        self.open_entry()?;
        let length = self.plan.declared_len(self.current).ok_or(WriteError::TooManyEntries)?;
        let payload_end = self.cursor.checked_add(length).ok_or(WriteError::TooLarge)?;
        let header = self.plan.header(payload_end)?;
        let mut hasher = crate::auth::Sha256Software::default();
        let _ = self.plan.emit_prefix(&header, &mut |b: &[u8]| -> Result<(), ()> {
            hasher.update(b);
            Ok(())
        });
        let payload =
            self.signing.as_ref().map(|s| s.signature_payload(&hasher.finish())).unwrap_or_default();
        self.sink.write_all(&payload).map_err(WriteError::Io)?;
        self.crc.update(&payload);
        self.written = len_u64(payload.len());
        self.cursor = self.cursor.saturating_add(self.written);
        self.close_entry()
    }

    /// Bytes of the container written so far (the prefix, or the zeros standing in for it, included),
    /// counted from the container's first byte.
    #[must_use]
    pub fn position(&self) -> u64 {
        self.cursor
    }

    /// The end of declaration and of every entry, and the trailer: what both modes' `finish` share. Returns
    /// where the payload section ends.
    fn write_trailer(&mut self) -> Result<u64, WriteError<S::Error>> {
        self.start()?;
        self.guard(|w| {
            w.streaming()?;
            #[cfg(feature = "sign")]
            w.write_signature()?;
            let declared = w.plan.entry_count();
            if w.current < declared || w.open {
                let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
                return Err(WriteError::EntriesMissing {
                    written: to_u32(w.current),
                    declared: to_u32(declared),
                });
            }
            let sink = &mut w.sink;
            w.plan.emit_trailer(&mut |b: &[u8]| sink.write_all(b)).map_err(WriteError::Io)?;
            Ok(w.cursor)
        })
    }
}

impl<S: Write + Seek, K: Bookkeeping> Writer<S, K, Seekable> {
    /// Writes the trailer, then seeks back and writes the header, table, index, names and metadata — the
    /// magic last of all, so the output becomes a container only once everything else is down. Returns the
    /// sink, positioned after the container.
    ///
    /// # Errors
    /// [`WriteError::EntriesMissing`] before every entry is written; [`WriteError::SinkPosition`] if the sink
    /// was moved behind the writer's back; I/O errors.
    pub fn finish(self) -> Result<S, WriteError<S::Error>> {
        self.finish_with_len().map(|(sink, _)| sink)
    }

    /// [`Writer::finish`], which also gives the container's length in bytes.
    ///
    /// # Errors
    /// As [`Writer::finish`].
    pub fn finish_with_len(mut self) -> Result<(S, u64), WriteError<S::Error>> {
        let payload_end = self.write_trailer()?;
        self.guard(|w| {
            let header = w.plan.header(payload_end)?;
            let total = header.total_len.get();
            // The sink stands after the trailer; the container began `total` bytes before.
            let end = w.sink.stream_position().map_err(WriteError::Io)?;
            let base =
                end.checked_sub(total).ok_or(WriteError::SinkPosition { position: end, written: total })?;
            let at = |offset: u64| base.checked_add(offset).ok_or(WriteError::TooLarge);
            // Everything but the magic first, the magic last: until its eight bytes are all down, the output
            // is not a container, so a failure at any byte leaves nothing that parses as valid.
            w.sink.seek(SeekFrom::Start(at(len_u64(MAGIC.len()))?)).map_err(WriteError::Io)?;
            let mut skip = MAGIC.len();
            let sink = &mut w.sink;
            w.plan
                .emit_prefix(&header, &mut |b: &[u8]| {
                    let (_, rest) = b.split_at(skip.min(b.len()));
                    skip = skip.saturating_sub(b.len());
                    sink.write_all(rest)
                })
                .map_err(WriteError::Io)?;
            w.sink.seek(SeekFrom::Start(base)).map_err(WriteError::Io)?;
            w.sink.write_all(&MAGIC).map_err(WriteError::Io)?;
            w.sink.seek(SeekFrom::Start(end)).map_err(WriteError::Io)?;
            w.sink.flush().map_err(WriteError::Io)?;
            w.cursor = total;
            w.state = State::Done;
            Ok(())
        })?;
        Ok((self.sink, self.cursor))
    }
}

impl<S: Write, K: Bookkeeping> Writer<S, K, OnePass> {
    /// Writes the trailer, flushes the sink and returns it, positioned after the container.
    ///
    /// # Errors
    /// [`WriteError::EntriesMissing`] before every entry is written; I/O errors.
    pub fn finish(self) -> Result<S, WriteError<S::Error>> {
        self.finish_with_len().map(|(sink, _)| sink)
    }

    /// [`Writer::finish`], which also gives the container's length in bytes.
    ///
    /// # Errors
    /// As [`Writer::finish`].
    pub fn finish_with_len(mut self) -> Result<(S, u64), WriteError<S::Error>> {
        self.write_trailer()?;
        self.guard(|w| {
            w.sink.flush().map_err(WriteError::Io)?;
            w.cursor = w.cursor.saturating_add(w.plan.trailer_len());
            w.state = State::Done;
            Ok(())
        })?;
        Ok((self.sink, self.cursor))
    }
}

fn write_zeros<S: Write>(sink: &mut S, mut count: u64) -> Result<(), S::Error> {
    const ZEROS: [u8; 512] = [0; 512];
    while count > 0 {
        let n = usize::try_from(count).unwrap_or(usize::MAX).min(ZEROS.len());
        sink.write_all(ZEROS.get(..n).unwrap_or(&[]))?;
        count = count.saturating_sub(len_u64(n));
    }
    Ok(())
}
