//! The push decoder: a [`tpack::stream::Decoder`] in caller storage ([`tpack_decoder`]) with a caller buffer,
//! fed chunk by chunk, answering with [`tpack_event`]s — one call per event (`tpack_decoder_decode`) or a
//! callback per event (`tpack_decoder_feed`); after `TPACK_EVENT_PREFIX` the prefix's entries and metadata
//! can be read; its state can be saved and resumed (`tpack_decoder_save`, `tpack_decoder_resume`), and its
//! buffer grown (`tpack_decoder_grow`) to what the stream announces (`tpack_decoder_buffer_needed` from the
//! header, `tpack_decoder_stream_buffer_needed` from the prefix) or what `TPACK_RESULT_BUFFER_TOO_SMALL` asks.

use core::ffi::{c_char, c_void};
use core::mem::{align_of, size_of};

use tpack::format::HEADER_LEN_V1;
use tpack::stream::{DecodeError, Decoder, DecoderState, Event, Prefix};
use tpack::Metadata;

use crate::boundary::{
    buffer as buffer_arg, fill, guard, guard_with_error, handle, handle_mut, input_of, kept, out, put,
    slice_of, storage, tpack_bytes, tpack_str, zeroed, Handle, Stored,
};
use crate::container::tpack_entry;
use crate::error::{tpack_error, tpack_result, Failure};
use crate::metadata::tpack_meta_value;
use crate::view::{self, View};
use core::ptr::NonNull;

/// Bytes of caller storage a decoder handle needs (on every target).
pub const TPACK_DECODER_SIZE: usize = 1152;
/// Alignment, in bytes, of a decoder handle's storage.
pub const TPACK_DECODER_ALIGN: usize = 8;
/// The shortest buffer `tpack_decoder_init` accepts: one header. A stream needs more — its prefix, trailer
/// and checksums (`tpack_decoder_buffer_needed`), and while a nested container is received its own
/// (`tpack_decoder_stream_buffer_needed` covers them all) — which `tpack_decoder_decode` reports as
/// `TPACK_RESULT_BUFFER_TOO_SMALL` once the stream tells it: `tpack_decoder_grow` then lets it go on.
pub const TPACK_DECODER_MIN_BUFFER: u32 = 160;

/// Caller storage for a push decoder, filled by `tpack_decoder_init`. Opaque. It holds the caller's buffer
/// exclusively: neither may be touched (read, written, copied, freed) by anyone else while the decoder is used,
/// and the decoder may not be copied. Not thread-safe; owns nothing, so there is nothing to free.
#[repr(C)]
pub struct tpack_decoder {
    // `MaybeUninit`: the bytes the handle does not use, and the padding inside it, are uninitialized, and a
    // copy of the storage (by value, in Rust) must not claim they are integers.
    opaque: [core::mem::MaybeUninit<u64>; 144],
}

const _: () = {
    assert!(TPACK_DECODER_MIN_BUFFER == HEADER_LEN_V1);
    assert!(size_of::<tpack_decoder>() == TPACK_DECODER_SIZE);
    assert!(align_of::<tpack_decoder>() == TPACK_DECODER_ALIGN);
    assert!(size_of::<Stored<Decoder<'static>>>() <= TPACK_DECODER_SIZE);
    assert!(align_of::<Stored<Decoder<'static>>>() <= TPACK_DECODER_ALIGN);
};

impl Handle for Decoder<'static> {
    const TAG: u64 = u64::from_le_bytes(*b"tpk:deco");
}

/// Bytes of caller storage a saved decoder state needs (on every target).
pub const TPACK_DECODER_STATE_SIZE: usize = 1152;
/// Alignment, in bytes, of a saved decoder state.
pub const TPACK_DECODER_STATE_ALIGN: usize = 8;

/// A decoder's state without its buffer, saved by `tpack_decoder_save` to resume from with
/// `tpack_decoder_resume` (after a reset, say, with the state and the buffer kept in retained RAM or flash).
/// Plain bytes to this library's build: it may be copied, but is read back only by the same build of the
/// library (it is no exchange format).
#[repr(C)]
pub struct tpack_decoder_state {
    // `MaybeUninit`: the padding inside the state is uninitialized.
    opaque: [core::mem::MaybeUninit<u64>; 144],
}

const _: () = {
    assert!(size_of::<tpack_decoder_state>() == TPACK_DECODER_STATE_SIZE);
    assert!(align_of::<tpack_decoder_state>() == TPACK_DECODER_STATE_ALIGN);
    assert!(size_of::<Stored<DecoderState>>() <= TPACK_DECODER_STATE_SIZE);
    assert!(align_of::<Stored<DecoderState>>() <= TPACK_DECODER_STATE_ALIGN);
};

impl Handle for DecoderState {
    const TAG: u64 = u64::from_le_bytes(*b"tpk:stat");
}

/// What a `tpack_decoder_decode` call saw.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tpack_event_kind {
    /// No event: the whole chunk was consumed (`*out_used == len`); feed the next one.
    TPACK_EVENT_NONE = 0,
    /// The prefix (header, table, index, names, metadata) has arrived and is valid: every entry is known
    /// before its first payload byte.
    TPACK_EVENT_PREFIX = 1,
    /// Payload bytes of entry `entry`, starting at `offset` within its payload, in `bytes` (borrowed from the
    /// chunk: valid as long as the chunk is).
    TPACK_EVENT_PAYLOAD = 2,
    /// The last byte of entry `entry` has arrived (also for an empty entry).
    TPACK_EVENT_ENTRY_END = 3,
    /// The last declared byte has arrived; `tpack_decoder_finish` gives the verdict.
    TPACK_EVENT_END = 4,
}

