//! The reader: a [`tpack::Container`] in caller storage ([`tpack_container`]), its verification, and its
//! entries ([`tpack_entry`]), by position or by name, with nested containers.

use core::ffi::c_char;
use core::mem::{align_of, size_of};

use tpack::format::MAX_RANK;
use tpack::{Container, Dtype, Entry, Metadata};

use crate::boundary::{
    fill, guard, guard_with_error, handle, out, put, slice_of, storage, tpack_bytes, tpack_str, Handle,
    Stored,
};
use crate::error::{tpack_error, tpack_result, Failure};
use crate::view::{self, View};

/// Bytes of caller storage a container handle needs (on every target: the header is the same for all; a
/// 32-bit target uses about half).
pub const TPACK_CONTAINER_SIZE: usize = 160;
/// Alignment, in bytes, of a container handle's storage.
pub const TPACK_CONTAINER_ALIGN: usize = 8;
/// Most dimensions an entry has (`tpack_entry.dims`).
pub const TPACK_MAX_RANK: usize = 8;

/// Caller storage for a parsed container: declare one (on the stack, statically, in a struct) and fill it
/// with `tpack_container_parse` or `tpack_container_nested`. Opaque: only this library reads the bytes.
///
/// The handle borrows the input bytes: they must stay valid and unchanged for as long as the handle is used.
/// It owns nothing, so there is nothing to free; it may be copied (`memcpy`, assignment) and shared between
/// threads for reading.
#[repr(C)]
pub struct tpack_container {
    // `MaybeUninit`: the bytes the handle does not use, and the padding inside it, are uninitialized, and a
    // copy of the storage (by value, in Rust) must not claim they are integers.
    opaque: [core::mem::MaybeUninit<u64>; 20],
}

const _: () = {
    assert!(size_of::<tpack_container>() == TPACK_CONTAINER_SIZE);
    assert!(align_of::<tpack_container>() == TPACK_CONTAINER_ALIGN);
    assert!(size_of::<Stored<Container<'static>>>() <= TPACK_CONTAINER_SIZE);
    assert!(align_of::<Stored<Container<'static>>>() <= TPACK_CONTAINER_ALIGN);
    assert!(MAX_RANK == TPACK_MAX_RANK);
};

impl Handle for Container<'static> {
    const TAG: u64 = u64::from_le_bytes(*b"tpk:cont");
}

/// One entry of a container, as `tpack_container_entry` and `tpack_container_find` describe it. Pointers
/// borrow the container's input bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_entry {
    /// The name: UTF-8, 1…1024 bytes, not NUL-terminated.
    pub name: tpack_str,
    /// The payload bytes within the input (for a `CONTAINER` entry, the nested container's bytes).
    pub payload: tpack_bytes,
    /// The payload's offset from the container's first byte.
    pub offset: u64,
    /// The payload's length in bytes: `payload.len`, also for an entry of a decoder's prefix, whose payload
    /// has not arrived (its `payload` is empty).
    pub length: u64,
    /// The load address; meaningful only when `has_target`.
    pub target: u64,
    /// The dimensions, outermost first; `dims[rank..]` are 0.
    pub dims: [u64; TPACK_MAX_RANK],
    /// The position in the table (payload order), what `tpack_container_entry` takes.
    pub position: u32,
    /// The payload's alignment in bytes, relative to the container's first byte.
    pub alignment: u32,
    /// The CRC-32 the trailer stores for the payload.
    pub checksum: u32,
    /// The dtype code; `tpack_dtype_name` gives its name (NULL for a code from a newer minor version).
    pub dtype: u16,
    /// The number of dimensions, 0…8.
    pub rank: u8,
    /// Whether the entry has a load address (`target`).
    pub has_target: bool,
}

/// The dimensions of `shape`, outermost first, padded with zeros to `TPACK_MAX_RANK`.
fn dims_of(shape: &tpack::Shape) -> [u64; TPACK_MAX_RANK] {
    let mut dims = [0u64; TPACK_MAX_RANK];
    for (out, d) in dims.iter_mut().zip(shape.dims()) {
        *out = *d;
    }
    dims
}

