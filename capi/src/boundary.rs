//! The boundary with C: the panic guard, NULL and alignment checks, out-parameters, and handles kept in
//! caller storage. Every read or write through a caller's pointer is one of this module's functions; the
//! other `unsafe` blocks of the crate call these (passing the caller's contract on) or call the caller's own
//! callbacks (`writer.rs`, `decoder.rs`).

use core::ffi::c_char;
use core::mem::{size_of, MaybeUninit};
use core::ptr::NonNull;

use crate::error::{tpack_error, tpack_result, Failure};

/// A UTF-8 string borrowed from a container: `len` bytes at `data`, **not** NUL-terminated.
///
/// Valid as long as the container's input bytes are (see the rules at the top of the header).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_str {
    /// The first byte. Never NULL in a string this library writes, an empty one included (it points into
    /// the container or the decoder's buffer), with one exception: an absent subject in
    /// `tpack_signed_attributes` (NULL, `len` 0). A string passed in with a NULL `data` is
    /// `TPACK_RESULT_NULL_ARGUMENT`, an empty one too, except where a function's doc says that NULL with `len`
    /// 0 is the empty string.
    pub data: *const c_char,
    /// The number of bytes.
    pub len: usize,
}

impl tpack_str {
    pub(crate) fn new(s: &str) -> Self {
        Self::of_bytes(s.as_bytes())
    }

    /// UTF-8 bytes the core validated (a name of a parsed container).
    pub(crate) fn of_bytes(s: &[u8]) -> Self {
        tpack_str { data: s.as_ptr().cast(), len: s.len() }
    }
}

/// Bytes borrowed from a container or a chunk: `len` bytes at `data`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_bytes {
    /// The first byte. Never NULL in bytes this library writes: empty bytes (an event without bytes, the
    /// payload of a decoder's prefix entry, which has not arrived yet, an absent part of
    /// `tpack_signed_attributes`) point to a static byte, with `len` 0, so that `memcpy(dst, b.data, b.len)`
    /// is always defined.
    pub data: *const u8,
    /// The number of bytes.
    pub len: usize,
}

/// What empty [`tpack_bytes`] point to: a byte of the library's own, never read.
static NO_BYTES: [u8; 1] = [0];

impl tpack_bytes {
    /// The bytes of `b`: never NULL (a Rust slice's pointer never is), and for an empty part of a container
    /// a pointer into it.
    pub(crate) fn new(b: &[u8]) -> Self {
        tpack_bytes { data: b.as_ptr(), len: b.len() }
    }

    /// Empty bytes that are part of nothing: at the static byte.
    pub(crate) fn empty() -> Self {
        tpack_bytes { data: NO_BYTES.as_ptr(), len: 0 }
    }
}

/// What a call gives when it fails: a result code, and for an invalid container the core's error.
pub(crate) type Outcome = Result<(), Failure>;

/// Runs `body`, catching a panic (feature `std`): the code of an entry point without `out_error`.
pub(crate) fn guard(body: impl FnOnce() -> Outcome) -> tpack_result {
    match catch(body) {
        Some(Ok(())) => tpack_result::TPACK_RESULT_OK,
        Some(Err(failure)) => failure.result(),
        None => tpack_result::TPACK_RESULT_PANIC,
    }
}

/// Runs `body` like [`guard`], and on failure writes the details to `out_error` when it is not NULL.
pub(crate) fn guard_with_error(out_error: *mut tpack_error, body: impl FnOnce() -> Outcome) -> tpack_result {
    let failure = match catch(body) {
        Some(Ok(())) => return tpack_result::TPACK_RESULT_OK,
        Some(Err(failure)) => failure,
        None => Failure::Code(tpack_result::TPACK_RESULT_PANIC),
    };
    let result = failure.result();
    if let Some(out) = NonNull::new(out_error).filter(|p| p.as_ptr().is_aligned()) {
        // SAFETY: not NULL and aligned; the caller's contract makes a non-NULL `out_error` valid for writes.
        unsafe { out.as_ptr().write(failure.describe()) };
    }
    result
}

/// Runs `body` for an entry point that returns a value rather than a code: `fallback` after a panic.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch(body).unwrap_or(fallback)
}

#[cfg(feature = "std")]
fn catch<T>(body: impl FnOnce() -> T) -> Option<T> {
    // Unwind safety: a panic abandons the call before any out-parameter or storage is written, so no state
    // the caller can see is left half-updated.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).ok()
}

#[cfg(not(feature = "std"))]
fn catch<T>(body: impl FnOnce() -> T) -> Option<T> {
    Some(body())
}

