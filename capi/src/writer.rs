//! The writer: a [`tpack::write::Writer`] in caller storage ([`tpack_writer`]), writing through C callbacks, with
//! its bookkeeping in a second block of caller storage ([`tpack::write::SliceBookkeeping`]) whose capacity the
//! caller chooses.
//!
//! Protocol, as the core's: declare every entry ([`tpack_entry_decl`]) and metadata value, then write each
//! entry's payload in declaration order (`tpack_writer_write`, any number of chunks, then
//! `tpack_writer_end_entry`), then `tpack_writer_finish`. Two modes, chosen at init:
//! - one-pass (`tpack_writer_init`): the whole prefix goes out before the first payload byte, so every
//!   length is declared up front, and a pipe, a UART or a socket can be the sink;
//! - seekable (`tpack_writer_init_seekable`): zeros stand in for the prefix, which `tpack_writer_finish`
//!   back-patches through the seek callback, so an entry may be open-ended (`RAW`, length found by writing).

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use tpack::embedded_io::{self, ErrorKind, ErrorType, SeekFrom};
use tpack::format::DEFAULT_ALIGNMENT;
use tpack::write::{EntryDecl, SeekWriter, SliceBookkeeping, StreamWriter, WriteError, WriteErrorClass};
use tpack::{Dtype, Error};

use crate::boundary::{
    array_of, buffer, fill, guard, guard_with_error, handle, handle_mut, input_of, out, put, read_arg,
    storage, take, text, zeroed,
};
use crate::boundary::{tpack_str, Handle, Outcome, Stored};
use crate::container::TPACK_MAX_RANK;
use crate::error::{tpack_error, tpack_result, Failure};

/// Bytes of caller storage a writer handle needs (on every target). The bookkeeping is a separate block
/// (`tpack_writer_bookkeeping_size`).
pub const TPACK_WRITER_SIZE: usize = 512;
/// Alignment, in bytes, of a writer handle's storage.
pub const TPACK_WRITER_ALIGN: usize = 8;
/// `whence` for a seek from the start of the sink (as `SEEK_SET`).
pub const TPACK_SEEK_SET: i32 = 0;
/// `whence` for a seek from the current position (as `SEEK_CUR`).
pub const TPACK_SEEK_CUR: i32 = 1;
/// `whence` for a seek from the end of the sink (as `SEEK_END`).
pub const TPACK_SEEK_END: i32 = 2;

/// The sink: called with the container's bytes in order. It must write all `len` bytes and return 0, or
/// return any other number to fail (the writer then stops, and `tpack_error.value` holds the number). It must
/// not unwind or `longjmp` out. `user` is the pointer given at init.
pub type tpack_write_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, bytes: *const u8, len: usize) -> i32>;

/// The seekable sink's other half: moves the position of later writes to `offset` from `whence`
/// (`TPACK_SEEK_SET`, `TPACK_SEEK_CUR` or `TPACK_SEEK_END`), writes the new position, counted from the start
/// of the sink, to `*out_position`, and returns 0; or returns any other number to fail, as `tpack_write_fn`
/// does. The writer asks `(0, TPACK_SEEK_CUR)` once, to learn where the container begins, then seeks only with
/// `TPACK_SEEK_SET`. A `FILE *` answers with `fseeko` + `ftello`, a file descriptor with `lseek`.
pub type tpack_seek_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, offset: i64, whence: i32, out_position: *mut u64) -> i32>;

/// The C callbacks as an `embedded-io` sink (seekable when `seek` is there).
struct Callback {
    write: unsafe extern "C" fn(*mut c_void, *const u8, usize) -> i32,
    seek: Option<unsafe extern "C" fn(*mut c_void, i64, i32, *mut u64) -> i32>,
    user: *mut c_void,
}

/// The code a seek fails with when the offset does not fit an `int64_t` or the writer has no seek callback
/// (neither can happen through this API: the writer seeks only to positions it wrote, and only in the
/// seekable mode).
const SEEK_UNAVAILABLE: i32 = i32::MIN;

/// What a failing callback returned.
#[derive(Clone, Copy, Debug)]
struct CallbackError(i32);

impl core::fmt::Display for CallbackError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "the output callback returned {}", self.0)
    }
}