/// One event of the stream. Fields that the kind does not use are 0 (`bytes` is then empty: `len` 0, `data`
/// not NULL).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_event {
    /// What happened.
    pub kind: tpack_event_kind,
    /// The entry's position in the table (`PAYLOAD`, `ENTRY_END`).
    pub entry: u32,
    /// Where `bytes` start within the entry's payload (`PAYLOAD`).
    pub offset: u64,
    /// The entry's load address, when `has_target` (`PAYLOAD`).
    pub target: u64,
    /// The payload bytes (`PAYLOAD`), borrowed from the chunk.
    pub bytes: tpack_bytes,
    /// Whether the entry has a load address.
    pub has_target: bool,
}

impl tpack_event {
    pub(crate) fn new(event: Option<Event<'_>>) -> Self {
        let mut out = tpack_event {
            kind: tpack_event_kind::TPACK_EVENT_NONE,
            entry: 0,
            offset: 0,
            target: 0,
            bytes: tpack_bytes::empty(),
            has_target: false,
        };
        match event {
            None => {}
            Some(Event::Prefix) => out.kind = tpack_event_kind::TPACK_EVENT_PREFIX,
            Some(Event::Payload { entry, offset, target, bytes }) => {
                out.kind = tpack_event_kind::TPACK_EVENT_PAYLOAD;
                out.entry = entry;
                out.offset = offset;
                out.target = target.unwrap_or(0);
                out.has_target = target.is_some();
                out.bytes = tpack_bytes::new(bytes);
            }
            Some(Event::EntryEnd { entry }) => {
                out.kind = tpack_event_kind::TPACK_EVENT_ENTRY_END;
                out.entry = entry;
            }
            Some(Event::End) => out.kind = tpack_event_kind::TPACK_EVENT_END,
            // An event a later core adds: not one this API can describe yet.
            Some(_) => {}
        }
        out
    }
}

impl From<DecodeError> for Failure {
    /// Exhaustive (the core's `DecodeError` is, on purpose): a new way for a decoder to stop fails to compile
    /// here until it has a code.
    fn from(e: DecodeError) -> Self {
        match e {
            DecodeError::Invalid(e) => Failure::Invalid(e),
            DecodeError::BufferTooSmall { needed } => Failure::BufferTooSmall { needed },
            DecodeError::Finished => Failure::Code(tpack_result::TPACK_RESULT_DECODER_FINISHED),
        }
    }
}

/// `TPACK_RESULT_SHORT_STORAGE` for a decoder buffer shorter than `needed` bytes, with `needed` in
/// `tpack_error.value`.
pub(crate) fn short_storage(needed: u64) -> Failure {
    Failure::Other { result: tpack_result::TPACK_RESULT_SHORT_STORAGE, entry: None, value: Some(needed) }
}

