//! The text of a result and of a `tpack_error`: [`tpack_result_message`] and [`tpack_error_message`], which prints
//! the core's own message from the struct's fields (`tpack::Rule::write_message`: static text and a hand-written
//! number formatter, so a firmware that prints messages links no `core::fmt` argument machinery; nothing here
//! uses `write!` either).

use core::ffi::c_char;
use core::fmt;

use tpack::packed_text;

use crate::boundary::{buffer, guard, read_arg, zeroed};
use crate::error::{
    context_of, result_code, rule, tpack_error, tpack_result, Failure, TPACK_NONE, TPACK_NONE64,
};

/// The message of `TPACK_RESULT_BUFFER_TOO_SMALL` with its `value` (see `tpack::ErrorContext::write_template`).
macro_rules! buffer_too_small {
    () => {
        "the decoder's buffer is too small: the stream needs {value} bytes kept"
    };
}
/// The message of the one `TPACK_RESULT_WRITER_MISUSE` with an entry and no number: an open-ended entry that
/// `tpack_writer_declare` refused.
macro_rules! open_ended {
    () => {
        "entry {entry} is open-ended (its length found by writing): only the seekable writer takes one, and only a RAW entry"
    };
}

/// The messages of the result codes 0, 1, 2, ... in order, then the one of any other code, each ended by a NUL.
macro_rules! result_texts {
    () => {
        "success\0\
        the container breaks a rule of the tpack spec\0\
        a pointer argument is NULL\0\
        an argument is out of range\0\
        caller storage is too short\0\
        caller storage is not aligned for its type\0\
        a handle was not filled by a successful call\0\
        not found\0\
        the entry or value is of another type\0\
        the decoder's buffer is too small for this stream\0\
        the decoder was used after it finished\0\
        tpack panicked (a bug)\0\
        a callback (the writer's output or seek, the decoder's event handler) failed\0\
        the writer's bookkeeping is full\0\
        the writer was used out of order, or a payload's length differs from its declaration\0\
        an earlier error stopped the writer\0\
        the container is not signed\0\
        unknown result code\0"
    };
}

/// A fixed message for every result code (a static, NUL-terminated string; never NULL).
#[no_mangle]
pub extern "C" fn tpack_result_message(result: u32) -> *const c_char {
    // The pointer comes from the rest of `RESULT_TEXTS` from the text's start, not from the text alone: the
    // caller's strlen reads the NUL after it, which a pointer derived from the text's own slice may not reach
    // (Miri's Stacked Borrows check found that).
    let start = field_start(RESULT_TEXTS.as_bytes(), result.min(RESULT_CODES));
    RESULT_TEXTS.get(start..).unwrap_or("\0").as_ptr().cast::<c_char>()
}

/// The messages of the result codes, one string with a NUL after each (see `result_texts!`), instead of a table
/// of pointers and one of lengths (136 bytes of flash on a 32-bit target): what `tpack_result_message` hands
/// out.
const RESULT_TEXTS: &str = result_texts!();

/// The texts `tpack_error_message` prints, packed as the core packs the rule messages (`tpack::packed_text`:
/// about 900 bytes in 510), so that a firmware that prints messages but never calls `tpack_result_message`
/// keeps no plain copy: the result texts in code order, then the template of [`BUFFER_TOO_SMALL`], then the one
/// of [`OPEN_ENDED`], each ended by a NUL.
const PLAIN: &str = concat!(result_texts!(), buffer_too_small!(), "\0", open_ended!(), "\0");
const PACKING: ([u8; PLAIN.len()], usize) = packed_text::pack_text::<{ PLAIN.len() }>(PLAIN.as_bytes());
const PACKED: [u8; PACKING.1] = packed_text::first::<{ PLAIN.len() }, { PACKING.1 }>(&PACKING.0);
/// The room the longest text of [`PLAIN`] needs, unpacked.
const LONGEST: usize = packed_text::longest_field(PLAIN.as_bytes());

/// The field of [`PACKED`] that holds the template of `TPACK_RESULT_BUFFER_TOO_SMALL`'s message with a value.
const BUFFER_TOO_SMALL: u32 = RESULT_CODES + 1;
/// The field of [`PACKED`] that holds the template of the open-ended entry's refusal.
const OPEN_ENDED: u32 = RESULT_CODES + 2;

/// The number of result codes with a message of their own in [`RESULT_TEXTS`] (0 to 16).
const RESULT_CODES: u32 = 17;

/// Where field `index` (0 for the first) of `texts`, NUL-terminated fields, starts: `texts.len()` past the last.
fn field_start(texts: &[u8], index: u32) -> usize {
    let (mut start, mut seen) = (0usize, 0u32);
    for (at, &byte) in texts.iter().enumerate() {
        if seen == index {
            break;
        }
        if byte == 0 {
            seen = seen.saturating_add(1);
            start = at.saturating_add(1);
        }
    }
    if seen == index {
        start
    } else {
        texts.len()
    }
}