impl tpack_entry {
    fn new(entry: &Entry<'static>) -> Self {
        let shape = entry.shape();
        let dims = dims_of(&shape);
        tpack_entry {
            // The bytes, not `name()`: a `&str` of them would link `core::str::from_utf8` into every firmware.
            name: tpack_str::of_bytes(entry.name_bytes()),
            payload: tpack_bytes::new(entry.payload()),
            length: entry.byte_len(),
            offset: entry.offset(),
            target: entry.target().unwrap_or(0),
            dims,
            position: u32::try_from(entry.position()).unwrap_or(u32::MAX),
            alignment: entry.alignment(),
            checksum: entry.checksum(),
            dtype: entry.dtype().code(),
            rank: u8::try_from(shape.rank()).unwrap_or(u8::MAX),
            has_target: entry.target().is_some(),
        }
    }
}

impl tpack_entry {
    /// An entry of a stream's prefix (`tpack_decoder_prefix_entry`): no payload yet, so `payload` is empty
    /// (`length` is the length to come), and `checksum` 0 (the trailer comes last).
    pub(crate) fn of_prefix(entry: &tpack::stream::PrefixEntry<'_>) -> Self {
        let shape = entry.shape();
        let dims = dims_of(&shape);
        tpack_entry {
            name: tpack_str::new(entry.name()),
            payload: tpack_bytes::empty(),
            length: entry.byte_len(),
            offset: entry.range().start,
            target: entry.target().unwrap_or(0),
            dims,
            position: u32::try_from(entry.position()).unwrap_or(u32::MAX),
            alignment: entry.alignment(),
            checksum: 0,
            dtype: entry.dtype().code(),
            rank: u8::try_from(shape.rank()).unwrap_or(u8::MAX),
            has_target: entry.target().is_some(),
        }
    }
}

impl View for &Container<'static> {
    type Entry = tpack_entry;
    fn entry_count(&self) -> usize {
        self.len()
    }
    fn entry(&self, position: usize) -> Option<tpack_entry> {
        Container::entry(self, position).map(|e| tpack_entry::new(&e))
    }
    fn find(&self, name: &str) -> Option<tpack_entry> {
        self.get(name).map(|e| tpack_entry::new(&e))
    }
    fn metadata(&self) -> Metadata<'static> {
        Container::metadata(self)
    }
}

/// The container in `c`, checked.
///
/// # Safety
/// As for [`handle`].
pub(crate) unsafe fn container_ref<'a>(c: *const tpack_container) -> Result<&'a Container<'static>, Failure> {
    // SAFETY: the caller's contract for a `const tpack_container *`.
    unsafe { handle(c) }
}

/// Parses and validates the container that occupies exactly `len` bytes at `bytes` (any alignment), into
/// `out_storage`. Every structural rule is checked, nested containers included; payload checksums and zero
/// padding are `tpack_container_verify`'s. Nothing is allocated, and no payload byte is read.
///
/// The handle borrows `bytes`: they must outlive it and must not change while it is used.
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` (with the broken rule in `out_error`), `TPACK_RESULT_NULL_ARGUMENT`,
/// `TPACK_RESULT_BAD_ARGUMENT`, `TPACK_RESULT_MISALIGNED_STORAGE`. `out_storage` is untouched on failure.
///
/// # Safety
/// `bytes` must point to `len` readable bytes; `out_storage` to a writable `tpack_container`; `out_error` is
/// NULL or points to a writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_parse(
    bytes: *const u8,
    len: usize,
    out_storage: *mut tpack_container,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let slot = storage::<_, Container<'static>>(out_storage)?;
        // SAFETY: the caller's contract: `len` readable bytes that outlive the handle, unchanged.
        let input = unsafe { slice_of(bytes, len) }?;
        let parsed = Container::parse(input)?;
        // SAFETY: `slot` was checked from `out_storage`, writable by the caller's contract.
        unsafe { fill(slot, parsed) };
        Ok(())
    })
}

/// Verifies the payloads: the padding between them is zero (R37) and each matches its checksum (R50),
/// nested containers included. Reads every payload byte once.
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` with R37 or R50 in `out_error` (for a problem inside a nested container,
/// its `entry` and `offset` are the nested container's own), or a handle error.
///
/// # Safety
/// `container` must point to a readable `tpack_container`; `out_error` is NULL or points to a writable
/// `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_verify(
    container: *const tpack_container,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract.
        let c = unsafe { container_ref(container) }?;
        c.verify()?;
        Ok(())
    })
}