/// Refuses a decoder buffer shorter than `TPACK_DECODER_MIN_BUFFER`.
pub(crate) fn check_min_buffer(buffer_len: usize) -> Result<(), Failure> {
    if u32::try_from(buffer_len).is_ok_and(|n| n < TPACK_DECODER_MIN_BUFFER) {
        return Err(short_storage(u64::from(TPACK_DECODER_MIN_BUFFER)));
    }
    Ok(())
}

/// Fills `out_storage` with a decoder that keeps what it must in `buffer` (`buffer_len` bytes): for a stream
/// of `n` entries, its prefix, trailer and `8n + 4` bytes of checksums (`tpack_decoder_buffer_needed`), and
/// while a nested container is received its own on top (`tpack_decoder_stream_buffer_needed`). A buffer that
/// turns out too small is grown with `tpack_decoder_grow`.
///
/// The decoder holds `buffer` exclusively until it is no longer used: do not touch or free it meanwhile. It
/// zeroes the buffer first (so it may be uninitialized memory), once.
///
/// # Errors
/// `TPACK_RESULT_SHORT_STORAGE` for a buffer shorter than `TPACK_DECODER_MIN_BUFFER` (that length in
/// `out_error->value`), `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_BAD_ARGUMENT` (`buffer_len` above
/// `PTRDIFF_MAX`), `TPACK_RESULT_MISALIGNED_STORAGE`. `out_storage` is untouched on failure.
///
/// # Safety
/// `out_storage` must point to a writable `tpack_decoder`, `buffer` to `buffer_len` writable bytes that no one
/// else uses while the decoder is used; `out_error` is NULL or points to a writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_init(
    out_storage: *mut tpack_decoder,
    buffer: *mut u8,
    buffer_len: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let slot = storage::<_, Decoder<'static>>(out_storage)?;
        let buffer = buffer_arg(buffer, buffer_len)?;
        check_min_buffer(buffer_len)?;
        // SAFETY: checked by `buffer_arg`; writable and exclusive for as long as the decoder is used, by the
        // caller's contract.
        let buffer = unsafe { zeroed(buffer, buffer_len) };
        // SAFETY: checked by `storage`; writable by the caller's contract.
        unsafe { fill(slot, Decoder::new(buffer)) };
        Ok(())
    })
}

/// Feeds the decoder from `chunk` (`len` bytes): consumes a prefix of it, writes how many bytes to `out_used`
/// and what they made to `out_event`. While the event is not `TPACK_EVENT_NONE`, call again with the rest of
/// the chunk (`chunk + *out_used`); `TPACK_EVENT_NONE` means the whole chunk was consumed.
///
/// Only rules that nothing later could change are reported here (R2–R7, R9, and R13 for a damaged header
/// that would otherwise read as R3 or R5: spec §12's header diagnosis); any other broken rule is held
/// for `tpack_decoder_finish` (`tpack_decoder_is_doomed` says at once that one is held).
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` and `TPACK_RESULT_DECODER_FINISHED`: the decoder is stopped and returns
/// it again. `TPACK_RESULT_BUFFER_TOO_SMALL`, `out_error->value` the buffer length the stream needs so far:
/// not final, and nothing is lost. As the exception to the out-parameter rule, `*out_used` then receives the
/// bytes of the chunk consumed before the buffer ran short (their events were given); call
/// `tpack_decoder_grow` with at least `value` bytes and go on with `chunk + *out_used` (until then the call
/// returns the same). A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a `tpack_decoder` filled by `tpack_decoder_init`, used by no one else during the
/// call; `chunk` to `len` readable bytes (valid for as long as the event's bytes are used; NULL with `len` 0
/// is an empty chunk); `out_used` and `out_event` to writable objects; `out_error` is NULL or points to a
/// writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_decode(
    decoder: *mut tpack_decoder,
    chunk: *const u8,
    len: usize,
    out_used: *mut usize,
    out_event: *mut tpack_event,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let (used_dst, event_dst) = (out(out_used)?, out(out_event)?);
        // SAFETY: the caller's contract.
        let d = unsafe { handle_mut::<_, Decoder<'static>>(decoder) }?;
        // SAFETY: the caller's contract: `len` readable bytes, valid while the event is used.
        let chunk = unsafe { input_of(chunk, len) }?;
        let start = d.position();
        let (used, event) = d.decode(chunk).map_err(|e| {
            if let DecodeError::BufferTooSmall { .. } = e {
                // SAFETY: checked by `out`; writable by the caller's contract.
                unsafe { put(used_dst, consumed_since(start, d.position())) };
            }
            Failure::from(e)
        })?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe {
            put(used_dst, used);
            put(event_dst, tpack_event::new(event));
        }
        Ok(())
    })
}

/// The bytes of a chunk a decoder consumed from `start` to `now` (positions in the stream).
pub(crate) fn consumed_since(start: u64, now: u64) -> usize {
    usize::try_from(now.saturating_sub(start)).unwrap_or(usize::MAX)
}

/// Ends the stream and gives the verdict: `TPACK_RESULT_OK` exactly when `tpack_container_parse` and
/// `tpack_container_verify` would accept the bytes fed, and otherwise the same rule.
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` with the first broken rule, the error the decoder stopped with, or
/// `TPACK_RESULT_DECODER_FINISHED` for a second call; a handle error.
///
/// # Safety
/// `decoder` must point to a `tpack_decoder` filled by `tpack_decoder_init`, used by no one else during the
/// call; `out_error` is NULL or points to a writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_finish(
    decoder: *mut tpack_decoder,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract.
        let d = unsafe { handle_mut::<_, Decoder<'static>>(decoder) }?;
        d.finish()?;
        Ok(())
    })
}