impl core::error::Error for CallbackError {}

impl embedded_io::Error for CallbackError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Other
    }
}

impl ErrorType for Callback {
    type Error = CallbackError;
}

impl embedded_io::Write for Callback {
    fn write(&mut self, buf: &[u8]) -> Result<usize, CallbackError> {
        if buf.is_empty() {
            return Ok(0);
        }
        // SAFETY: `buf` is readable for its length during the call; the callback's contract (set by the
        // caller of `tpack_writer_init`) is to read at most `len` bytes and not to keep the pointer.
        let code = unsafe { (self.write)(self.user, buf.as_ptr(), buf.len()) };
        if code == 0 {
            Ok(buf.len())
        } else {
            Err(CallbackError(code))
        }
    }

    fn flush(&mut self) -> Result<(), CallbackError> {
        Ok(())
    }
}

impl embedded_io::Seek for Callback {
    fn seek(&mut self, pos: SeekFrom) -> Result<u64, CallbackError> {
        let (offset, whence) = match pos {
            SeekFrom::Start(n) => {
                (i64::try_from(n).map_err(|_| CallbackError(SEEK_UNAVAILABLE))?, TPACK_SEEK_SET)
            }
            SeekFrom::Current(n) => (n, TPACK_SEEK_CUR),
            SeekFrom::End(n) => (n, TPACK_SEEK_END),
        };
        let seek = self.seek.ok_or(CallbackError(SEEK_UNAVAILABLE))?;
        let mut position = 0u64;
        // SAFETY: the callback's contract (set by the caller of `tpack_writer_init_seekable`): it writes one
        // `uint64_t` through the pointer, which is valid for that write during the call, and keeps nothing.
        let code = unsafe { seek(self.user, offset, whence, &raw mut position) };
        if code == 0 {
            Ok(position)
        } else {
            Err(CallbackError(code))
        }
    }
}

/// The bookkeeping as the handle keeps it. `'static` stands for "as long as the caller keeps the block":
/// the contract of `tpack_writer_init` is that the block outlives the writer and is not touched meanwhile.
type Bookkeeping = SliceBookkeeping<'static>;

/// A writer of either mode; both write through the same callbacks.
enum Inner {
    OnePass(StreamWriter<Callback, Bookkeeping>),
    Seekable(SeekWriter<Callback, Bookkeeping>),
}

/// Runs the same code on the writer of either mode.
macro_rules! either {
    ($inner:expr, $w:ident => $body:expr) => {
        match $inner {
            Inner::OnePass($w) => $body,
            Inner::Seekable($w) => $body,
        }
    };
}

mod metadata;

pub use metadata::*;

/// Caller storage for a writer, filled by `tpack_writer_init` or `tpack_writer_init_seekable` and emptied by
/// `tpack_writer_finish`. Opaque. Used by one thread at a time, never copied. It owns nothing: storage
/// abandoned mid-container (after an error, say) can simply be reused or freed.
///
/// A failure the writer itself finds poisons it: every later call returns `TPACK_RESULT_WRITER_POISONED`, and
/// its output is not a valid container. Among them: `TPACK_RESULT_WRITER_FULL` and
/// `TPACK_RESULT_WRITER_MISUSE` from any call (a metadata value or an entry declared after the first payload
/// byte, more or fewer payload bytes than declared, an open-ended entry given to the one-pass writer, ...),
/// `TPACK_RESULT_IO`, and the rules it finds (R17 or R42 for an empty or over-long name or key, R22 and
/// R25–R32 of a declaration, a duplicate name or key). A failure found before the writer sees the call leaves
/// it as it was, to correct and repeat the call: `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_BAD_ARGUMENT`,
/// `TPACK_RESULT_MISALIGNED_STORAGE`, a handle error, R18 and R23 from `tpack_writer_declare`, R43 and
/// R46–R49 from the metadata setters.
#[repr(C)]
pub struct tpack_writer {
    // `MaybeUninit`: the bytes the handle does not use, and the padding inside it, are uninitialized, and a
    // copy of the storage (by value, in Rust) must not claim they are integers.
    // A literal (cbindgen does not evaluate `TPACK_WRITER_SIZE / 8`); the assertions below keep them equal.
    opaque: [core::mem::MaybeUninit<u64>; 64],
}

