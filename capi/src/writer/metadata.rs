//! The writer's metadata setters, gguf style: one per value type (`tpack_writer_metadata_u32`,
//! `tpack_writer_metadata_f32_array`, `tpack_writer_metadata_string_array`, …), a copy of a value read from
//! another container (`tpack_writer_metadata_copy`), and the raw form (`tpack_writer_metadata`: a type code and
//! the pool encoding). Each is a thin wrapper over [`declare`], the one path that checks the key, builds the
//! value and declares it; a value that could not be stored in a container is refused there with the rule a
//! reader would name (R43 for the key, R46–R49 for the value), before the writer sees it.

use core::cell::Cell;
use core::ffi::{c_char, CStr};

use tpack::write::{NativeArray, StringItems};
use tpack::zerocopy::TryFromBytes;
use tpack::{Error, ErrorContext, MetaType, MetaValue, Rule};

use super::{tpack_writer, with_writer, Inner};
use crate::boundary::{handle, input_of, text, text_value};
use crate::error::{tpack_error, tpack_result, Failure};
use crate::metadata::tpack_meta_value;

/// A value as a setter gives it to the writer.
enum Declared<'a> {
    /// As the readers give it (and the one-byte arrays, which have no byte order).
    Value(MetaValue<'a>),
    /// Numbers in the host's byte order, or strings item by item.
    Native(NativeArray<'a>),
}

/// The error of metadata record `record` breaking `rule`, with `code` (the value type) for R46.
fn broken(rule: Rule, record: u32, code: u8) -> Failure {
    let context =
        ErrorContext { record: Some(record), value: Some(u64::from(code)), ..ErrorContext::default() };
    Error::from_context(rule, &context)
        .map_or(Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT), Failure::Invalid)
}

/// The one path of every setter: the key (`key_len` bytes, or NUL-terminated), then the value that `value`
/// builds for the record the writer will number it (in declaration order), declared. A key that is not UTF-8
/// is R43; `value` says what else it refuses. Takes `value` as a `dyn` so that the setters share one copy.
///
/// # Safety
/// `writer` must point to a filled `tpack_writer` used by no one else during the call; `key` to `key_len`
/// readable bytes (a NUL-terminated string for `TPACK_NUL_TERMINATED`); `out_error` is NULL or writable.
unsafe fn declare<'a>(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    out_error: *mut tpack_error,
    value: &mut dyn FnMut(u32) -> Result<Declared<'a>, Failure>,
) -> tpack_result {
    let body = |w: &mut Inner| {
        let record = u32::try_from(either!(w, w => w.metadata_count())).unwrap_or(u32::MAX);
        // SAFETY: this function's contract, for the duration of the call.
        let key = unsafe { text(key, key_len) }?;
        let key = core::str::from_utf8(key).map_err(|_| broken(Rule::MetaKeyUtf8, record, 0))?;
        Ok(match value(record)? {
            Declared::Value(v) => either!(w, w => w.metadata(key, v)),
            Declared::Native(v) => either!(w, w => w.metadata_native(key, v)),
        }?)
    };
    // SAFETY: this function's contract.
    unsafe { with_writer(writer, out_error, body) }
}

/// The value of type code `code` whose bytes, as `tpack_writer_metadata` takes them, are `b`, for record
/// `record`: the inline types (`u64`, `i64`, `f64`, `bool`) at their native width (8 bytes, 1 for `bool`),
/// every other type as the pool encodes it.
fn raw_value(code: u8, b: &[u8], record: u32) -> Result<MetaValue<'_>, Failure> {
    let t = MetaType::from_code(code);
    if !t.is_inline() {
        return MetaValue::try_from_encoded(t, b).map_err(|rule| broken(rule, record, code));
    }
    let shape = || broken(Rule::MetaValueShape, record, code);
    let bits = match *b {
        [byte] if t == MetaType::BOOL => u64::from(byte),
        _ if t == MetaType::BOOL => return Err(shape()),
        _ => u64::from_le_bytes(b.try_into().map_err(|_| shape())?),
    };
    // Only a `bool` that is neither 0 nor 1 has no value.
    MetaValue::from_inline(t, bits).ok_or_else(|| broken(Rule::MetaBool, record, code))
}