/// Writes whether a broken rule has been found already (to be reported by `tpack_decoder_finish`): the
/// transfer can be abandoned.
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a `tpack_decoder` filled by `tpack_decoder_init`, `out_doomed` to a writable
/// `bool`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_is_doomed(
    decoder: *const tpack_decoder,
    out_doomed: *mut bool,
) -> tpack_result {
    guard(|| {
        let dst = out(out_doomed)?;
        // SAFETY: the caller's contract.
        let d = unsafe { handle::<_, Decoder<'static>>(decoder) }?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, d.is_doomed()) };
        Ok(())
    })
}

/// Writes how many bytes of the stream the decoder has consumed.
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a `tpack_decoder` filled by `tpack_decoder_init`, `out_position` to a writable
/// `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_position(
    decoder: *const tpack_decoder,
    out_position: *mut u64,
) -> tpack_result {
    guard(|| {
        let dst = out(out_position)?;
        // SAFETY: the caller's contract.
        let d = unsafe { handle::<_, Decoder<'static>>(decoder) }?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, d.position()) };
        Ok(())
    })
}

/// Writes the buffer length the container needs whose first bytes (at least its 160-byte header) are
/// `header` (`len` bytes): its prefix, trailer and checksums, to size the buffer before `tpack_decoder_init`.
/// That is the whole stream's need when it has no `CONTAINER` entry; otherwise
/// `tpack_decoder_stream_buffer_needed`, from `TPACK_EVENT_PREFIX` on, tells the need with the nested
/// containers.
///
/// A header that breaks R3 (`version_major`) or R5 (`incompat_flags`) but is otherwise sound (R4, R6, R7
/// and R10–R12 hold) gets `TPACK_RESULT_OK` and a length: its rule is not known from the header. The header
/// diagnosis of spec §12 compares `header_crc` with the prefix to tell a newer file (R3 or R5) from a
/// damaged header (R13), so a decoder keeps the prefix, asks for this length, and reports R3, R5 or R13 when
/// the prefix is complete (R3 or R5 at `tpack_decoder_finish` if the stream ends before it);
/// `tpack_decoder_is_doomed` is true from the header on.
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` when the bytes are not a header whose sections hold together, but for
/// the R3 or R5 above, with the rule in `out_error`: what a decoder fed them reports at once (R2–R7) or at
/// `tpack_decoder_finish` (R1 for fewer than 160 bytes, R10–R12). `TPACK_RESULT_NULL_ARGUMENT`,
/// `TPACK_RESULT_BAD_ARGUMENT` (`len` above `PTRDIFF_MAX`).
///
/// # Safety
/// `header` must point to `len` readable bytes, `out_needed` to a writable `uint64_t`; `out_error` is NULL or
/// points to a writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_buffer_needed(
    header: *const u8,
    len: usize,
    out_needed: *mut u64,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let dst = out(out_needed)?;
        // SAFETY: the caller's contract, for the duration of the call.
        let header = unsafe { slice_of(header, len) }?;
        let needed = Decoder::buffer_needed(header).map_err(Failure::Invalid)?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, needed) };
        Ok(())
    })
}

/// Writes a buffer length that suffices for the rest of the stream, nested containers included, once
/// `TPACK_EVENT_PREFIX` has come: the container's own need (`tpack_decoder_buffer_needed`) plus, for its
/// largest `CONTAINER` entry of `len` bytes, `len + 4 * (len / 108)` (an upper bound on what it and the
/// containers nested in it keep at once). Exact for a stream without `CONTAINER` entries. Grow the buffer to
/// it (`tpack_decoder_grow`) before feeding on, and `TPACK_RESULT_BUFFER_TOO_SMALL` does not come.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` before the prefix has arrived (or when it broke a rule: nothing nested is then
/// decoded, and the buffer already suffices), a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_decoder`, `out_needed` to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_stream_buffer_needed(
    decoder: *const tpack_decoder,
    out_needed: *mut u64,
) -> tpack_result {
    guard(|| {
        let dst = out(out_needed)?;
        // SAFETY: the caller's contract.
        let d = unsafe { decoder_ref(decoder) }?;
        let needed = d.stream_buffer_needed().ok_or(Failure::Code(tpack_result::TPACK_RESULT_NOT_FOUND))?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, needed) };
        Ok(())
    })
}