const _: () = {
    assert!(size_of::<tpack_writer>() == TPACK_WRITER_SIZE);
    assert!(align_of::<tpack_writer>() == TPACK_WRITER_ALIGN);
    assert!(size_of::<Stored<Inner>>() <= TPACK_WRITER_SIZE);
    assert!(align_of::<Stored<Inner>>() <= TPACK_WRITER_ALIGN);
};

impl Handle for Inner {
    const TAG: u64 = u64::from_le_bytes(*b"tpk:writ");
}

/// One entry to declare.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_entry_decl {
    /// The name: UTF-8, 1…1024 bytes, unique in the container (not NUL-terminated, unless `len` is
    /// `TPACK_NUL_TERMINATED`).
    pub name: tpack_str,
    /// `rank` dimensions, outermost first; may be NULL when `rank` is 0.
    pub dims: *const u64,
    /// The number of dimensions, 0…8.
    pub rank: usize,
    /// The load address, when `has_target`.
    pub target: u64,
    /// The payload's alignment: a power of two from 1 to 65536, or 0 for the default (64).
    pub alignment: u32,
    /// The dtype code (`tpack_dtype_name` lists the known ones).
    pub dtype: u16,
    /// Whether the entry has a load address.
    pub has_target: bool,
    /// A payload of a length not known in advance, found by writing it: `RAW` only, seekable writer only (the
    /// one-pass writer refuses it when it is declared); `dims` and `rank` are then ignored, and the shape is
    /// `[length]`.
    pub open_ended: bool,
}

fn bad_argument() -> Failure {
    Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT)
}

impl From<WriteError<CallbackError>> for Failure {
    /// By the core's class of the error, which every writer error has: a new kind of writer error is mapped
    /// here without a line of its own, and a new class fails to compile until it is.
    fn from(e: WriteError<CallbackError>) -> Self {
        let other = |result: tpack_result, entry: Option<u32>, value: Option<u64>| Failure::Other {
            result,
            entry,
            value,
        };
        match e.class() {
            // The callback's number, sign-extended, as `value` holds it.
            WriteErrorClass::Io(CallbackError(code)) => other(
                tpack_result::TPACK_RESULT_IO,
                None,
                Some(u64::from_le_bytes(i64::from(*code).to_le_bytes())),
            ),
            WriteErrorClass::Format(e) => Failure::Invalid(e),
            WriteErrorClass::BufferFull(buffer) => {
                other(tpack_result::TPACK_RESULT_WRITER_FULL, None, Some(u64::from(buffer.number())))
            }
            // An offset past 2^64 comes of declarations no caller can write in one container: misuse.
            WriteErrorClass::TooLarge => other(tpack_result::TPACK_RESULT_WRITER_MISUSE, None, None),
            WriteErrorClass::Misuse { entry, value } => {
                other(tpack_result::TPACK_RESULT_WRITER_MISUSE, entry, value)
            }
            WriteErrorClass::Poisoned => Failure::Code(tpack_result::TPACK_RESULT_WRITER_POISONED),
        }
    }
}

/// Writes the bytes of bookkeeping storage that a writer for up to `max_entries` entries (and, separately,
/// metadata records) and `max_bytes` bytes of names (and, separately, of encoded metadata: 15 bytes per record
/// plus its key and value) needs, at any alignment: about `max_entries × 116 + 2 × max_bytes`.
///
/// # Errors
/// `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_BAD_ARGUMENT` (the size does not fit a `size_t`).
///
/// # Safety
/// `out_size` must point to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_bookkeeping_size(
    max_entries: usize,
    max_bytes: usize,
    out_size: *mut usize,
) -> tpack_result {
    guard(|| {
        let dst = out(out_size)?;
        let size = SliceBookkeeping::storage_len(max_entries, max_bytes).ok_or_else(bad_argument)?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, size) };
        Ok(())
    })
}