/// An out-parameter, checked: not NULL, aligned for `T`. Write it with [`put`] once the call has succeeded.
pub(crate) fn out<T>(p: *mut T) -> Result<NonNull<T>, Failure> {
    let p = NonNull::new(p).ok_or(Failure::Code(tpack_result::TPACK_RESULT_NULL_ARGUMENT))?;
    if !p.as_ptr().is_aligned() {
        return Err(Failure::Code(tpack_result::TPACK_RESULT_MISALIGNED_STORAGE));
    }
    Ok(p)
}

/// Writes an out-parameter that [`out`] checked.
///
/// # Safety
/// `p` must be valid for writes of a `T` (the caller's contract for out-parameters).
pub(crate) unsafe fn put<T>(p: NonNull<T>, value: T) {
    // SAFETY: not NULL and aligned (checked by `out`), valid for writes by this function's contract. `T` is a
    // plain C type without drop glue, so overwriting whatever was there leaks nothing.
    unsafe { p.as_ptr().write(value) }
}

/// `len` bytes at `data`, borrowed for as long as the caller promises (`'a`).
///
/// # Safety
/// A non-NULL `data` must point to `len` readable bytes that stay valid and unchanged for `'a`.
pub(crate) unsafe fn slice_of<'a>(data: *const u8, len: usize) -> Result<&'a [u8], Failure> {
    // SAFETY: this function's contract.
    unsafe { array_of(data, len) }
}

/// `len` values of `T` at `data`, checked (not NULL, aligned, at most `isize::MAX` bytes) and borrowed for as
/// long as the caller promises (`'a`).
///
/// # Safety
/// A non-NULL, aligned `data` must point to `len` initialized `T`s that stay valid and unchanged for `'a`.
pub(crate) unsafe fn array_of<'a, T>(data: *const T, len: usize) -> Result<&'a [T], Failure> {
    let data = out(data.cast_mut())?;
    let fits = len.checked_mul(size_of::<T>()).is_some_and(|n| isize::try_from(n).is_ok());
    if !fits {
        return Err(Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT));
    }
    // SAFETY: not NULL, aligned, at most `isize::MAX` bytes (checked); initialized, readable and unchanged
    // for `'a` by this function's contract.
    Ok(unsafe { core::slice::from_raw_parts(data.as_ptr(), len) })
}

/// A plain-data argument passed by pointer, checked (not NULL, aligned) and read by value.
///
/// # Safety
/// A non-NULL, aligned `p` must point to a readable, initialized `T` (for a C struct, one whose fields the
/// caller set: a C `bool` holds 0 or 1).
pub(crate) unsafe fn read_arg<T: Copy>(p: *const T) -> Result<T, Failure> {
    let p = out(p.cast_mut())?;
    // SAFETY: not NULL and aligned (checked); readable and initialized by this function's contract.
    Ok(unsafe { p.as_ptr().read() })
}

/// The caller buffer that [`buffer`] checked, zeroed and then lent for `'a`: zeroed because it may be
/// uninitialized (a `malloc` block, a stack array), which a `&mut [u8]` must not be.
///
/// # Safety
/// `data` and `len` come from [`buffer`]; the `len` bytes at `data` are writable, and no one else touches
/// them for `'a`.
pub(crate) unsafe fn zeroed<'a>(data: NonNull<u8>, len: usize) -> &'a mut [u8] {
    // SAFETY: writable for `len` bytes, at most `isize::MAX` (checked by `buffer`), by this function's
    // contract.
    unsafe { core::ptr::write_bytes(data.as_ptr(), 0, len) };
    // SAFETY: initialized just above; exclusive for `'a` by this function's contract.
    unsafe { core::slice::from_raw_parts_mut(data.as_ptr(), len) }
}

/// The caller buffer that [`buffer`] checked, lent for `'a` as it is: for a buffer whose contents the caller
/// keeps (a decoder's buffer, resumed).
///
/// # Safety
/// As for [`zeroed`], and the `len` bytes are initialized.
pub(crate) unsafe fn kept<'a>(data: NonNull<u8>, len: usize) -> &'a mut [u8] {
    // SAFETY: not NULL, at most `isize::MAX` bytes (checked by `buffer`); initialized, writable and exclusive
    // for `'a` by this function's contract.
    unsafe { core::slice::from_raw_parts_mut(data.as_ptr(), len) }
}

/// A caller buffer of `len` bytes at `data`, checked (not NULL, `len` at most `isize::MAX`) without reading it:
/// the caller then makes the slice it needs.
pub(crate) fn buffer(data: *mut u8, len: usize) -> Result<NonNull<u8>, Failure> {
    let data = NonNull::new(data).ok_or(Failure::Code(tpack_result::TPACK_RESULT_NULL_ARGUMENT))?;
    if isize::try_from(len).is_err() {
        return Err(Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT));
    }
    Ok(data)
}