/// Field `index` of [`PACKED`] (a result code's text below [`RESULT_CODES`], "unknown result code" at it, then
/// the templates), packed.
fn packed(index: u32) -> &'static [u8] {
    let rest = PACKED.get(field_start(&PACKED, index)..).unwrap_or(&[]);
    rest.split(|&b| b == 0).next().unwrap_or(&[])
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
        let misuse = result_code(tpack_result::TPACK_RESULT_WRITER_MISUSE);
        let context = context_of(&error);
        let mut room = [0u8; LONGEST];
        let written = match (error.result, rule(error.rule)) {
            (r, Some(rule)) if r == invalid => rule.write_message(&context, &mut w),
            (r, _) if r == too_small && error.value != TPACK_NONE64 => {
                packed_text::write_template(&context, packed(BUFFER_TOO_SMALL), &mut room, &mut w)
            }
            (r, _) if r == misuse && error.entry != TPACK_NONE && error.value == TPACK_NONE64 => {
                packed_text::write_template(&context, packed(OPEN_ENDED), &mut room, &mut w)
            }
            _ => Err(fmt::Error),
        };
        // The fields do not make that message (a struct not written by this library): what was written of it
        // goes, and the result code's text is written instead.
        if written.is_err() {
            w.len = 0;
            let _ = packed_text::write_text(packed(error.result.min(RESULT_CODES)), &mut room, &mut w);
        }
        let end = w.len;
        if let Some(nul) = dst.get_mut(end) {
            *nul = 0;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::CStr;

    /// Every result code's message, as the table of `CStr`s before [`RESULT_TEXTS`] gave them.
    const EXPECTED: [&str; 18] = [
        "success",
        "the container breaks a rule of the tpack spec",
        "a pointer argument is NULL",
        "an argument is out of range",
        "caller storage is too short",
        "caller storage is not aligned for its type",
        "a handle was not filled by a successful call",
        "not found",
        "the entry or value is of another type",
        "the decoder's buffer is too small for this stream",
        "the decoder was used after it finished",
        "tpack panicked (a bug)",
        "a callback (the writer's output or seek, the decoder's event handler) failed",
        "the writer's bookkeeping is full",
        "the writer was used out of order, or a payload's length differs from its declaration",
        "an earlier error stopped the writer",
        "the container is not signed",
        "unknown result code",
    ];

    extern crate std;

    /// Field `index` of [`PACKED`], unpacked.
    fn text(index: u32) -> std::string::String {
        let mut out = std::string::String::new();
        packed_text::write_text(packed(index), &mut [0u8; LONGEST], &mut out).unwrap();
        out
    }

    #[test]
    fn every_result_code_has_its_own_message_and_others_the_unknown_one() {
        assert_eq!(RESULT_CODES, result_code(tpack_result::TPACK_RESULT_NOT_SIGNED) + 1);
        for (code, expected) in (0u32..).zip(EXPECTED) {
            assert_eq!(text(code.min(RESULT_CODES)), expected, "code {code}");
            // SAFETY: `tpack_result_message` returns a static NUL-terminated string.
            let c = unsafe { CStr::from_ptr(tpack_result_message(code)) };
            assert_eq!(c.to_str(), Ok(expected), "code {code}");
        }
        for code in [18, 1000, u32::MAX] {
            assert_eq!(text(code.min(RESULT_CODES)), "unknown result code");
            // SAFETY: as above.
            let c = unsafe { CStr::from_ptr(tpack_result_message(code)) };
            assert_eq!(c.to_str(), Ok("unknown result code"));
        }
        // The templates print as the plain ones with the same context.
        let context = tpack::ErrorContext { entry: Some(3), value: Some(4096), ..Default::default() };
        for (index, plain) in [(BUFFER_TOO_SMALL, buffer_too_small!()), (OPEN_ENDED, open_ended!())] {
            let mut expected = std::string::String::new();
            context.write_template(plain, &mut expected).unwrap();
            let mut got = std::string::String::new();
            packed_text::write_template(&context, packed(index), &mut [0u8; LONGEST], &mut got).unwrap();
            assert_eq!(got, expected);
            assert!(got.contains('3') || got.contains("4096"), "{got}");
        }
        // The packed copy is much smaller than the plain one.
        assert!(PACKED.len() < PLAIN.len() * 2 / 3);
        assert_eq!(RESULT_TEXTS.bytes().filter(|&b| b == 0).count(), EXPECTED.len());
    }
}