/// Declares a metadata value from its type code and its bytes as the container's pool stores them (spec
/// §7.1), every type of format 1.1: the scalars `u8` … `f32` (types 11–17) and the arrays `u64[]`, `i64[]`,
/// `f64[]` (7–9) and `u8[]` … `bool[]` (18–25) as little-endian bytes; `string` (5) as UTF-8 and `bytes` (6)
/// as they are; `string[]` (10) as its items in order, each a `uint32_t` little-endian length and its UTF-8
/// bytes; `array[]` (26) as its items in order, each an 8-byte header (type code, three zero bytes, a
/// `uint32_t` little-endian length) and that item's own encoding, at most 8 levels deep. The inline types
/// `u64`, `i64`, `f64` and `bool` (1–4) are 8-, 8-, 8- and 1-byte little-endian. The typed setters
/// (`tpack_writer_metadata_u32`, …) and `tpack_writer_metadata_copy` do the encoding for you.
///
/// `key` may be NUL-terminated (`key_len` = `TPACK_NUL_TERMINATED`); `value` may be NULL when `value_len` is 0.
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` naming the rule a container holding the value would break, with
/// `tpack_error.record` the value's number in declaration order: R43 (a key that is not UTF-8), R46 (a type
/// code format 1.1 does not define, in `value`), R47 (bytes that do not frame as the type: a wrong width, a
/// `string[]` or `array[]` item cut short, an `array[]` item that is not an array or nests too deep), R48 (a
/// `bool` that is neither 0 nor 1), R49 (a string that is not UTF-8) — these leave the writer as it was —
/// and R42 (an empty or over-long key), which poisons it; `TPACK_RESULT_WRITER_FULL`,
/// `TPACK_RESULT_WRITER_MISUSE` (payloads have begun), `TPACK_RESULT_WRITER_POISONED`, `TPACK_RESULT_BAD_ARGUMENT`
/// (a length above `PTRDIFF_MAX`), a handle error. Duplicate keys are reported when payloads begin.
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
    // SAFETY: the caller's contract, for the duration of the call.
    let mut build =
        |record| Ok(Declared::Value(raw_value(value_type, unsafe { input_of(value, value_len) }?, record)?));
    // SAFETY: the caller's contract.
    unsafe { declare(writer, key, key_len, out_error, &mut build) }
}

/// Declares a copy of a metadata value read from a container or a decoder's prefix (`tpack_metadata_get`,
/// `tpack_metadata_at`, `tpack_decoder_prefix_metadata_*`, `tpack_meta_array_at`), of any type format 1.1
/// defines, `array[]` included, under `key`: one call per value copies a container's metadata.
///
/// # Errors
/// As `tpack_writer_metadata`; R46 (the type code in `value`) for a value of a type from a newer minor
/// version, which this writer does not write, leaving the writer as it was. A handle error for `value` as
/// for `writer`.
///
/// # Safety
/// As `tpack_writer_metadata`; `value` must point to a filled `tpack_meta_value` whose container bytes are
/// still valid.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_copy(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: *const tpack_meta_value,
    out_error: *mut tpack_error,
) -> tpack_result {
    let mut build = |record| {
        // SAFETY: the caller's contract: a filled value handle.
        match *unsafe { handle::<_, MetaValue<'static>>(value) }? {
            // Refused here, as `tpack_writer_metadata` refuses the code, rather than by the writer (which
            // would be poisoned by it).
            MetaValue::Unknown { code, .. } => Err(broken(Rule::MetaUnknownType, record, code)),
            known => Ok(Declared::Value(known)),
        }
    };
    // SAFETY: the caller's contract.
    unsafe { declare(writer, key, key_len, out_error, &mut build) }
}

/// Declares `value`, built from an argument passed by value: the path of the scalar setters.
///
/// # Safety
/// As for [`declare`].
unsafe fn scalar(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: MetaValue<'static>,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: this function's contract.
    unsafe { declare(writer, key, key_len, out_error, &mut |_| Ok(Declared::Value(value))) }
}

/// Declares the `n` values at `values` (NULL when `n` is 0) as `wrap` makes them a value: the path of the
/// array setters.
///
/// # Safety
/// As for [`declare`]; `values` must point to `n` readable `T`s.
unsafe fn array<T>(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const T,
    n: usize,
    wrap: for<'a> fn(&'a [T]) -> Declared<'a>,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: this function's contract, for the duration of the call.
    let mut build = |_| Ok(wrap(unsafe { input_of(values, n) }?));
    // SAFETY: this function's contract.
    unsafe { declare(writer, key, key_len, out_error, &mut build) }
}

/// Declares a `u8` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_u8(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: u8,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::U8(value), out_error) }
}

/// Declares a `i8` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_i8(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: i8,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::I8(value), out_error) }
}

/// Declares a `u16` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_u16(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: u16,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::U16(value), out_error) }
}

/// Declares a `i16` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_i16(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: i16,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::I16(value), out_error) }
}

/// Declares a `u32` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_u32(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: u32,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::U32(value), out_error) }
}

/// Declares a `i32` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_i32(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: i32,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::I32(value), out_error) }
}

/// Declares a `u64` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_u64(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: u64,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::U64(value), out_error) }
}

/// Declares a `i64` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_i64(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: i64,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::I64(value), out_error) }
}

/// Declares a `f32` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_f32(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: f32,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::F32(value), out_error) }
}

/// Declares a `f64` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_f64(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: f64,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::F64(value), out_error) }
}

/// Declares a `bool` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).
///
/// # Errors
/// As `tpack_writer_metadata` (R42, R43 for the key).
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_bool(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: bool,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { scalar(writer, key, key_len, MetaValue::Bool(value), out_error) }
}

/// Declares a `u8[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values` (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `uint8_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_u8_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const u8,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Value(MetaValue::U8Array(a)), out_error) }
}

