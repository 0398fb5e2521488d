//! The text of a result and of a `tpack_error`: [`tpack_result_message`] and [`tpack_error_message`], which prints
//! the core's own message from the struct's fields (`tpack::Rule::write_message`: static text and a hand-written
//! number formatter, so a firmware that prints messages links no `core::fmt` argument machinery; nothing here
//! uses `write!` either).

use core::ffi::{c_char, CStr};
use core::fmt::{self, Write as _};

use crate::boundary::{buffer, guard, read_arg, zeroed};
use crate::error::{context_of, result_code, rule, tpack_error, tpack_result, Failure, TPACK_NONE64};

/// The message of `TPACK_RESULT_BUFFER_TOO_SMALL` with its `value` (see `tpack::ErrorContext::write_template`).
const BUFFER_TOO_SMALL: &str = "the decoder's buffer is too small: the stream needs {value} bytes kept";

/// A fixed message for every result code (a static, NUL-terminated string; never NULL).
#[no_mangle]
pub extern "C" fn tpack_result_message(result: u32) -> *const c_char {
    result_text(result).as_ptr()
}

/// The message of result code `result`.
fn result_text(result: u32) -> &'static CStr {
    match result {
        0 => c"success",
        1 => c"the container breaks a rule of the tpack spec",
        2 => c"a pointer argument is NULL",
        3 => c"an argument is out of range",
        4 => c"caller storage is too short",
        5 => c"caller storage is not aligned for its type",
        6 => c"a handle was not filled by a successful call",
        7 => c"not found",
        8 => c"the entry or value is of another type",
        9 => c"the decoder's buffer is too small for this stream",
        10 => c"the decoder was used after it finished",
        11 => c"tpack panicked (a bug)",
        12 => c"a callback (the writer's output or seek, the decoder's event handler) failed",
        13 => c"the writer's bookkeeping is full",
        14 => c"the writer was used out of order, or a payload's length differs from its declaration",
        15 => c"an earlier error stopped the writer",
        16 => c"the container is not signed",
        _ => c"unknown result code",
    }
}

/// A `fmt::Write` into a C buffer that keeps the last byte for the NUL and drops what does not fit.
struct Truncating<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl fmt::Write for Truncating<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.buf.len().saturating_sub(1).saturating_sub(self.len);
        // Cut at a character boundary, so that the text stays UTF-8.
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take = take.saturating_sub(1);
        }
        let src = s.as_bytes().get(..take).unwrap_or(&[]);
        let end = self.len.saturating_add(take);
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(src);
            self.len = end;
        }
        Ok(())
    }
}

/// Writes the text of `error` to `buf` (`len` bytes), NUL-terminated, cut to fit (at a UTF-8 character
/// boundary): for an invalid container the core's own message, which names the rule and where it is broken
/// ("R13 HeaderChecksum: the header checksum does not match (stored …, computed …)"); else the result
/// code's message. A cut text is not a failure.
///
/// # Errors
/// `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_BAD_ARGUMENT` (`len` above `PTRDIFF_MAX`),
/// `TPACK_RESULT_SHORT_STORAGE` (`len` is 0: no room for the NUL).
///
/// # Safety
/// `error` must point to a readable `tpack_error`, `buf` to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn tpack_error_message(
    error: *const tpack_error,
    buf: *mut c_char,
    len: usize,
) -> tpack_result {
    guard(|| {
        // SAFETY: the caller's contract; every field of a `tpack_error` is an integer, so any bits are valid.
        let error = unsafe { read_arg(error) }?;
        let buf = buffer(buf.cast::<u8>(), len)?;
        if len == 0 {
            return Err(Failure::Code(tpack_result::TPACK_RESULT_SHORT_STORAGE));
        }
        // SAFETY: checked by `buffer`; `len` writable bytes by the caller's contract.
        let dst = unsafe { zeroed(buf, len) };
        let mut w = Truncating { buf: dst, len: 0 };
        let invalid = result_code(tpack_result::TPACK_RESULT_INVALID_CONTAINER);
        let too_small = result_code(tpack_result::TPACK_RESULT_BUFFER_TOO_SMALL);
        let context = context_of(&error);
        let written = match (error.result, rule(error.rule)) {
            (r, Some(rule)) if r == invalid => rule.write_message(&context, &mut w),
            (r, _) if r == too_small && error.value != TPACK_NONE64 => {
                context.write_template(BUFFER_TOO_SMALL, &mut w)
            }
            _ => Err(fmt::Error),
        };
        // The fields do not make that message (a struct not written by this library): what was written of it
        // goes, and the result code's text is written instead.
        if written.is_err() {
            w.len = 0;
            let _ = w.write_str(result_text(error.result).to_str().unwrap_or(""));
        }
        let end = w.len;
        if let Some(nul) = dst.get_mut(end) {
            *nul = 0;
        }
        Ok(())
    })
}
