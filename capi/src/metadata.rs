//! Metadata: lookup by key and by index, and typed accessors for a value in caller storage
//! ([`tpack_meta_value`]) — every value type of format 1.1.
//!
//! Accessors are strict: each reads exactly one type (`tpack_meta_u32` reads a `u32`, not a `u8`), and
//! another type is `TPACK_RESULT_WRONG_TYPE`; the caller switches on `tpack_meta_value_type`. Arrays of
//! numbers are little-endian in the container: `tpack_meta_array_data` gives them in place, and the
//! `tpack_meta_*_at` accessors convert one element to the host's order.

use core::convert::identity;
use core::ffi::c_char;
use core::mem::{align_of, size_of};

use tpack::zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use tpack::zerocopy::IntoBytes;
use tpack::MetaValue;

use crate::boundary::{fill, guard, handle, out, put, storage, tpack_bytes, tpack_str, Handle, Stored};
use crate::container::{container_ref, tpack_container};
use crate::error::{tpack_result, Failure};
use crate::view::{self, MetaStorage};

/// Bytes of caller storage a metadata value handle needs (on every target).
pub const TPACK_META_VALUE_SIZE: usize = 48;
/// Alignment, in bytes, of a metadata value handle's storage.
pub const TPACK_META_VALUE_ALIGN: usize = 8;

/// Caller storage for one metadata value: filled by `tpack_metadata_get`, `tpack_metadata_at` or
/// `tpack_meta_array_at`, read with the `tpack_meta_*` accessors. Opaque; it borrows the container's input
/// bytes, owns nothing, and may be copied.
#[repr(C)]
pub struct tpack_meta_value {
    // `MaybeUninit`: the bytes the handle does not use, and the padding inside it, are uninitialized, and a
    // copy of the storage (by value, in Rust) must not claim they are integers.
    opaque: [core::mem::MaybeUninit<u64>; 6],
}

const _: () = {
    assert!(size_of::<tpack_meta_value>() == TPACK_META_VALUE_SIZE);
    assert!(align_of::<tpack_meta_value>() == TPACK_META_VALUE_ALIGN);
    assert!(size_of::<Stored<MetaValue<'static>>>() <= TPACK_META_VALUE_SIZE);
    assert!(align_of::<Stored<MetaValue<'static>>>() <= TPACK_META_VALUE_ALIGN);
};

// SAFETY: the assertions above hold `tpack_meta_value` to the size and alignment of a stored `MetaValue`.
unsafe impl MetaStorage for tpack_meta_value {}

impl Handle for MetaValue<'static> {
    const TAG: u64 = u64::from_le_bytes(*b"tpk:meta");
}

/// A numeric or `bool[]` array in place: `count` elements of `element_size` bytes each at `data`,
/// little-endian (`bool[]`: one byte, 0 or 1, per element). Not aligned in general: read it with `memcpy`, or
/// use the `tpack_meta_*_at` accessors.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_le_array {
    /// The first element's first byte.
    pub data: *const u8,
    /// The number of elements.
    pub count: usize,
    /// The size of one element in bytes: 1, 2, 4 or 8.
    pub element_size: usize,
}

fn not_found() -> Failure {
    Failure::Code(tpack_result::TPACK_RESULT_NOT_FOUND)
}

fn wrong_type() -> Failure {
    Failure::Code(tpack_result::TPACK_RESULT_WRONG_TYPE)
}

/// The value in `v`, checked.
///
/// # Safety
/// As for [`handle`].
unsafe fn meta<'a>(v: *const tpack_meta_value) -> Result<&'a MetaValue<'static>, Failure> {
    // SAFETY: the caller's contract for a `const tpack_meta_value *`.
    unsafe { handle(v) }
}

