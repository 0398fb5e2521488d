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
/// As `tpack_writer_metadata`; R46 for a value of a type from a newer minor version, which this writer does
/// not write. A handle error for `value` as for `writer`.
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
    // SAFETY: the caller's contract: a filled value handle.
    let mut build = |_| Ok(Declared::Value(*unsafe { handle::<_, MetaValue<'static>>(value) }?));
    // SAFETY: the caller's contract.
    unsafe { declare(writer, key, key_len, out_error, &mut build) }
}

/// One typed scalar setter: `$name(writer, key, key_len, value, out_error)` declares `MetaValue::$variant`.
macro_rules! scalar_setters {
    ($($name:ident($t:ty) => $variant:ident, $what:literal;)*) => {$(
        #[doc = concat!("Declares a `", $what, "` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`).")]
        ///
        /// # Errors
        /// As `tpack_writer_metadata` (R42, R43 for the key).
        ///
        /// # Safety
        /// As `tpack_writer_metadata`.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            writer: *mut tpack_writer,
            key: *const c_char,
            key_len: usize,
            value: $t,
            out_error: *mut tpack_error,
        ) -> tpack_result {
            // SAFETY: the caller's contract.
            unsafe { declare(writer, key, key_len, out_error, &mut |_| Ok(Declared::Value(MetaValue::$variant(value)))) }
        }
    )*};
}

scalar_setters! {
    tpack_writer_metadata_u8(u8) => U8, "u8";
    tpack_writer_metadata_i8(i8) => I8, "i8";
    tpack_writer_metadata_u16(u16) => U16, "u16";
    tpack_writer_metadata_i16(i16) => I16, "i16";
    tpack_writer_metadata_u32(u32) => U32, "u32";
    tpack_writer_metadata_i32(i32) => I32, "i32";
    tpack_writer_metadata_u64(u64) => U64, "u64";
    tpack_writer_metadata_i64(i64) => I64, "i64";
    tpack_writer_metadata_f32(f32) => F32, "f32";
    tpack_writer_metadata_f64(f64) => F64, "f64";
    tpack_writer_metadata_bool(bool) => Bool, "bool";
}

/// One typed array setter: `$name(writer, key, key_len, values, n, out_error)` declares the `n` values at
/// `values` (NULL when `n` is 0) as `$wrap`.
macro_rules! array_setters {
    ($($name:ident($t:ty) => $wrap:expr, $what:literal;)*) => {$(
        #[doc = concat!("Declares a `", $what, "` metadata value under `key` (`key_len` bytes, or `TPACK_NUL_TERMINATED`): the `n` values at `values`, in the host's order (NULL when `n` is 0).")]
        ///
        /// # Errors
        /// As `tpack_writer_metadata`; `TPACK_RESULT_MISALIGNED_STORAGE` for `values` not aligned for its
        /// type.
        ///
        /// # Safety
        /// As `tpack_writer_metadata`; `values` must point to `n` readable values.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            writer: *mut tpack_writer,
            key: *const c_char,
            key_len: usize,
            values: *const $t,
            n: usize,
            out_error: *mut tpack_error,
        ) -> tpack_result {
            // SAFETY: the caller's contract, for the duration of the call.
            let mut build = |_| Ok($wrap(unsafe { input_of(values, n) }?));
            // SAFETY: the caller's contract.
            unsafe { declare(writer, key, key_len, out_error, &mut build) }
        }
    )*};
}

array_setters! {
    tpack_writer_metadata_u8_array(u8) => |a| Declared::Value(MetaValue::U8Array(a)), "u8[]";
    tpack_writer_metadata_i8_array(i8) => |a| Declared::Value(MetaValue::I8Array(a)), "i8[]";
    tpack_writer_metadata_u16_array(u16) => |a| Declared::Native(NativeArray::U16(a)), "u16[]";
    tpack_writer_metadata_i16_array(i16) => |a| Declared::Native(NativeArray::I16(a)), "i16[]";
    tpack_writer_metadata_u32_array(u32) => |a| Declared::Native(NativeArray::U32(a)), "u32[]";
    tpack_writer_metadata_i32_array(i32) => |a| Declared::Native(NativeArray::I32(a)), "i32[]";
    tpack_writer_metadata_u64_array(u64) => |a| Declared::Native(NativeArray::U64(a)), "u64[]";
    tpack_writer_metadata_i64_array(i64) => |a| Declared::Native(NativeArray::I64(a)), "i64[]";
    tpack_writer_metadata_f32_array(f32) => |a| Declared::Native(NativeArray::F32(a)), "f32[]";
    tpack_writer_metadata_f64_array(f64) => |a| Declared::Native(NativeArray::F64(a)), "f64[]";
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