/// Moves the decoder in `decoder` to `buffer` (`buffer_len` bytes, at least the current buffer's length):
/// copies the bytes it keeps there and zeroes the rest (so it may be uninitialized memory). After
/// `TPACK_RESULT_BUFFER_TOO_SMALL`, a buffer of at least its `value` bytes lets the decoder go on; at any
/// time, one of `tpack_decoder_stream_buffer_needed` bytes covers the rest of the stream.
///
/// `buffer` may be the current buffer, longer (a larger part of the same array: nothing is copied), or
/// memory apart from it; once the call returns, the decoder no longer uses the old buffer (free it then —
/// not before, and not with `realloc`, whose old block this call would read after it was freed). Views read
/// from the prefix before the call (`tpack_entry` names, `tpack_meta_value`s, `tpack_str` keys,
/// `tpack_bytes`) point into the old buffer: read them again (`tpack_decoder_prefix_entry`,
/// `tpack_decoder_prefix_metadata_get`, ...) after growing, before the old buffer is freed or reused. Payload
/// events' bytes point into the caller's chunk, not the buffer, and stay valid.
///
/// # Errors
/// `TPACK_RESULT_SHORT_STORAGE` when `buffer_len` is below the current buffer's length (that length in
/// `out_error->value`); `TPACK_RESULT_BAD_ARGUMENT` for a `buffer_len` above `PTRDIFF_MAX` or a `buffer` that
/// overlaps the current one without starting where it starts; a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
/// On failure the decoder is unchanged.
///
/// # Safety
/// `decoder` must point to a `tpack_decoder` filled by `tpack_decoder_init`, used by no one else during the
/// call; `buffer` to `buffer_len` writable bytes that no one else uses while the decoder is used; `out_error`
/// is NULL or points to a writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_grow(
    decoder: *mut tpack_decoder,
    buffer: *mut u8,
    buffer_len: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract.
        let d = unsafe { handle_mut::<_, Decoder<'static>>(decoder) }?;
        let new = buffer_arg(buffer, buffer_len)?;
        // SAFETY: the caller's contract: `buffer_len` writable bytes, exclusive while the decoder is used.
        unsafe { move_buffer(new, buffer_len, |b| d.replace_buffer(b)) }
    })
}