/// Declares a `i8[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values` (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `int8_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_i8_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const i8,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Value(MetaValue::I8Array(a)), out_error) }
}

/// Declares a `u16[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values`, in the host's byte order (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`; `TPACK_RESULT_MISALIGNED_STORAGE` for `values` not aligned for `uint16_t`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `uint16_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_u16_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const u16,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Native(NativeArray::U16(a)), out_error) }
}

/// Declares a `i16[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values`, in the host's byte order (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`; `TPACK_RESULT_MISALIGNED_STORAGE` for `values` not aligned for `int16_t`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `int16_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_i16_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const i16,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Native(NativeArray::I16(a)), out_error) }
}

/// Declares a `u32[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values`, in the host's byte order (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`; `TPACK_RESULT_MISALIGNED_STORAGE` for `values` not aligned for `uint32_t`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_u32_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const u32,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Native(NativeArray::U32(a)), out_error) }
}

/// Declares a `i32[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values`, in the host's byte order (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`; `TPACK_RESULT_MISALIGNED_STORAGE` for `values` not aligned for `int32_t`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `int32_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_i32_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const i32,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Native(NativeArray::I32(a)), out_error) }
}

/// Declares a `u64[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values`, in the host's byte order (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`; `TPACK_RESULT_MISALIGNED_STORAGE` for `values` not aligned for `uint64_t`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_u64_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const u64,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Native(NativeArray::U64(a)), out_error) }
}

/// Declares a `i64[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values`, in the host's byte order (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`; `TPACK_RESULT_MISALIGNED_STORAGE` for `values` not aligned for `int64_t`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_i64_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const i64,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Native(NativeArray::I64(a)), out_error) }
}

/// Declares a `f32[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values`, in the host's byte order (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`; `TPACK_RESULT_MISALIGNED_STORAGE` for `values` not aligned for `float`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `float`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_f32_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const f32,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Native(NativeArray::F32(a)), out_error) }
}

/// Declares a `f64[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values`, in the host's byte order (NULL when `n` is 0).
///
/// # Errors
/// As `tpack_writer_metadata`; `TPACK_RESULT_MISALIGNED_STORAGE` for `values` not aligned for `double`.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable `double`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_f64_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const f64,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract.
    unsafe { array(writer, key, key_len, values, n, |a| Declared::Native(NativeArray::F64(a)), out_error) }
}