/// The length that says "NUL-terminated": a name, key or string argument passed with this length is read up
/// to its first NUL byte (the NUL not included). `SIZE_MAX` in C (`#define`d in the header, since cbindgen
/// does not write `usize::MAX`); no real length can be it, since lengths above `PTRDIFF_MAX` are refused.
pub const TPACK_NUL_TERMINATED: usize = usize::MAX;

/// A string argument as pointer + length, as bytes: `len` bytes at `data`, or, when `len` is
/// [`TPACK_NUL_TERMINATED`], the bytes before `data`'s first NUL. A name or key need not be UTF-8 to be looked
/// up (it is then simply not found).
///
/// # Safety
/// As for [`slice_of`], for the duration of the call; with [`TPACK_NUL_TERMINATED`], a non-NULL `data` must
/// point to a NUL-terminated string.
pub(crate) unsafe fn text<'a>(data: *const c_char, len: usize) -> Result<&'a [u8], Failure> {
    if len == TPACK_NUL_TERMINATED {
        let data = out(data.cast_mut())?;
        // SAFETY: not NULL (checked); NUL-terminated, readable and unchanged for the call by this function's
        // contract.
        return Ok(unsafe { core::ffi::CStr::from_ptr(data.as_ptr()) }.to_bytes());
    }
    // SAFETY: the same contract, passed on.
    unsafe { slice_of(data.cast(), len) }
}

/// Bytes of an input value as pointer + length where the empty value means something (a chunk, a `bytes`
/// value, an array): like [`slice_of`], but NULL with `len` 0 is the empty slice.
///
/// # Safety
/// As for [`slice_of`].
pub(crate) unsafe fn input_of<'a, T>(data: *const T, len: usize) -> Result<&'a [T], Failure> {
    if data.is_null() && len == 0 {
        return Ok(&[]);
    }
    // SAFETY: this function's contract.
    unsafe { array_of(data, len) }
}

/// An output array of `len` values of `T` at `data`, checked (not NULL unless `len` is 0, aligned, at most
/// `isize::MAX` bytes) and lent for `'a` as uninitialized slots, which the caller may not have initialized.
///
/// # Safety
/// A non-NULL, aligned `data` must point to `len` writable `T`s that no one else touches for `'a`.
pub(crate) unsafe fn output_of<'a, T>(data: *mut T, len: usize) -> Result<&'a mut [MaybeUninit<T>], Failure> {
    if data.is_null() && len == 0 {
        return Ok(&mut []);
    }
    let data = out(data)?;
    let fits = len.checked_mul(size_of::<T>()).is_some_and(|n| isize::try_from(n).is_ok());
    if !fits {
        return Err(Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT));
    }
    // SAFETY: not NULL, aligned, at most `isize::MAX` bytes (checked); writable and exclusive for `'a` by this
    // function's contract; `MaybeUninit` asks nothing of the contents.
    Ok(unsafe { core::slice::from_raw_parts_mut(data.as_ptr().cast::<MaybeUninit<T>>(), len) })
}

/// A string value as pointer + length where the empty string means something (a metadata `string`): like
/// [`text`], but NULL with `len` 0 is the empty string.
///
/// # Safety
/// As for [`text`].
pub(crate) unsafe fn text_value<'a>(data: *const c_char, len: usize) -> Result<&'a [u8], Failure> {
    if data.is_null() && len == 0 {
        return Ok(&[]);
    }
    // SAFETY: this function's contract.
    unsafe { text(data, len) }
}

/// A handle in caller storage: a tag saying which kind of handle a successful call wrote there, then the
/// value. The tag catches storage that was never filled (zeroed, or the wrong kind); it cannot catch every
/// garbage, which is why filling before use is part of the contract.
#[repr(C)]
pub(crate) struct Stored<T> {
    tag: u64,
    value: T,
}

/// The kinds of handle, as the tags [`Stored`] holds.
pub(crate) trait Handle: Sized {
    /// A value no zeroed or copied-from-elsewhere storage is likely to hold.
    const TAG: u64;
}

/// Caller storage `p` of C type `S`, checked for holding a `Stored<T>` before it is filled: not NULL, aligned.
/// The const assertions in the modules keep `S` at least as large and as aligned as `Stored<T>`.
pub(crate) fn storage<S, T: Handle>(p: *mut S) -> Result<NonNull<Stored<T>>, Failure> {
    out(p.cast::<Stored<T>>())
}

