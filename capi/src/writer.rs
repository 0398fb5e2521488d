//! The one-pass writer: a [`tpack::StreamWriter`] in caller storage ([`tpack_writer`]), writing through a C
//! callback, with bookkeeping of a fixed capacity inside the storage (first cut; see `capi/NOTES.md`).
//!
//! Protocol, as the core's: declare every entry ([`tpack_entry_decl`]) and metadata value, then write each
//! entry's payload in declaration order (`tpack_writer_write`, any number of chunks, then
//! `tpack_writer_end_entry`), then `tpack_writer_finish`. The whole prefix goes out before the first payload
//! byte, so every length is declared up front: a pipe, a UART or a socket can be the sink.

use core::ffi::{c_char, c_void};
use core::mem::{align_of, size_of};

use tpack::embedded_io::{self, ErrorKind, ErrorType};
use tpack::format::DEFAULT_ALIGNMENT;
use tpack::zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use tpack::zerocopy::{FromBytes, TryFromBytes};
use tpack::{Buffer, Dtype, EntryDecl, FixedBookkeeping, MetaType, MetaValue, StreamWriter, WriteError};

use crate::boundary::{
    fill, guard, guard_with_error, handle, handle_mut, out, put, slice_of, storage, take, text,
};
use crate::boundary::{tpack_str, Handle, Stored};
use crate::container::TPACK_MAX_RANK;
use crate::error::{tpack_error, tpack_result, Failure};

/// Entries (and, separately, metadata records) a writer can declare.
pub const TPACK_WRITER_MAX_ENTRIES: usize = 128;
/// Bytes of names (and, separately, of encoded metadata: 15 bytes per record plus its key and value) a writer
/// can declare.
pub const TPACK_WRITER_MAX_BYTES: usize = 8192;
/// Bytes of caller storage a writer handle needs (on every target).
pub const TPACK_WRITER_SIZE: usize = 40960;
/// Alignment, in bytes, of a writer handle's storage.
pub const TPACK_WRITER_ALIGN: usize = 8;

/// The sink: called with the container's bytes in order. It must write all `len` bytes and return 0, or
/// return any other number to fail (the writer then stops, and `tpack_error.value` holds the number). It must
/// not unwind or `longjmp` out. `user` is the pointer given to `tpack_writer_init`.
pub type tpack_write_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, bytes: *const u8, len: usize) -> i32>;

/// The C callback as an `embedded-io` sink.
struct Callback {
    write: unsafe extern "C" fn(*mut c_void, *const u8, usize) -> i32,
    user: *mut c_void,
}

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

type Inner = StreamWriter<Callback, FixedBookkeeping<TPACK_WRITER_MAX_ENTRIES, TPACK_WRITER_MAX_BYTES>>;

/// Caller storage for a one-pass writer, filled by `tpack_writer_init` and emptied by `tpack_writer_finish`.
/// Opaque; about 32 KiB, so a static or a heap block rather than a small stack. Used by one thread at a time,
/// never copied; owns nothing.
#[repr(C)]
pub struct tpack_writer {
    // `MaybeUninit`: the bytes the handle does not use, and the padding inside it, are uninitialized, and a
    // copy of the storage (by value, in Rust) must not claim they are integers.
    opaque: [core::mem::MaybeUninit<u64>; 5120],
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
    /// The name: UTF-8, 1…1024 bytes, unique in the container (not NUL-terminated).
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
}

fn bad_argument() -> Failure {
    Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT)
}

impl From<WriteError<CallbackError>> for Failure {
    fn from(e: WriteError<CallbackError>) -> Self {
        let misuse = |entry: Option<u32>, value: Option<u64>| Failure::Writer {
            result: tpack_result::TPACK_RESULT_WRITER_MISUSE,
            entry,
            value,
        };
        match e {
            WriteError::Io(CallbackError(code)) => Failure::Writer {
                result: tpack_result::TPACK_RESULT_IO,
                entry: None,
                // The callback's number, sign-extended, as `value` holds it.
                value: Some(u64::from_le_bytes(i64::from(code).to_le_bytes())),
            },
            WriteError::Format(e) => Failure::Invalid(e),
            WriteError::BufferFull(buffer) => Failure::Writer {
                result: tpack_result::TPACK_RESULT_WRITER_FULL,
                entry: None,
                value: Some(match buffer {
                    Buffer::Entries => 0,
                    Buffer::Names => 1,
                    Buffer::MetadataRecords => 2,
                    Buffer::MetadataBytes => 3,
                    _ => 4,
                }),
            },
            WriteError::PayloadTooLong { entry, expected } => misuse(Some(entry), Some(expected)),
            WriteError::PayloadTooShort { entry, expected, .. } => misuse(Some(entry), Some(expected)),
            WriteError::UnknownLength { entry } | WriteError::UnsizedNotBytes { entry } => {
                misuse(Some(entry), None)
            }
            WriteError::EntriesMissing { written, declared } => {
                misuse(Some(written), Some(u64::from(declared)))
            }
            WriteError::Poisoned => Failure::Code(tpack_result::TPACK_RESULT_WRITER_POISONED),
            _ => misuse(None, None),
        }
    }
}