/// Writes what `pick` reads from the value in `value` to `dst`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `dst` to a writable `T`.
unsafe fn read<T>(
    value: *const tpack_meta_value,
    dst: *mut T,
    pick: impl FnOnce(MetaValue<'static>) -> Result<T, Failure>,
) -> tpack_result {
    guard(|| {
        let dst = out(dst)?;
        // SAFETY: this function's contract.
        let v = unsafe { meta(value) }?;
        let x = pick(*v)?;
        // SAFETY: checked by `out`; writable by this function's contract.
        unsafe { put(dst, x) };
        Ok(())
    })
}

/// A number or `bool` the accessors read, alone (`tpack_meta_u32`) or as an element of an array
/// (`tpack_meta_u32_at`): which variants of the core's value hold it, and how an element comes to host order.
trait Number: Sized {
    /// The value, when `v` is one of this type.
    fn one(v: MetaValue<'static>) -> Option<Self>;
    /// When `v` is an array of this type, its element `index` (`None` past the end).
    fn at(v: MetaValue<'static>, index: usize) -> Option<Option<Self>>;
}

/// One row per type: the scalar variant, the array variant, and the element's conversion to host order.
macro_rules! numbers {
    ($($t:ty: $one:ident, $many:ident, $get:expr;)*) => {$(
        impl Number for $t {
            fn one(v: MetaValue<'static>) -> Option<Self> {
                if let MetaValue::$one(x) = v { Some(x) } else { None }
            }
            fn at(v: MetaValue<'static>, index: usize) -> Option<Option<Self>> {
                if let MetaValue::$many(items) = v { Some(items.get(index).copied().map($get)) } else { None }
            }
        }
    )*};
}

numbers! {
    u64: U64, U64Array, U64::get;
    i64: I64, I64Array, I64::get;
    f64: F64, F64Array, F64::get;
    bool: Bool, BoolArray, identity;
    u8: U8, U8Array, identity;
    i8: I8, I8Array, identity;
    u16: U16, U16Array, U16::get;
    i16: I16, I16Array, I16::get;
    u32: U32, U32Array, U32::get;
    i32: I32, I32Array, I32::get;
    f32: F32, F32Array, F32::get;
}

/// Writes the value in `value` to `out` when it is a `T`.
///
/// # Safety
/// As for [`read`].
unsafe fn scalar<T: Number>(value: *const tpack_meta_value, out: *mut T) -> tpack_result {
    // SAFETY: this function's contract.
    unsafe { read(value, out, |v| T::one(v).ok_or_else(wrong_type)) }
}

/// Writes element `index` of the array in `value` to `out` when it is an array of `T`.
///
/// # Safety
/// As for [`read`].
unsafe fn element<T: Number>(value: *const tpack_meta_value, index: usize, out: *mut T) -> tpack_result {
    // SAFETY: this function's contract.
    unsafe { read(value, out, |v| T::at(v, index).ok_or_else(wrong_type)?.ok_or_else(not_found)) }
}

/// Writes the number of metadata records to `out_count`.
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `out_count` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_metadata_count(
    container: *const tpack_container,
    out_count: *mut usize,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { container_ref(container) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::count(view, |v| v.metadata().len(), out_count) })
}

/// Fills `out_value` with the value stored under `key` (`key_len` bytes, no NUL needed): a binary search over
/// the sorted records.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` when there is no such key, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `key` to `key_len` readable bytes, `out_value` to
/// a writable `tpack_meta_value`.
#[no_mangle]
pub unsafe extern "C" fn tpack_metadata_get(
    container: *const tpack_container,
    key: *const c_char,
    key_len: usize,
    out_value: *mut tpack_meta_value,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { container_ref(container) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::metadata_get(view, key, key_len, out_value) })
}

/// The record at `index` in key order (from 0): its key to `out_key` and its value to `out_value`, in O(1),
/// so a loop from 0 to `tpack_metadata_count` walks every record.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` past the last record, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `out_key` to a writable `tpack_str`, `out_value`
/// to a writable `tpack_meta_value`.
#[no_mangle]
pub unsafe extern "C" fn tpack_metadata_at(
    container: *const tpack_container,
    index: usize,
    out_key: *mut tpack_str,
    out_value: *mut tpack_meta_value,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { container_ref(container) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::metadata_at(view, index, out_key, out_value) })
}

/// Writes the value's type code to `out_code`; `tpack_meta_type_name` names it (NULL for a type from a newer
/// minor version, which no accessor reads).
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out_code` to a writable `uint8_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_value_type(
    value: *const tpack_meta_value,
    out_code: *mut u8,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { read(value, out_code, |v| Ok(v.value_type().code())) }
}