/// Moves a decoder to the caller's buffer `new` (`new_len` bytes, checked by `buffer`): `replace` gives the
/// decoder a buffer and returns its old one. The old buffer is taken out first, so that the new one, which
/// may be the old one longer, is never borrowed while the old one is.
///
/// # Safety
/// `new` points to `new_len` writable bytes that no one but the decoder uses from now on.
pub(crate) unsafe fn move_buffer(
    new: NonNull<u8>,
    new_len: usize,
    mut replace: impl FnMut(&'static mut [u8]) -> &'static mut [u8],
) -> Result<(), Failure> {
    let old = replace(&mut []);
    let (from, old_len) = (old.as_mut_ptr(), old.len());
    if new_len < old_len {
        replace(old);
        return Err(short_storage(u64::try_from(old_len).unwrap_or(u64::MAX)));
    }
    let (start, new_start) = (from.addr(), new.as_ptr().addr());
    let overlaps = new_start < start.saturating_add(old_len) && start < new_start.saturating_add(new_len);
    if overlaps && new_start != start {
        replace(old);
        return Err(Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT));
    }
    // The old borrow ends here: from now on only raw pointers reach the old bytes, and then only the new
    // buffer.
    let _ = old;
    let tail = new_len.saturating_sub(old_len);
    // SAFETY: `new` is writable for `new_len >= old_len` bytes (this function's contract); `from` is the old
    // buffer, readable for `old_len` bytes; they do not overlap (checked above) unless they start at the
    // same byte, where nothing needs copying. The tail, `new_len - old_len` bytes after the copy, is inside
    // `new`.
    unsafe {
        if new_start != start {
            core::ptr::copy_nonoverlapping(from.cast_const(), new.as_ptr(), old_len);
        }
        core::ptr::write_bytes(new.as_ptr().add(old_len), 0, tail);
    }
    // SAFETY: initialized just above (the copy, or the old bytes in place, and the zeroed tail); exclusive
    // from now on by this function's contract.
    replace(unsafe { kept(new, new_len) });
    Ok(())
}

/// The decoder in `d`, checked, with the lifetime of its buffer.
///
/// # Safety
/// As for [`handle`]; the decoder's buffer (which its views point into) stays valid and is written by no one
/// but the decoder for `'a`.
unsafe fn decoder_ref<'a>(d: *const tpack_decoder) -> Result<&'a Decoder<'static>, Failure> {
    // SAFETY: the caller's contract.
    unsafe { handle(d) }
}

impl View for Prefix<'static> {
    type Entry = tpack_entry;
    fn entry_count(&self) -> usize {
        self.len()
    }
    fn entry(&self, position: usize) -> Option<tpack_entry> {
        Prefix::entry(self, position).map(|e| tpack_entry::of_prefix(&e))
    }
    fn find(&self, name: &str) -> Option<tpack_entry> {
        self.get(name).map(|e| tpack_entry::of_prefix(&e))
    }
    fn metadata(&self) -> Metadata<'static> {
        Prefix::metadata(self)
    }
}

/// The prefix the decoder in `d` holds, or `TPACK_RESULT_NOT_FOUND` before `TPACK_EVENT_PREFIX`.
///
/// # Safety
/// As for [`decoder_ref`]. The prefix lives at the start of the buffer, and the decoder never writes it again
/// once it is validated: it keeps it to the end of the stream.
unsafe fn prefix_of<'a>(d: *const tpack_decoder) -> Result<Prefix<'a>, Failure> {
    // SAFETY: the caller's contract.
    let d: &'a Decoder<'static> = unsafe { decoder_ref(d) }?;
    d.prefix().ok_or(Failure::Code(tpack_result::TPACK_RESULT_NOT_FOUND))
}

/// Called by `tpack_decoder_feed` with each event (`event` is valid during the call only; its `bytes` as long
/// as the chunk). Return 0 to go on, or any other number to stop: `tpack_decoder_feed` then returns
/// `TPACK_RESULT_IO` with the number in `out_error->value`, having consumed the bytes up to and including that
/// event's (it is not given again: a payload event's bytes are the caller's to keep or lose). It must not
/// unwind or `longjmp` out, and must not use the decoder.
pub type tpack_event_fn = Option<unsafe extern "C" fn(user: *mut c_void, event: *const tpack_event) -> i32>;