/// The bookkeeping over the caller's block.
///
/// # Safety
/// `block` (checked here for NULL and length) must be writable for `len` bytes, outlive the writer, and be
/// touched by no one else until the writer is finished or abandoned.
unsafe fn lend_bookkeeping(
    block: *mut u8,
    len: usize,
    entries: usize,
    bytes: usize,
) -> Result<Bookkeeping, Failure> {
    let start = buffer(block, len)?;
    // SAFETY: checked by `buffer`; writable, exclusive and alive as long as the writer by the contract.
    let block = unsafe { zeroed(start, len) };
    SliceBookkeeping::new(block, entries, bytes).map_err(|short| Failure::Other {
        result: tpack_result::TPACK_RESULT_SHORT_STORAGE,
        entry: None,
        value: short.needed.and_then(|n| u64::try_from(n).ok()),
    })
}

/// Fills `out_storage` with a one-pass writer that sends the container to `write` (called with `user`),
/// with room for `max_entries` entries and `max_bytes` name bytes (and as many metadata records and bytes)
/// in the `bookkeeping_len` bytes at `bookkeeping` (`tpack_writer_bookkeeping_size` says how many are needed).
///
/// # Errors
/// `TPACK_RESULT_NULL_ARGUMENT` (`write`, `bookkeeping`; `user` may be NULL), `TPACK_RESULT_MISALIGNED_STORAGE`,
/// `TPACK_RESULT_SHORT_STORAGE` (the bookkeeping block is too short: `out_error->value` is the length
/// needed), `TPACK_RESULT_BAD_ARGUMENT` (a length above `PTRDIFF_MAX`).
///
/// # Safety
/// `out_storage` must point to a writable `tpack_writer`; `bookkeeping` to `bookkeeping_len` writable bytes
/// that outlive the writer and that no one else touches until it is finished (or abandoned); `write` must be
/// callable with `user` until then; `out_error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_init(
    out_storage: *mut tpack_writer,
    bookkeeping: *mut u8,
    bookkeeping_len: usize,
    max_entries: usize,
    max_bytes: usize,
    write: tpack_write_fn,
    user: *mut c_void,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let slot = storage::<_, Inner>(out_storage)?;
        let write = write.ok_or(Failure::Code(tpack_result::TPACK_RESULT_NULL_ARGUMENT))?;
        // SAFETY: the caller's contract for the block.
        let books = unsafe { lend_bookkeeping(bookkeeping, bookkeeping_len, max_entries, max_bytes) }?;
        let sink = Callback { write, seek: None, user };
        // SAFETY: checked by `storage`; writable by the caller's contract.
        unsafe { fill(slot, Inner::OnePass(StreamWriter::new(sink, books))) };
        Ok(())
    })
}

/// Fills `out_storage` with a seekable writer that sends the container to `write` and back-patches its prefix
/// through `seek` (both called with `user`). The container begins where the sink stands. Otherwise as
/// `tpack_writer_init`.
///
/// # Errors
/// As `tpack_writer_init`; `seek` must not be NULL either.
///
/// # Safety
/// As `tpack_writer_init`, and `seek` must be callable with `user` until the writer is finished.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_init_seekable(
    out_storage: *mut tpack_writer,
    bookkeeping: *mut u8,
    bookkeeping_len: usize,
    max_entries: usize,
    max_bytes: usize,
    write: tpack_write_fn,
    seek: tpack_seek_fn,
    user: *mut c_void,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let slot = storage::<_, Inner>(out_storage)?;
        let null = Failure::Code(tpack_result::TPACK_RESULT_NULL_ARGUMENT);
        let write = write.ok_or(null)?;
        let seek = seek.ok_or(null)?;
        // SAFETY: the caller's contract for the block.
        let books = unsafe { lend_bookkeeping(bookkeeping, bookkeeping_len, max_entries, max_bytes) }?;
        let sink = Callback { write, seek: Some(seek), user };
        // SAFETY: checked by `storage`; writable by the caller's contract.
        unsafe { fill(slot, Inner::Seekable(SeekWriter::new(sink, books))) };
        Ok(())
    })
}

/// The writer in `w`, checked.
///
/// # Safety
/// As for [`handle_mut`].
unsafe fn writer_ref<'a>(w: *mut tpack_writer) -> Result<&'a mut Inner, Failure> {
    // SAFETY: the caller's contract for a `tpack_writer *`.
    unsafe { handle_mut(w) }
}