/// Reads a `u64` value.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_u64(value: *const tpack_meta_value, out: *mut u64) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads an `i64` value.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_i64(value: *const tpack_meta_value, out: *mut i64) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads an `f64` value (any bit pattern, NaNs included, exactly as stored).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `double`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_f64(value: *const tpack_meta_value, out: *mut f64) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads a `bool` value.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `bool`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_bool(value: *const tpack_meta_value, out: *mut bool) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads a `u8` value (format 1.1).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `uint8_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_u8(value: *const tpack_meta_value, out: *mut u8) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads an `i8` value (format 1.1).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `int8_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_i8(value: *const tpack_meta_value, out: *mut i8) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads a `u16` value (format 1.1).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `uint16_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_u16(value: *const tpack_meta_value, out: *mut u16) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads an `i16` value (format 1.1).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `int16_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_i16(value: *const tpack_meta_value, out: *mut i16) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads a `u32` value (format 1.1).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_u32(value: *const tpack_meta_value, out: *mut u32) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads an `i32` value (format 1.1).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `int32_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_i32(value: *const tpack_meta_value, out: *mut i32) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads an `f32` value (format 1.1; any bit pattern, exactly as stored).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `float`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_f32(value: *const tpack_meta_value, out: *mut f32) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(value, out) }
}

/// Reads a `string` value: validated UTF-8, not NUL-terminated, borrowed from the container's input.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `tpack_str`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_string(
    value: *const tpack_meta_value,
    out: *mut tpack_str,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe {
        read(
            value,
            out,
            |v| if let MetaValue::String(s) = v { Ok(tpack_str::new(s)) } else { Err(wrong_type()) },
        )
    }
}

/// Reads a `bytes` value, borrowed from the container's input.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `tpack_bytes`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_bytes(
    value: *const tpack_meta_value,
    out: *mut tpack_bytes,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe {
        read(value, out, |v| {
            if let MetaValue::Bytes(b) = v {
                Ok(tpack_bytes::new(b))
            } else {
                Err(wrong_type())
            }
        })
    }
}

/// Reads the pool bytes of a value of a type from a newer minor version, which this library does not know
/// (its code is `tpack_meta_value_type`'s, and `tpack_meta_type_name` gives NULL for it).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for a type this library knows, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `tpack_bytes`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_unknown_bytes(
    value: *const tpack_meta_value,
    out: *mut tpack_bytes,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe {
        read(value, out, |v| match v {
            MetaValue::Unknown { bytes, .. } => Ok(tpack_bytes::new(bytes)),
            _ => Err(wrong_type()),
        })
    }
}

/// The number of items of any array value (`u64[]` … `bool[]`, `string[]`, `array[]`). O(1) for the
/// numeric and `bool[]` arrays, linear in the value for `string[]` and `array[]`.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for a value that is not an array, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out_len` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_array_len(
    value: *const tpack_meta_value,
    out_len: *mut usize,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe {
        read(value, out_len, |v| match v {
            MetaValue::StringArray(items) => Ok(items.count()),
            MetaValue::ArrayArray(items) => Ok(items.count()),
            other => le_array(other).map(|a| a.count),
        })
    }
}

/// The elements of a numeric or `bool[]` array in place.
fn le_array(v: MetaValue<'static>) -> Result<tpack_le_array, Failure> {
    fn of<T: IntoBytes + tpack::zerocopy::Immutable>(items: &'static [T]) -> tpack_le_array {
        tpack_le_array { data: items.as_bytes().as_ptr(), count: items.len(), element_size: size_of::<T>() }
    }
    Ok(match v {
        MetaValue::U64Array(a) => of(a),
        MetaValue::I64Array(a) => of(a),
        MetaValue::F64Array(a) => of(a),
        MetaValue::U8Array(a) => of(a),
        MetaValue::I8Array(a) => of(a),
        MetaValue::U16Array(a) => of(a),
        MetaValue::I16Array(a) => of(a),
        MetaValue::U32Array(a) => of(a),
        MetaValue::I32Array(a) => of(a),
        MetaValue::F32Array(a) => of(a),
        MetaValue::BoolArray(a) => of(a),
        _ => return Err(wrong_type()),
    })
}