/// Writes the number of entries to `out_count`.
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `out_count` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_entry_count(
    container: *const tpack_container,
    out_count: *mut usize,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { container_ref(container) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::count(view, View::entry_count, out_count) })
}

/// Writes the container's format version to `out_major` and `out_minor`.
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, the outputs to writable `uint16_t`s.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_version(
    container: *const tpack_container,
    out_major: *mut u16,
    out_minor: *mut u16,
) -> tpack_result {
    guard(|| {
        let (major, minor) = (out(out_major)?, out(out_minor)?);
        // SAFETY: the caller's contract.
        let c = unsafe { container_ref(container) }?;
        let (ma, mi) = c.version();
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe {
            put(major, ma);
            put(minor, mi);
        }
        Ok(())
    })
}

/// Writes the container's compatible-feature flags as stored (bits this library does not know are kept, not
/// interpreted).
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `out_flags` to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_compat_flags(
    container: *const tpack_container,
    out_flags: *mut u64,
) -> tpack_result {
    guard(|| {
        let dst = out(out_flags)?;
        // SAFETY: the caller's contract.
        let c = unsafe { container_ref(container) }?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, c.compat_flags()) };
        Ok(())
    })
}

/// Describes the entry at `index` (table order, from 0) in `out_entry`.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` past the last entry, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `out_entry` to a writable `tpack_entry`.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_entry(
    container: *const tpack_container,
    index: usize,
    out_entry: *mut tpack_entry,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { container_ref(container) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::entry_at(view, index, out_entry) })
}

/// Describes the entry called `name` (`name_len` bytes, no NUL needed) in `out_entry`: a binary search over
/// the name index.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` when no entry has that name (a name that is not UTF-8 is never found), a handle
/// error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `name` to `name_len` readable bytes, `out_entry`
/// to a writable `tpack_entry`.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_find(
    container: *const tpack_container,
    name: *const c_char,
    name_len: usize,
    out_entry: *mut tpack_entry,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { container_ref(container) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::find(view, name, name_len, out_entry) })
}

/// Fills `out_storage` with the nested container that the `CONTAINER` entry at `index` holds (validated
/// already by the parse of the outer one; this parses it again, linear in its table, names and metadata).
/// The handle borrows the same input bytes as `container`.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for an entry of another dtype, `TPACK_RESULT_NOT_FOUND` past the last entry, a
/// handle error, `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_MISALIGNED_STORAGE`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `out_storage` to a writable one (it may be the
/// same storage: the nested handle then replaces the outer one).
#[no_mangle]
pub unsafe extern "C" fn tpack_container_nested(
    container: *const tpack_container,
    index: usize,
    out_storage: *mut tpack_container,
) -> tpack_result {
    guard(|| {
        let slot = storage::<_, Container<'static>>(out_storage)?;
        // SAFETY: the caller's contract.
        let c = unsafe { container_ref(container) }?;
        let entry = c.entry(index).ok_or(Failure::Code(tpack_result::TPACK_RESULT_NOT_FOUND))?;
        if entry.dtype() != Dtype::CONTAINER {
            return Err(Failure::Code(tpack_result::TPACK_RESULT_WRONG_TYPE));
        }
        let nested = entry.nested().ok_or(Failure::Code(tpack_result::TPACK_RESULT_WRONG_TYPE))?;
        // SAFETY: `slot` was checked from `out_storage`, writable by the caller's contract; `c` is no longer
        // used, so writing over the same storage is fine.
        unsafe { fill(slot, nested) };
        Ok(())
    })
}