/// Declares a `bool[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// values at `values` (NULL when `n` is 0), read as bytes.
///
/// # Errors
/// As `tpack_writer_metadata`: R48 for a byte that is neither 0 nor 1.
///
/// # Safety
/// As `tpack_writer_metadata`; `values` must point to `n` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_bool_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    values: *const bool,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    let mut build = |record| {
        // Read as bytes: a C caller's `bool` array may hold any byte, which a Rust `bool` must not.
        // SAFETY: the caller's contract, for the duration of the call.
        let bytes = unsafe { input_of(values.cast::<u8>(), n) }?;
        let bools = <[bool]>::try_ref_from_bytes(bytes).map_err(|_| broken(Rule::MetaBool, record, 0))?;
        Ok(Declared::Value(MetaValue::BoolArray(bools)))
    };
    // SAFETY: the caller's contract.
    unsafe { declare(writer, key, key_len, out_error, &mut build) }
}

/// Declares a `string` metadata value under `key`: `value_len` bytes at `value` (NULL when 0), or a
/// NUL-terminated string (`TPACK_NUL_TERMINATED`). `key` likewise.
///
/// # Errors
/// As `tpack_writer_metadata`: R49 for a value that is not UTF-8.
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_string(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    value: *const c_char,
    value_len: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    let mut build = |record| {
        // SAFETY: the caller's contract, for the duration of the call.
        let bytes = unsafe { text_value(value, value_len) }?;
        let s = core::str::from_utf8(bytes).map_err(|_| broken(Rule::MetaUtf8, record, 0))?;
        Ok(Declared::Value(MetaValue::String(s)))
    };
    // SAFETY: the caller's contract.
    unsafe { declare(writer, key, key_len, out_error, &mut build) }
}

/// Declares a `bytes` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): `len` bytes at
/// `data` (NULL when 0).
///
/// # Errors
/// As `tpack_writer_metadata`.
///
/// # Safety
/// As `tpack_writer_metadata`.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_bytes(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    data: *const u8,
    len: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // SAFETY: the caller's contract, for the duration of the call.
    let mut build = |_| Ok(Declared::Value(MetaValue::Bytes(unsafe { input_of(data, len) }?)));
    // SAFETY: the caller's contract.
    unsafe { declare(writer, key, key_len, out_error, &mut build) }
}

/// Declares a `string[]` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n`
/// NUL-terminated strings at `items` (NULL when `n` is 0), in order.
///
/// # Errors
/// As `tpack_writer_metadata`: R49 for an item that is not UTF-8; `TPACK_RESULT_NULL_ARGUMENT` for a NULL
/// item.
///
/// # Safety
/// As `tpack_writer_metadata`; `items` must point to `n` pointers, each to a readable NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn tpack_writer_metadata_string_array(
    writer: *mut tpack_writer,
    key: *const c_char,
    key_len: usize,
    items: *const *const c_char,
    n: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    // The items are read in place, twice (size, then bytes): checked once in `build`, so `each` cannot fail.
    let pointers: Cell<&[*const c_char]> = Cell::new(&[]);
    let each = |emit: &mut dyn FnMut(&str) -> bool| {
        pointers.get().iter().all(|&p| {
            // SAFETY: checked below (not NULL) before the writer calls this; NUL-terminated and readable by
            // the caller's contract.
            let item = unsafe { CStr::from_ptr(p) }.to_bytes();
            emit(core::str::from_utf8(item).unwrap_or(""))
        })
    };
    let mut build = |record| {
        // SAFETY: the caller's contract, for the duration of the call.
        let all = unsafe { input_of(items, n) }?;
        for &p in all {
            // SAFETY: the caller's contract: each item NUL-terminated and readable.
            let item = unsafe { text(p, crate::boundary::TPACK_NUL_TERMINATED) }?;
            core::str::from_utf8(item).map_err(|_| broken(Rule::MetaUtf8, record, 0))?;
        }
        pointers.set(all);
        Ok(Declared::Native(NativeArray::Strings(StringItems::new(&each))))
    };
    // SAFETY: the caller's contract.
    unsafe { declare(writer, key, key_len, out_error, &mut build) }
}