/// The elements of a numeric or `bool[]` array value, in place and little-endian (see [`tpack_le_array`]).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type (`string[]` and `array[]` included: use their `_at`
/// accessors), a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `tpack_le_array`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_array_data(
    value: *const tpack_meta_value,
    out: *mut tpack_le_array,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { read(value, out, le_array) }
}

/// Reads element `index` of a `u64[]` value, in host order.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_u64_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut u64,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of an `i64[]` value, in host order.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_i64_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut i64,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of an `f64[]` value, in host order.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `double`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_f64_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut f64,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of a `u8[]` value (format 1.1).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `uint8_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_u8_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut u8,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of an `i8[]` value (format 1.1).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `int8_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_i8_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut i8,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of a `u16[]` value (format 1.1), in host order.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `uint16_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_u16_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut u16,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of an `i16[]` value (format 1.1), in host order.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `int16_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_i16_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut i16,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of a `u32[]` value (format 1.1), in host order.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_u32_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut u32,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of an `i32[]` value (format 1.1), in host order.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `int32_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_i32_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut i32,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of an `f32[]` value (format 1.1), in host order.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `float`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_f32_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut f32,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads element `index` of a `bool[]` value (format 1.1).
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last element, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `bool`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_bool_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut bool,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { element(value, index, out) }
}

/// Reads item `index` of a `string[]` value: validated UTF-8, not NUL-terminated. Linear in the items before
/// it.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last item, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out` to a writable `tpack_str`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_string_at(
    value: *const tpack_meta_value,
    index: usize,
    out: *mut tpack_str,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe {
        read(value, out, |v| match v {
            MetaValue::StringArray(mut items) => items.nth(index).map(tpack_str::new).ok_or_else(not_found),
            _ => Err(wrong_type()),
        })
    }
}

/// Fills `out_item` with item `index` of an `array[]` value (format 1.1): itself an array value, read with the
/// same accessors. Linear in the items before it. `out_item` may be the storage of `value` itself.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for another type, `TPACK_RESULT_NOT_FOUND` past the last item, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_MISALIGNED_STORAGE`.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`, `out_item` to a writable one.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_array_at(
    value: *const tpack_meta_value,
    index: usize,
    out_item: *mut tpack_meta_value,
) -> tpack_result {
    guard(|| {
        let slot = storage::<_, MetaValue<'static>>(out_item)?;
        // SAFETY: the caller's contract.
        let v = unsafe { meta(value) }?;
        let item = match *v {
            MetaValue::ArrayArray(mut items) => items.nth(index).ok_or_else(not_found)?,
            _ => return Err(wrong_type()),
        };
        // SAFETY: checked by `storage`; writable by the caller's contract. `v` is not used after this (the
        // storage may be the same).
        unsafe { fill(slot, item) };
        Ok(())
    })
}

/// The kind of number an element or a requested element type is, with its width in bits: what decides
/// whether a conversion keeps every value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Unsigned(u8),
    Signed(u8),
    Float(u8),
    Bool,
}

impl Kind {
    /// The element kind of metadata type `code` (a scalar type code), if it is a number or `bool`.
    fn of_code(code: u8) -> Option<Kind> {
        Some(match code {
            1 | 15 | 13 | 11 => Kind::Unsigned(match code {
                1 => 64,
                15 => 32,
                13 => 16,
                _ => 8,
            }),
            2 | 16 | 14 | 12 => Kind::Signed(match code {
                2 => 64,
                16 => 32,
                14 => 16,
                _ => 8,
            }),
            3 => Kind::Float(64),
            17 => Kind::Float(32),
            4 => Kind::Bool,
            _ => return None,
        })
    }

    /// Whether every value of kind `self` is a value of kind `to`: no conversion that could round, wrap or
    /// cut is made. A float's significand holds 24 bits (`f32`) or 53 (`f64`).
    fn fits_in(self, to: Kind) -> bool {
        let significand = |bits: u8| if bits == 32 { 24 } else { 53 };
        match (self, to) {
            (Kind::Bool, Kind::Bool | Kind::Unsigned(_) | Kind::Signed(_)) => true,
            (Kind::Unsigned(a), Kind::Unsigned(b)) | (Kind::Signed(a), Kind::Signed(b)) => a <= b,
            (Kind::Unsigned(a), Kind::Signed(b)) => a < b,
            (Kind::Unsigned(a), Kind::Float(b)) => a <= significand(b),
            (Kind::Signed(a), Kind::Float(b)) => a <= significand(b).saturating_add(1),
            (Kind::Float(a), Kind::Float(b)) => a <= b,
            _ => false,
        }
    }
}