/// Feeds the whole of `chunk` (`len` bytes) to the decoder, calling `on_event` (with `user`) for each event
/// it makes, in order: the callback form of `tpack_decoder_decode`. `out_used`, when not NULL, receives how
/// many bytes were consumed — also on failure, the exception to the out-parameter rule: `len` on success;
/// when the callback stopped, the bytes up to the end of the event it stopped at, that event's own bytes
/// included (a refused payload event's bytes are consumed: the decoder does not give them again); after an
/// error, the bytes consumed before it (for `TPACK_RESULT_BUFFER_TOO_SMALL`, every byte whose events were
/// given: grow the buffer and feed `chunk + *out_used` to go on).
///
/// # Errors
/// As `tpack_decoder_decode`, and `TPACK_RESULT_IO` when the callback returns non-zero (its number in
/// `out_error->value`; the decoder is not stopped: feed `chunk + *out_used` to go on with the event after
/// the refused one).
///
/// # Safety
/// As `tpack_decoder_decode`; `on_event` must be callable with `user` during the call; `out_used` is NULL or
/// points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_feed(
    decoder: *mut tpack_decoder,
    chunk: *const u8,
    len: usize,
    on_event: tpack_event_fn,
    user: *mut c_void,
    out_used: *mut usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    let mut consumed = 0usize;
    let result = guard_with_error(out_error, || {
        let on_event = on_event.ok_or(Failure::Code(tpack_result::TPACK_RESULT_NULL_ARGUMENT))?;
        // SAFETY: the caller's contract.
        let d = unsafe { handle_mut::<_, Decoder<'static>>(decoder) }?;
        // SAFETY: the caller's contract: `len` readable bytes, valid while the events' bytes are used.
        let chunk = unsafe { input_of(chunk, len) }?;
        loop {
            let start = d.position();
            let (used, event) = d.decode(chunk.get(consumed..).unwrap_or(&[])).map_err(|e| {
                if let DecodeError::BufferTooSmall { .. } = e {
                    consumed = consumed.saturating_add(consumed_since(start, d.position()));
                }
                Failure::from(e)
            })?;
            consumed = consumed.saturating_add(used);
            let Some(event) = event else { return Ok(()) };
            let event = tpack_event::new(Some(event));
            // SAFETY: the callback's contract; `event` lives across the call.
            let code = unsafe { on_event(user, &event) };
            if code != 0 {
                return Err(Failure::Other {
                    result: tpack_result::TPACK_RESULT_IO,
                    entry: None,
                    value: Some(u64::from_le_bytes(i64::from(code).to_le_bytes())),
                });
            }
        }
    });
    if let Some(dst) = core::ptr::NonNull::new(out_used) {
        if dst.as_ptr().is_aligned() {
            // SAFETY: not NULL and aligned; writable by the caller's contract.
            unsafe { put(dst, consumed) };
        }
    }
    result
}

/// Writes the number of entries in the stream's prefix, once `TPACK_EVENT_PREFIX` has come.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` before the prefix has arrived (or when it is invalid), a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_decoder`, `out_count` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_prefix_entry_count(
    decoder: *const tpack_decoder,
    out_count: *mut usize,
) -> tpack_result {
    // The value's borrow of the decoder's buffer is the caller's to keep valid.
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::count(view, View::entry_count, out_count) })
}

/// Describes the prefix's entry at `index` (table order, which is payload order), before its payload arrives:
/// name, dtype, shape, alignment, target, offset and `length` as for a parsed container; `payload` is empty
/// (`len` 0, `data` not NULL: the bytes come with the payload events), and `checksum` is 0 (the trailer comes
/// last). The name points into the
/// decoder's buffer: valid while the decoder and its buffer are.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` past the last entry or before the prefix, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_decoder`, `out_entry` to a writable `tpack_entry`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_prefix_entry(
    decoder: *const tpack_decoder,
    index: usize,
    out_entry: *mut tpack_entry,
) -> tpack_result {
    // The value's borrow of the decoder's buffer is the caller's to keep valid.
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::entry_at(view, index, out_entry) })
}

/// Like `tpack_decoder_prefix_entry`, for the entry named `name` (`name_len` bytes): a binary search.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` (no such entry, or no prefix yet), a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_decoder`, `name` to `name_len` readable bytes, `out_entry` to a
/// writable `tpack_entry`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_prefix_find(
    decoder: *const tpack_decoder,
    name: *const c_char,
    name_len: usize,
    out_entry: *mut tpack_entry,
) -> tpack_result {
    // The value's borrow of the decoder's buffer is the caller's to keep valid.
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::find(view, name, name_len, out_entry) })
}

/// Writes the number of metadata records in the stream's prefix.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` before the prefix, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_decoder`, `out_count` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_prefix_metadata_count(
    decoder: *const tpack_decoder,
    out_count: *mut usize,
) -> tpack_result {
    // The value's borrow of the decoder's buffer is the caller's to keep valid.
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::count(view, |v| v.metadata().len(), out_count) })
}

