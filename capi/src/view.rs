//! What a parsed container and a decoder's prefix both show — entries by position and by name, metadata
//! records by key and by position — read once for both: the `tpack_container_*` and `tpack_metadata_*`
//! functions and their `tpack_decoder_prefix_*` twins differ only in where the [`View`] comes from.

use core::ffi::c_char;

use tpack::{MetaValue, Metadata};

use crate::boundary::{fill, out, put, storage, text, tpack_str};
use crate::error::{tpack_result, Failure};

/// A container's table and metadata, parsed (`Container`, in `container.rs`) or received so far (`Prefix`,
/// in `decoder.rs`). The C types come in as parameters, so that this module depends on neither.
pub(crate) trait View {
    /// An entry as C reads it (`tpack_entry`).
    type Entry;
    /// The number of entries.
    fn entry_count(&self) -> usize;
    /// The entry at `position` in table order.
    fn entry(&self, position: usize) -> Option<Self::Entry>;
    /// The entry called `name`.
    fn find(&self, name: &str) -> Option<Self::Entry>;
    /// The metadata records.
    fn metadata(&self) -> Metadata<'static>;
}

/// Caller storage that holds a metadata value handle (`tpack_meta_value`).
///
/// # Safety
/// Implemented only by a storage type that its module asserts at compile time to be at least as large and as
/// aligned as a `Stored<MetaValue<'static>>`, which [`metadata_get`] and [`metadata_at`] write into it.
pub(crate) unsafe trait MetaStorage {}

fn not_found() -> Failure {
    Failure::Code(tpack_result::TPACK_RESULT_NOT_FOUND)
}

/// `name` (`len` bytes at `data`) as a `&str`: one that is not UTF-8 names nothing, so it is not found.
///
/// # Safety
/// As for [`text`].
unsafe fn name_arg<'a>(data: *const c_char, len: usize) -> Result<&'a str, Failure> {
    // SAFETY: this function's contract.
    let bytes = unsafe { text(data, len) }?;
    // The core's validator, not `core::str::from_utf8`: a firmware that finds entries by name then links no
    // second one (with its 256-byte table).
    if !tpack::utf8::is_valid(bytes) {
        return Err(not_found());
    }
    // SAFETY: valid UTF-8, checked above.
    Ok(unsafe { core::str::from_utf8_unchecked(bytes) })
}

/// Writes what `count` gives of the view to `out_count`.
///
/// # Safety
/// `out_count` is NULL or points to a writable `size_t`.
pub(crate) unsafe fn count<V: View>(
    view: impl FnOnce() -> Result<V, Failure>,
    count: impl FnOnce(&V) -> usize,
    out_count: *mut usize,
) -> Result<(), Failure> {
    let dst = out(out_count)?;
    let n = count(&view()?);
    // SAFETY: checked by `out`; writable by this function's contract.
    unsafe { put(dst, n) };
    Ok(())
}

/// Writes the view's entry at `index` to `out_entry`.
///
/// # Safety
/// `out_entry` is NULL or points to a writable `tpack_entry`.
pub(crate) unsafe fn entry_at<V: View>(
    view: impl FnOnce() -> Result<V, Failure>,
    index: usize,
    out_entry: *mut V::Entry,
) -> Result<(), Failure> {
    let dst = out(out_entry)?;
    let entry = view()?.entry(index).ok_or_else(not_found)?;
    // SAFETY: checked by `out`; writable by this function's contract.
    unsafe { put(dst, entry) };
    Ok(())
}

/// Writes the view's entry called `name` (`name_len` bytes) to `out_entry`.
///
/// # Safety
/// `name` points to `name_len` readable bytes; `out_entry` is NULL or points to a writable `tpack_entry`.
pub(crate) unsafe fn find<V: View>(
    view: impl FnOnce() -> Result<V, Failure>,
    name: *const c_char,
    name_len: usize,
    out_entry: *mut V::Entry,
) -> Result<(), Failure> {
    let dst = out(out_entry)?;
    let view = view()?;
    // SAFETY: this function's contract.
    let name = unsafe { name_arg(name, name_len) }?;
    let entry = view.find(name).ok_or_else(not_found)?;
    // SAFETY: checked by `out`; writable by this function's contract.
    unsafe { put(dst, entry) };
    Ok(())
}

/// Fills `out_value` with the view's metadata value under `key` (`key_len` bytes).
///
/// # Safety
/// `key` points to `key_len` readable bytes; `out_value` is NULL or points to a writable `tpack_meta_value`.
pub(crate) unsafe fn metadata_get<V: View, S: MetaStorage>(
    view: impl FnOnce() -> Result<V, Failure>,
    key: *const c_char,
    key_len: usize,
    out_value: *mut S,
) -> Result<(), Failure> {
    let slot = storage::<S, MetaValue<'static>>(out_value)?;
    let view = view()?;
    // SAFETY: this function's contract.
    let key = unsafe { name_arg(key, key_len) }?;
    let value = view.metadata().get(key).ok_or_else(not_found)?;
    // SAFETY: checked by `storage`; writable by this function's contract.
    unsafe { fill(slot, value) };
    Ok(())
}

/// The view's metadata record at `index` in key order: its key to `out_key`, its value to `out_value`.
///
/// # Safety
/// `out_key` is NULL or points to a writable `tpack_str`, `out_value` to a writable `tpack_meta_value`.
pub(crate) unsafe fn metadata_at<V: View, S: MetaStorage>(
    view: impl FnOnce() -> Result<V, Failure>,
    index: usize,
    out_key: *mut tpack_str,
    out_value: *mut S,
) -> Result<(), Failure> {
    let key_dst = out(out_key)?;
    let slot = storage::<S, MetaValue<'static>>(out_value)?;
    let (key, value) = view()?.metadata().at(index).ok_or_else(not_found)?;
    // SAFETY: checked by `out` and `storage`; writable by this function's contract.
    unsafe {
        put(key_dst, tpack_str::new(key));
        fill(slot, value);
    }
    Ok(())
}