/// One element, widened to a common form.
#[derive(Clone, Copy)]
enum Element {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
}

/// The kind of the elements of numeric or `bool[]` array `v`, and its element `index` (`None` past the end).
fn element_of(v: MetaValue<'static>, index: usize) -> Option<(Kind, Option<Element>)> {
    fn at<T: Copy>(a: &[T], i: usize, f: impl FnOnce(T) -> Element) -> Option<Element> {
        a.get(i).copied().map(f)
    }
    let u = Element::Unsigned;
    let s = Element::Signed;
    Some(match v {
        MetaValue::U8Array(a) => (Kind::Unsigned(8), at(a, index, |x| u(x.into()))),
        MetaValue::U16Array(a) => (Kind::Unsigned(16), at(a, index, |x| u(x.get().into()))),
        MetaValue::U32Array(a) => (Kind::Unsigned(32), at(a, index, |x| u(x.get().into()))),
        MetaValue::U64Array(a) => (Kind::Unsigned(64), at(a, index, |x| u(x.get()))),
        MetaValue::I8Array(a) => (Kind::Signed(8), at(a, index, |x| s(x.into()))),
        MetaValue::I16Array(a) => (Kind::Signed(16), at(a, index, |x| s(x.get().into()))),
        MetaValue::I32Array(a) => (Kind::Signed(32), at(a, index, |x| s(x.get().into()))),
        MetaValue::I64Array(a) => (Kind::Signed(64), at(a, index, |x| s(x.get()))),
        MetaValue::F32Array(a) => (Kind::Float(32), at(a, index, |x| Element::Float(x.get().into()))),
        MetaValue::F64Array(a) => (Kind::Float(64), at(a, index, |x| Element::Float(x.get()))),
        MetaValue::BoolArray(a) => (Kind::Bool, at(a, index, |x| u(x.into()))),
        _ => return None,
    })
}

/// A type `tpack_meta_array_read` writes: made from an element that [`Kind::fits_in`] says fits.
trait FromElement: Sized {
    fn from_element(e: Element) -> Option<Self>;
}

macro_rules! from_integer {
    ($($t:ty),*) => {$(
        impl FromElement for $t {
            fn from_element(e: Element) -> Option<Self> {
                match e {
                    Element::Unsigned(x) => <$t>::try_from(x).ok(),
                    Element::Signed(x) => <$t>::try_from(x).ok(),
                    Element::Float(_) => None,
                }
            }
        }
    )*};
}

from_integer!(u8, i8, u16, i16, u32, i32, u64, i64);

impl FromElement for f64 {
    fn from_element(e: Element) -> Option<Self> {
        // Only integers of at most 32 bits and floats reach here (`fits_in`); each is exact as an `f64`.
        match e {
            Element::Float(x) => Some(x),
            Element::Unsigned(x) => u32::try_from(x).ok().map(f64::from),
            Element::Signed(x) => i32::try_from(x).ok().map(f64::from),
        }
    }
}

impl FromElement for f32 {
    fn from_element(e: Element) -> Option<Self> {
        // Only `f32` elements, and integers of at most 16 bits, reach here (`fits_in`).
        match e {
            Element::Float(x) => {
                #[allow(clippy::as_conversions, clippy::cast_possible_truncation)]
                let narrowed = x as f32; // an `f32` element, widened exactly: the narrowing is exact too.
                Some(narrowed)
            }
            Element::Unsigned(x) => u16::try_from(x).ok().map(f32::from),
            Element::Signed(x) => i16::try_from(x).ok().map(f32::from),
        }
    }
}

impl FromElement for bool {
    fn from_element(e: Element) -> Option<Self> {
        match e {
            Element::Unsigned(x) => Some(x != 0),
            _ => None,
        }
    }
}