/// Fills `out_value` with the prefix's metadata value under `key`, to read with the `tpack_meta_*`
/// accessors. The value points into the decoder's buffer: valid while the decoder and its buffer are.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` (no such key, or no prefix yet), a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_decoder`, `key` to `key_len` readable bytes, `out_value` to a
/// writable `tpack_meta_value`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_prefix_metadata_get(
    decoder: *const tpack_decoder,
    key: *const c_char,
    key_len: usize,
    out_value: *mut tpack_meta_value,
) -> tpack_result {
    // The value's borrow of the decoder's buffer is the caller's to keep valid.
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::metadata_get(view, key, key_len, out_value) })
}

/// The prefix's metadata record at `index` in key order: its key to `out_key`, its value to `out_value`.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` past the last record or before the prefix, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_decoder`, `out_key` to a writable `tpack_str`, `out_value` to a
/// writable `tpack_meta_value`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_prefix_metadata_at(
    decoder: *const tpack_decoder,
    index: usize,
    out_key: *mut tpack_str,
    out_value: *mut tpack_meta_value,
) -> tpack_result {
    // The value's borrow of the decoder's buffer is the caller's to keep valid.
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::metadata_at(view, index, out_key, out_value) })
}

/// Saves the decoder's state (everything but its buffer's bytes) to `out_state`. To go on later — after a
/// reset, with the state and the buffer kept — call `tpack_decoder_resume` with the same buffer contents and
/// feed the stream from `tpack_decoder_position` on.
///
/// # Errors
/// A handle error, `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_MISALIGNED_STORAGE`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_decoder`, `out_state` to a writable `tpack_decoder_state`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_save(
    decoder: *const tpack_decoder,
    out_state: *mut tpack_decoder_state,
) -> tpack_result {
    guard(|| {
        let slot = storage::<_, DecoderState>(out_state)?;
        // SAFETY: the caller's contract.
        let d = unsafe { decoder_ref(decoder) }?;
        // SAFETY: checked by `storage`; writable by the caller's contract.
        unsafe { fill(slot, d.state()) };
        Ok(())
    })
}

/// Fills `out_storage` with a decoder that goes on from `state` (saved by `tpack_decoder_save`), keeping what
/// it must in `buffer`, which must hold what the saved decoder's buffer held at its start: the bytes the
/// state keeps, which may be fewer than the saved buffer's length (a shorter buffer holding them will do) or
/// more (a decoder stopped by `TPACK_RESULT_BUFFER_TOO_SMALL` resumes over a larger buffer, and goes on once
/// it has the `value` bytes asked). Feed it the stream from the saved position on. A buffer whose bytes
/// differ gives a wrong verdict, never undefined behaviour.
///
/// # Errors
/// `TPACK_RESULT_SHORT_STORAGE` for a buffer shorter than the bytes the state keeps (or than
/// `TPACK_DECODER_MIN_BUFFER`), the length needed in `out_error->value`: never more than the saved decoder's
/// buffer. As `tpack_decoder_init` otherwise, and `TPACK_RESULT_UNINITIALIZED_STORAGE` for a state not
/// written by `tpack_decoder_save`.
///
/// # Safety
/// As `tpack_decoder_init`; `state` must point to a readable `tpack_decoder_state`.
#[no_mangle]
pub unsafe extern "C" fn tpack_decoder_resume(
    out_storage: *mut tpack_decoder,
    buffer: *mut u8,
    buffer_len: usize,
    state: *const tpack_decoder_state,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let slot = storage::<_, Decoder<'static>>(out_storage)?;
        // SAFETY: the caller's contract.
        let saved = *unsafe { handle::<_, DecoderState>(state) }?;
        let buffer = buffer_arg(buffer, buffer_len)?;
        // A buffer that lost kept bytes would make a wrong verdict: refused here, where the caller can see it,
        // with the one length that does (the minimum included).
        let needed = saved.kept_len().max(u64::from(TPACK_DECODER_MIN_BUFFER));
        if u64::try_from(buffer_len).is_ok_and(|n| n < needed) {
            return Err(short_storage(needed));
        }
        // SAFETY: checked by `buffer_arg`; holding what the saved decoder's buffer held (so initialized),
        // writable and exclusive for as long as the decoder is used, by the caller's contract.
        let buffer = unsafe { kept(buffer, buffer_len) };
        // SAFETY: checked by `storage`; writable by the caller's contract.
        unsafe { fill(slot, Decoder::resume(buffer, saved)) };
        Ok(())
    })
}
