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