/// Fills storage that [`storage`] checked. The previous contents are overwritten without being dropped
/// (a handle owns nothing).
///
/// # Safety
/// `p` must be valid for writes of the storage type it was cast from.
pub(crate) unsafe fn fill<T: Handle>(p: NonNull<Stored<T>>, value: T) {
    // SAFETY: this function's contract, and `Stored<T>` fits the storage (the modules' const assertions).
    unsafe { put(p, Stored { tag: T::TAG, value }) }
}

/// The handle held by caller storage `p`, checked: not NULL, aligned, filled by a successful call.
///
/// # Safety
/// A non-NULL, aligned `p` must point to readable storage of its C type, which no one writes for `'a`.
pub(crate) unsafe fn handle<'a, S, T: Handle>(p: *const S) -> Result<&'a T, Failure> {
    let p = out(p.cast_mut().cast::<Stored<T>>())?;
    // SAFETY: readable by this function's contract; the tag is a plain `u64` at the start of `Stored<T>`
    // (`repr(C)`), and any bit pattern is a valid `u64`.
    let tag = unsafe { p.as_ptr().cast::<u64>().read() };
    if tag != T::TAG {
        return Err(Failure::Code(tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE));
    }
    // SAFETY: the tag says a successful call filled the storage with a `T`; no one writes it for `'a`.
    Ok(unsafe { &(*p.as_ptr()).value })
}

/// Like [`handle`], for a handle the call changes.
///
/// # Safety
/// As for [`handle`], and no one else reads or writes the storage for `'a`.
pub(crate) unsafe fn handle_mut<'a, S, T: Handle>(p: *mut S) -> Result<&'a mut T, Failure> {
    // SAFETY: this function's contract covers the read.
    let _ = unsafe { handle::<S, T>(p) }?;
    // SAFETY: checked just above (not NULL, aligned, filled); exclusive for `'a` by this function's contract.
    Ok(unsafe { &mut (*p.cast::<Stored<T>>()).value })
}

/// Moves the handle out of caller storage `p`, checked as [`handle_mut`] checks it, and marks the storage
/// empty: a later use of it is `TPACK_RESULT_UNINITIALIZED_STORAGE`.
///
/// # Safety
/// As for [`handle_mut`].
pub(crate) unsafe fn take<S, T: Handle>(p: *mut S) -> Result<T, Failure> {
    // SAFETY: this function's contract covers the check.
    let _ = unsafe { handle_mut::<S, T>(p) }?;
    let stored = p.cast::<Stored<T>>();
    // SAFETY: checked just above (not NULL, aligned, filled with a `T`), exclusive by this function's
    // contract. The value is moved out and the tag cleared, so the storage no longer claims to hold it.
    unsafe {
        let value = core::ptr::addr_of!((*stored).value).read();
        core::ptr::addr_of_mut!((*stored).tag).write(0);
        Ok(value)
    }
}

/// The place of the value in storage `p` that [`storage`] checked, not borrowed: for a handle whose parts
/// borrow one another (a signed decoder's policy borrows the keys beside it), which must be written and
/// reached field by field, never through a `&mut` to the whole.
pub(crate) fn value_place<T: Handle>(p: NonNull<Stored<T>>) -> *mut T {
    // SAFETY: `p` is not NULL and aligned (checked by `storage`); `addr_of_mut!` computes the field's address
    // without reading or borrowing anything.
    unsafe { core::ptr::addr_of_mut!((*p.as_ptr()).value) }
}

/// Tags storage `p` as holding a `T`, once its value has been written in place through [`value_place`].
///
/// # Safety
/// `p` must be valid for writes of the storage type it was cast from, and its value fully written.
pub(crate) unsafe fn tag<T: Handle>(p: NonNull<Stored<T>>) {
    // SAFETY: this function's contract; the tag is a plain `u64` field.
    unsafe { core::ptr::addr_of_mut!((*p.as_ptr()).tag).write(T::TAG) }
}

/// The place of the value held by caller storage `p`, checked (not NULL, aligned, tagged) like [`handle`], but
/// not borrowed: see [`value_place`].
///
/// # Safety
/// A non-NULL, aligned `p` must point to readable storage of its C type.
pub(crate) unsafe fn filled_place<S, T: Handle>(p: *const S) -> Result<*mut T, Failure> {
    let p = out(p.cast_mut().cast::<Stored<T>>())?;
    // SAFETY: readable by this function's contract; the tag is a plain `u64` at the start of `Stored<T>`
    // (`repr(C)`), and any bit pattern is a valid `u64`.
    let tag = unsafe { p.as_ptr().cast::<u64>().read() };
    if tag != T::TAG {
        return Err(Failure::Code(tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE));
    }
    Ok(value_place(p))
}