/// Fills `out_storage` with a one-pass writer that sends the container to `write` (called with `user`).
///
/// # Errors
/// `TPACK_RESULT_NULL_ARGUMENT` (`write` is NULL; `user` may be NULL), `TPACK_RESULT_MISALIGNED_STORAGE`.
///
/// # Safety
/// `out_storage` must point to a writable `tpack_writer`; `write` must be callable with `user` until the
/// writer is finished.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_init(
    out_storage: *mut tpack_writer,
    write: tpack_write_fn,
    user: *mut c_void,
) -> tpack_result {
    guard(|| {
        let slot = storage::<_, Inner>(out_storage)?;
        let write = write.ok_or(Failure::Code(tpack_result::TPACK_RESULT_NULL_ARGUMENT))?;
        // SAFETY: checked by `storage`; writable by the caller's contract. (The writer passes through this
        // stack frame on its way to the storage: mind the stack on a microcontroller.)
        unsafe { fill(slot, StreamWriter::new(Callback { write, user }, FixedBookkeeping)) };
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

/// Declares the next entry: payloads are laid out in declaration order. Nothing is written yet.
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` with the rule the entry would break (name length, unknown dtype, rank,
/// shape, alignment, target), `TPACK_RESULT_BAD_ARGUMENT` (a name that is not UTF-8, a rank above 8),
/// `TPACK_RESULT_WRITER_FULL`, `TPACK_RESULT_WRITER_MISUSE` (payloads have begun),
/// `TPACK_RESULT_WRITER_POISONED`, a handle error. Any error but a handle or argument error poisons the
/// writer.
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
        let decl = out(decl.cast_mut())?;
        // SAFETY: not NULL and aligned (`out`), readable by the caller's contract; plain data.
        let decl = unsafe { decl.as_ptr().read() };
        // SAFETY: the caller's contract.
        let w = unsafe { writer_ref(writer) }?;
        // SAFETY: the caller's contract, for the duration of the call.
        let name = unsafe { text(decl.name.data, decl.name.len) }?;
        let name = core::str::from_utf8(name).map_err(|_| bad_argument())?;
        if decl.rank > TPACK_MAX_RANK {
            return Err(bad_argument());
        }
        let dims: &[u64] = if decl.rank == 0 && decl.dims.is_null() {
            &[]
        } else {
            let p = out(decl.dims.cast_mut())?;
            // SAFETY: not NULL and aligned (`out`); `rank` (at most 8) readable `uint64_t`s by the caller's
            // contract.
            unsafe { core::slice::from_raw_parts(p.as_ptr(), decl.rank) }
        };
        let alignment = if decl.alignment == 0 { DEFAULT_ALIGNMENT } else { decl.alignment };
        let target = decl.has_target.then_some(decl.target);
        w.declare(EntryDecl {
            name,
            dtype: Dtype::from_code(decl.dtype),
            shape: Some(dims),
            alignment,
            target,
        })?;
        Ok(())
    })
}

/// Declares a metadata value from its type code and its bytes as the container stores them: the scalars
/// `u8` … `f32` (types 11–17) and the arrays `u64[]`, `i64[]`, `f64[]` (7–9) and `u8[]` … `bool[]` (18–25)
/// as little-endian bytes; `string` (5) as UTF-8 and `bytes` (6) as they are. `u64`, `i64`, `f64` and `bool`
/// (1–4) are 8-, 8-, 8- and 1-byte little-endian. `string[]` and `array[]` are not supported yet.
///
/// # Errors
/// `TPACK_RESULT_BAD_ARGUMENT` (a key or string that is not UTF-8, a length that is no whole number of
/// elements, a `bool` other than 0 or 1, a type not supported), `TPACK_RESULT_INVALID_CONTAINER` (an empty or
/// over-long key: R42), `TPACK_RESULT_WRITER_FULL`, `TPACK_RESULT_WRITER_MISUSE` (payloads have begun),
/// `TPACK_RESULT_WRITER_POISONED`, a handle error. Duplicate keys are reported when payloads begin.
///
/// # Safety
/// `writer` must point to a filled `tpack_writer` used by no one else during the call; `key` to `key_len`
/// readable bytes, `value` to `value_len`; `out_error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value_type: u8,
    value: *const u8,
    value_len: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract.
        let w = unsafe { writer_ref(writer) }?;
        // SAFETY: the caller's contract, for the duration of the call.
        let key = unsafe { text(key, key_len) }?;
        let key = core::str::from_utf8(key).map_err(|_| bad_argument())?;
        // SAFETY: the caller's contract, for the duration of the call.
        let bytes = unsafe { slice_of(value, value_len) }?;
        let value = meta_value(MetaType::from_code(value_type), bytes).ok_or_else(bad_argument)?;
        w.metadata(key, value)?;
        Ok(())
    })
}