/// Converts elements `first..first + n` of `v` (or as many as there are) into the `T`s at `out`, and says how
/// many it wrote.
///
/// # Safety
/// `out` must be NULL (then `n` must be 0) or point to `n` writable `T`s.
unsafe fn convert<T: FromElement>(
    v: MetaValue<'static>,
    first: usize,
    n: usize,
    out: *mut T,
) -> Result<usize, Failure> {
    // SAFETY: this function's contract.
    let dst = unsafe { crate::boundary::output_of(out, n) }?;
    let mut written = 0usize;
    for (slot, index) in dst.iter_mut().zip(first..) {
        let Some((_, Some(e))) = element_of(v, index) else { break };
        slot.write(T::from_element(e).ok_or_else(wrong_type)?);
        written = written.saturating_add(1);
    }
    Ok(written)
}

/// Reads elements `first`, `first + 1`, … of a numeric or `bool[]` array value into `out`, an array of `n`
/// elements of the type whose scalar code `out_type` is, converting each, in host order. The codes accepted
/// are exactly these eleven: `TPACK_META_U64` (1, `uint64_t`), `TPACK_META_I64` (2, `int64_t`),
/// `TPACK_META_F64` (3, `double`), `TPACK_META_BOOL` (4, `bool`), `TPACK_META_U8` (11, `uint8_t`),
/// `TPACK_META_I8` (12, `int8_t`), `TPACK_META_U16` (13, `uint16_t`), `TPACK_META_I16` (14, `int16_t`),
/// `TPACK_META_U32` (15, `uint32_t`), `TPACK_META_I32` (16, `int32_t`), `TPACK_META_F32` (17, `float`).
/// Writes the number read (less than `n` at the end of the array, 0 from `first` = its length on) to
/// `out_written`. One loop reads any numeric array into the type the caller works in.
///
/// A conversion is made only when it keeps every value of the array's type: to a type at least as wide and of
/// the same kind (unsigned, signed, float), to a wider signed type from an unsigned one, to `float` from an
/// integer of at most 16 bits and to `double` from one of at most 32, to any integer type from `bool`.
///
/// # Errors
/// `TPACK_RESULT_WRONG_TYPE` for a value that is not a numeric or `bool[]` array or a conversion that could
/// lose a value (`out` is then not written), `TPACK_RESULT_NOT_FOUND` for `first` past the array's length,
/// `TPACK_RESULT_BAD_ARGUMENT` for any other `out_type` (5–10, 18 and above, 0),
/// `TPACK_RESULT_NULL_ARGUMENT` (`out` may be NULL only when `n` is 0), `TPACK_RESULT_MISALIGNED_STORAGE`, a
/// handle error.
///
/// # Safety
/// `value` must point to a readable `tpack_meta_value`; `out` to `n` writable elements of the type;
/// `out_written` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_meta_array_read(
    value: *const tpack_meta_value,
    first: usize,
    n: usize,
    out_type: u8,
    out: *mut core::ffi::c_void,
    out_written: *mut usize,
) -> tpack_result {
    guard(|| {
        let dst = crate::boundary::out(out_written)?;
        // SAFETY: the caller's contract.
        let v = *unsafe { meta(value) }?;
        let to = Kind::of_code(out_type).ok_or(Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT))?;
        let (from, _) = element_of(v, 0).ok_or_else(wrong_type)?;
        if !from.fits_in(to) {
            return Err(wrong_type());
        }
        let len = le_array(v)?.count;
        if first > len {
            return Err(not_found());
        }
        // SAFETY: the caller's contract: `out` holds `n` elements of the type `out_type` names.
        let written = unsafe {
            match out_type {
                1 => convert::<u64>(v, first, n, out.cast()),
                2 => convert::<i64>(v, first, n, out.cast()),
                3 => convert::<f64>(v, first, n, out.cast()),
                4 => convert::<bool>(v, first, n, out.cast()),
                11 => convert::<u8>(v, first, n, out.cast()),
                12 => convert::<i8>(v, first, n, out.cast()),
                13 => convert::<u16>(v, first, n, out.cast()),
                14 => convert::<i16>(v, first, n, out.cast()),
                15 => convert::<u32>(v, first, n, out.cast()),
                16 => convert::<i32>(v, first, n, out.cast()),
                _ => convert::<f32>(v, first, n, out.cast()),
            }
        }?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, written) };
        Ok(())
    })
}