/// Runs `body` on the writer in `writer`, checked, under [`guard_with_error`].
///
/// # Safety
/// As for [`handle_mut`]; `out_error` is NULL or writable.
unsafe fn with_writer(
    writer: *mut tpack_writer,
    out_error: *mut tpack_error,
    body: impl FnOnce(&mut Inner) -> Outcome,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: this function's contract.
        let w = unsafe { writer_ref(writer) }?;
        body(w)
    })
}

/// Declares the next entry: payloads are laid out in declaration order. Nothing is written yet.
///
/// The name may be NUL-terminated (`decl->name.len` = `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` with the rule the entry would break and `tpack_error.entry` its index:
/// R17 (name length), R18 (a name that is not UTF-8), R22 (unknown dtype), R23 (a rank above 8, in `value`),
/// R25–R27 (shape), R29 (alignment), R32 (target); `TPACK_RESULT_WRITER_MISUSE` with `entry` for an
/// open-ended entry given to the one-pass writer (which needs every length before the first byte: use
/// `tpack_writer_init_seekable`) or one that is not `RAW`; `TPACK_RESULT_WRITER_FULL`,
/// `TPACK_RESULT_WRITER_MISUSE` (payloads have begun), `TPACK_RESULT_WRITER_POISONED`,
/// `TPACK_RESULT_BAD_ARGUMENT` (a length above `PTRDIFF_MAX`), a handle error. R18 and R23 are found before the
/// writer sees the entry and leave it as it was; any other error but a handle or argument error poisons it.
///
/// # Safety
/// `writer` must point to a filled `tpack_writer` used by no one else during the call; `decl` to a readable
/// `tpack_entry_decl` whose `name` and `dims` are readable; `out_error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_declare(
    writer: *mut tpack_writer,
    decl: *const tpack_entry_decl,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract: a readable `tpack_entry_decl`, whose fields it set.
        let decl = unsafe { read_arg(decl) }?;
        // SAFETY: the caller's contract.
        let w = unsafe { writer_ref(writer) }?;
        let entry = u32::try_from(either!(w, w => w.entry_count())).unwrap_or(u32::MAX);
        // SAFETY: the caller's contract, for the duration of the call.
        let name = unsafe { text(decl.name.data, decl.name.len) }?;
        let name = core::str::from_utf8(name).map_err(|_| Error::NameUtf8 { entry })?;
        if decl.rank > TPACK_MAX_RANK && !decl.open_ended {
            let rank = u8::try_from(decl.rank).unwrap_or(u8::MAX);
            return Err(Error::RankTooLarge { entry, rank }.into());
        }
        let dims: &[u64] = if decl.open_ended || (decl.rank == 0 && decl.dims.is_null()) {
            &[]
        } else {
            // SAFETY: `rank` (at most 8) readable `uint64_t`s at `dims`, by the caller's contract.
            unsafe { array_of(decl.dims, decl.rank) }?
        };
        let alignment = if decl.alignment == 0 { DEFAULT_ALIGNMENT } else { decl.alignment };
        let target = decl.has_target.then_some(decl.target);
        let decl = EntryDecl {
            name,
            dtype: Dtype::from_code(decl.dtype),
            shape: (!decl.open_ended).then_some(dims),
            alignment,
            target,
        };
        Ok(either!(w, w => w.declare(decl))?)
    })
}

/// Appends `len` bytes to the current entry's payload (the first entry not yet ended). The first call writes
/// the prefix.
///
/// # Errors
/// `TPACK_RESULT_WRITER_MISUSE` (more bytes than the entry's shape gives, or no entry left),
/// `TPACK_RESULT_INVALID_CONTAINER` (a duplicate name or key, found when the prefix is written),
/// `TPACK_RESULT_IO`, `TPACK_RESULT_WRITER_POISONED`, a handle error.
///
/// # Safety
/// `writer` must point to a filled `tpack_writer` used by no one else during the call; `bytes` to `len`
/// readable bytes (NULL when `len` is 0); `out_error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_write(
    writer: *mut tpack_writer,
    bytes: *const u8,
    len: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    let body = |w: &mut Inner| {
        // SAFETY: the caller's contract, for the duration of the call.
        let chunk = unsafe { input_of(bytes, len) }?;
        Ok(either!(w, w => w.write(chunk))?)
    };
    // SAFETY: the caller's contract.
    unsafe { with_writer(writer, out_error, body) }
}