/// The value of type `t` whose stored bytes are `b`; `None` when they do not fit the type.
fn meta_value(t: MetaType, b: &[u8]) -> Option<MetaValue<'_>> {
    let word8 = || <[u8; 8]>::try_from(b).ok();
    Some(match t {
        MetaType::U64 => MetaValue::U64(u64::from_le_bytes(word8()?)),
        MetaType::I64 => MetaValue::I64(i64::from_le_bytes(word8()?)),
        MetaType::F64 => MetaValue::F64(f64::from_le_bytes(word8()?)),
        MetaType::BOOL => MetaValue::Bool(match b {
            [0] => false,
            [1] => true,
            _ => return None,
        }),
        MetaType::STRING => MetaValue::String(core::str::from_utf8(b).ok()?),
        MetaType::BYTES => MetaValue::Bytes(b),
        MetaType::U64_ARRAY => MetaValue::U64Array(<[U64]>::ref_from_bytes(b).ok()?),
        MetaType::I64_ARRAY => MetaValue::I64Array(<[I64]>::ref_from_bytes(b).ok()?),
        MetaType::F64_ARRAY => MetaValue::F64Array(<[F64]>::ref_from_bytes(b).ok()?),
        MetaType::U8 => MetaValue::U8(u8::from_le_bytes(b.try_into().ok()?)),
        MetaType::I8 => MetaValue::I8(i8::from_le_bytes(b.try_into().ok()?)),
        MetaType::U16 => MetaValue::U16(u16::from_le_bytes(b.try_into().ok()?)),
        MetaType::I16 => MetaValue::I16(i16::from_le_bytes(b.try_into().ok()?)),
        MetaType::U32 => MetaValue::U32(u32::from_le_bytes(b.try_into().ok()?)),
        MetaType::I32 => MetaValue::I32(i32::from_le_bytes(b.try_into().ok()?)),
        MetaType::F32 => MetaValue::F32(f32::from_le_bytes(b.try_into().ok()?)),
        MetaType::U8_ARRAY => MetaValue::U8Array(b),
        MetaType::I8_ARRAY => MetaValue::I8Array(<[i8]>::ref_from_bytes(b).ok()?),
        MetaType::U16_ARRAY => MetaValue::U16Array(<[U16]>::ref_from_bytes(b).ok()?),
        MetaType::I16_ARRAY => MetaValue::I16Array(<[I16]>::ref_from_bytes(b).ok()?),
        MetaType::U32_ARRAY => MetaValue::U32Array(<[U32]>::ref_from_bytes(b).ok()?),
        MetaType::I32_ARRAY => MetaValue::I32Array(<[I32]>::ref_from_bytes(b).ok()?),
        MetaType::F32_ARRAY => MetaValue::F32Array(<[F32]>::ref_from_bytes(b).ok()?),
        MetaType::BOOL_ARRAY => MetaValue::BoolArray(<[bool]>::try_ref_from_bytes(b).ok()?),
        _ => return None,
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
/// readable bytes; `out_error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_write(
    writer: *mut tpack_writer,
    bytes: *const u8,
    len: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract.
        let w = unsafe { writer_ref(writer) }?;
        // SAFETY: the caller's contract, for the duration of the call.
        let chunk = unsafe { slice_of(bytes, len) }?;
        w.write(chunk)?;
        Ok(())
    })
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
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract.
        let w = unsafe { writer_ref(writer) }?;
        w.end_entry()?;
        Ok(())
    })
}

/// Writes the trailer and ends the container. The storage is emptied, success or not: reuse it only after
/// another `tpack_writer_init`.
///
/// # Errors
/// `TPACK_RESULT_WRITER_MISUSE` (declared entries not all written), `TPACK_RESULT_IO`,
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
        w.finish()?;
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
        unsafe { put(dst, w.position()) };
        Ok(())
    })
}