/// Ends the current entry (also an empty one, which needs no `tpack_writer_write`).
///
/// # Errors
/// `TPACK_RESULT_WRITER_MISUSE` (fewer bytes than its shape gives: `entry` and `value`, the length expected),
/// `TPACK_RESULT_INVALID_CONTAINER`, `TPACK_RESULT_IO`, `TPACK_RESULT_WRITER_POISONED`, a handle error.
///
/// # Safety
/// `writer` must point to a filled `tpack_writer` used by no one else during the call; `out_error` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_end_entry(
    writer: *mut tpack_writer,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { with_writer(writer, out_error, |w| Ok(either!(w, w => w.end_entry())?)) }
}

/// Writes the trailer and ends the container; the seekable writer then back-patches the prefix and leaves
/// the sink at the container's end. On success the storage then holds the container's length, which
/// `tpack_writer_length` gives; on failure it is emptied. Either way the writer is done: reuse the storage
/// (and the bookkeeping block) only after another init.
///
/// # Errors
/// `TPACK_RESULT_WRITER_MISUSE` (declared entries not all written), `TPACK_RESULT_INVALID_CONTAINER` (a
/// duplicate name or key, or an open-ended entry whose target overflows, found at the end by the seekable
/// writer), `TPACK_RESULT_IO`,
/// `TPACK_RESULT_WRITER_POISONED`, a handle error.
///
/// # Safety
/// `writer` must point to a filled `tpack_writer` used by no one else during the call; `out_error` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_finish(
    writer: *mut tpack_writer,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract: filled, writable, exclusive.
        let w = unsafe { take::<_, Inner>(writer) }?;
        let (_, length) = either!(w, w => w.finish_with_len())?;
        // `take` checked the storage (not NULL, aligned, a writer's), which the finished length fits.
        let slot = storage::<_, Finished>(writer)?;
        // SAFETY: checked by `storage`; writable and exclusive by the caller's contract.
        unsafe { fill(slot, Finished { length }) };
        Ok(())
    })
}

/// What a writer's storage holds once `tpack_writer_finish` succeeded: the container's length.
struct Finished {
    length: u64,
}

impl Handle for Finished {
    const TAG: u64 = u64::from_le_bytes(*b"tpk:done");
}

const _: () = {
    assert!(size_of::<Stored<Finished>>() <= TPACK_WRITER_SIZE);
    assert!(align_of::<Stored<Finished>>() <= TPACK_WRITER_ALIGN);
};

/// Writes the length in bytes of the container a writer wrote, once `tpack_writer_finish` succeeded: what
/// to pass to `tpack_container_parse` for a container written to memory, or to truncate a file to.
///
/// # Errors
/// `TPACK_RESULT_WRITER_MISUSE` for a writer not finished yet (`tpack_writer_position` says how far it got),
/// `TPACK_RESULT_UNINITIALIZED_STORAGE` for storage that holds neither (a finish that failed empties it),
/// `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_MISALIGNED_STORAGE`.
///
/// # Safety
/// `writer` must point to a readable `tpack_writer`, `out_len` to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_length(writer: *const tpack_writer, out_len: *mut u64) -> tpack_result {
    guard(|| {
        let dst = out(out_len)?;
        // SAFETY: the caller's contract.
        let length = match unsafe { handle::<_, Finished>(writer) } {
            Ok(finished) => finished.length,
            // SAFETY: the caller's contract.
            Err(e) => match unsafe { handle::<_, Inner>(writer) } {
                Ok(_) => return Err(Failure::Code(tpack_result::TPACK_RESULT_WRITER_MISUSE)),
                Err(_) => return Err(e),
            },
        };
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, length) };
        Ok(())
    })
}

/// Writes how many bytes of the container the writer has sent so far.
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `writer` must point to a filled `tpack_writer`, `out_position` to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_position(
    writer: *const tpack_writer,
    out_position: *mut u64,
) -> tpack_result {
    guard(|| {
        let dst = out(out_position)?;
        // SAFETY: the caller's contract.
        let w = unsafe { handle::<_, Inner>(writer) }?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, either!(w, w => w.position())) };
        Ok(())
    })
}
