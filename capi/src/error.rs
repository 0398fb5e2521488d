//! Result codes and the error out-struct: [`tpack_result`], [`tpack_error`], and the translation of the
//! core's [`tpack::Error`] to and from the struct's fields (so that its `Display` text can be written without
//! keeping a Rust value in C memory).

use core::ffi::c_char;
use core::fmt::{self, Write as _};

use tpack::format::Section;
use tpack::{Error, Rule};

use crate::boundary::{buffer, guard, out};

/// The result of every fallible call. `TPACK_RESULT_OK` is 0; every other code is a failure, and the call
/// then wrote none of its out-parameters.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tpack_result {
    /// Success.
    TPACK_RESULT_OK = 0,
    /// The container (or stream) breaks a rule of the spec; `tpack_error.rule` names it.
    TPACK_RESULT_INVALID_CONTAINER = 1,
    /// A pointer argument that must not be NULL was NULL.
    TPACK_RESULT_NULL_ARGUMENT = 2,
    /// An argument is out of range: a length above `PTRDIFF_MAX`.
    TPACK_RESULT_BAD_ARGUMENT = 3,
    /// Caller storage is too short: a decoder buffer shorter than a header (`TPACK_DECODER_MIN_BUFFER`), a
    /// message buffer of length 0, a writer's bookkeeping block shorter than `tpack_writer_bookkeeping_size`
    /// says (`tpack_error.value` is that length).
    TPACK_RESULT_SHORT_STORAGE = 4,
    /// A handle or out-parameter is not aligned for its type (storage cast from a byte buffer).
    TPACK_RESULT_MISALIGNED_STORAGE = 5,
    /// A handle was not filled by a successful call (zeroed, or another kind of handle).
    TPACK_RESULT_UNINITIALIZED_STORAGE = 6,
    /// No entry, metadata key or item at that name or index.
    TPACK_RESULT_NOT_FOUND = 7,
    /// The entry or value is of another type than the call reads.
    TPACK_RESULT_WRONG_TYPE = 8,
    /// The decoder's buffer cannot hold what this stream needs kept; `tpack_error.value` says how much would.
    TPACK_RESULT_BUFFER_TOO_SMALL = 9,
    /// The decoder was used after `tpack_decoder_finish`.
    TPACK_RESULT_DECODER_FINISHED = 10,
    /// Rust code panicked; the call was abandoned before it wrote anything (a bug: please report it).
    TPACK_RESULT_PANIC = 11,
    /// A callback returned non-zero (the writer's sink or seek, the decoder's event handler);
    /// `tpack_error.value` is the number it returned, sign-extended.
    TPACK_RESULT_IO = 12,
    /// A writer's bookkeeping is full; `tpack_error.value` says which part: 0 entries, 1 names, 2 metadata
    /// records, 3 metadata bytes.
    TPACK_RESULT_WRITER_FULL = 13,
    /// The writer was used out of order: payload longer or shorter than declared (`entry`, and the declared
    /// length in `value`), bytes after the last entry, a declaration after the first payload byte, finishing
    /// before every entry was written (`entry` entries written of `value` declared).
    TPACK_RESULT_WRITER_MISUSE = 14,
    /// An earlier error stopped this writer; its output is not a valid container.
    TPACK_RESULT_WRITER_POISONED = 15,
}

/// "No index": the value of `tpack_error`'s `entry`, `record`, `position` and `section` when the error has
/// none.
pub const TPACK_NONE: u32 = u32::MAX;
/// "No number": the value of `tpack_error`'s `offset` and `value` when the error has none.
pub const TPACK_NONE64: u64 = u64::MAX;

/// Why a call failed, with the context the core's error has. Written only on failure, and only when the
/// caller passed a non-NULL `out_error`.
///
/// For `TPACK_RESULT_INVALID_CONTAINER`, `rule` is the broken rule (1…53) and the other fields say where, as
/// far as the rule has such a place; a field without one holds `TPACK_NONE` / `TPACK_NONE64`. Offsets are
/// bytes from the start of the container that breaks the rule (a nested container's own start for an error
/// that `tpack_container_verify` reports inside it).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct tpack_error {
    /// The code the call returned (a `tpack_result`, as a plain `uint32_t` so that any bits are a valid
    /// struct).
    pub result: u32,
    /// The rule number, 1…53; 0 when the failure is not a broken rule.
    pub rule: u32,
    /// The entry's position in the table.
    pub entry: u32,
    /// The metadata record (R40–R49), or the block geometry record (R52).
    pub record: u32,
    /// The position in the name index (R19, R20).
    pub position: u32,
    /// The section (R10–R12), 0…5 in on-disk order: table, index, names, metadata, payloads, trailer.
    pub section: u32,
    /// R39: the rule the nested container breaks (0 otherwise).
    pub inner_rule: u32,
    /// R39: the nested container's depth (0 otherwise).
    pub depth: u32,
    /// R13, R14, R50: the stored checksum (0 otherwise).
    pub stored: u32,
    /// R13, R14, R50: the computed checksum (0 otherwise).
    pub computed: u32,
    /// A byte offset: R7, R37 and R51 (where the bad byte or item is), R30 (the entry's offset).
    pub offset: u64,
    /// The rule's own number: the input length (R1), major version (R3), `header_len` (R4), flags (R5),
    /// `descriptor_len` (R6), declared length (R8, R9), name length (R17), dtype code (R22, R53), rank (R23),
    /// dimension (R24), expected byte length (R28), alignment (R29), metadata type code (R46); the buffer
    /// length needed for `TPACK_RESULT_BUFFER_TOO_SMALL`.
    pub value: u64,
}

/// A failed call: its code, and the core's error for an invalid container.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Failure {
    Code(tpack_result),
    Invalid(Error),
    BufferTooSmall {
        needed: u64,
    },
    /// A writer error that is not a broken rule: its code, and the entry and number it names.
    Writer {
        result: tpack_result,
        entry: Option<u32>,
        value: Option<u64>,
    },
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Invalid(e)
    }
}

impl Failure {
    pub(crate) fn result(self) -> tpack_result {
        match self {
            Failure::Code(code) => code,
            Failure::Invalid(_) => tpack_result::TPACK_RESULT_INVALID_CONTAINER,
            Failure::BufferTooSmall { .. } => tpack_result::TPACK_RESULT_BUFFER_TOO_SMALL,
            Failure::Writer { result, .. } => result,
        }
    }

    /// The out-struct for this failure.
    pub(crate) fn describe(self) -> tpack_error {
        let mut out = blank(self.result());
        match self {
            Failure::Code(_) => {}
            Failure::BufferTooSmall { needed } => out.value = needed,
            Failure::Invalid(e) => fields_of(e, &mut out),
            Failure::Writer { entry, value, .. } => {
                out.entry = entry.unwrap_or(TPACK_NONE);
                out.value = value.unwrap_or(TPACK_NONE64);
            }
        }
        out
    }
}

fn blank(result: tpack_result) -> tpack_error {
    tpack_error {
        result: result_code(result),
        rule: 0,
        entry: TPACK_NONE,
        record: TPACK_NONE,
        position: TPACK_NONE,
        section: TPACK_NONE,
        inner_rule: 0,
        depth: 0,
        stored: 0,
        computed: 0,
        offset: TPACK_NONE64,
        value: TPACK_NONE64,
    }
}

fn section_number(section: Section) -> u32 {
    (0u32..).zip(Section::ALL).find(|(_, s)| *s == section).map_or(TPACK_NONE, |(i, _)| i)
}

/// The fields of `e`: its rule and its context.
fn fields_of(e: Error, out: &mut tpack_error) {
    out.rule = u32::from(e.rule().number());
    match e {
        Error::TooShort { len } => out.value = len,
        Error::UnsupportedVersion { major } => out.value = u64::from(major),
        Error::HeaderLength { header_len } => out.value = u64::from(header_len),
        Error::UnknownIncompatFlags { flags } => out.value = flags,
        Error::DescriptorLength { descriptor_len } => out.value = u64::from(descriptor_len),
        Error::ReservedNonZero { offset }
        | Error::PaddingNonZero { offset }
        | Error::ExtensionLayout { offset } => {
            out.offset = offset;
        }
        Error::Truncated { declared } | Error::TrailingBytes { declared } => out.value = declared,
        Error::SectionBounds { section }
        | Error::SectionLayout { section }
        | Error::SectionLength { section } => {
            out.section = section_number(section);
        }
        Error::HeaderChecksum { stored, computed } | Error::TrailerChecksum { stored, computed } => {
            out.stored = stored;
            out.computed = computed;
        }
        Error::EntryChecksum { entry, stored, computed } => {
            out.entry = entry;
            out.stored = stored;
            out.computed = computed;
        }
        Error::NameLength { entry, len } => {
            out.entry = entry;
            out.value = u64::from(len);
        }
        Error::IndexRange { position } | Error::IndexOrder { position } => out.position = position,
        Error::UnknownDtype { entry, code } | Error::MissingGeometry { entry, code } => {
            out.entry = entry;
            out.value = u64::from(code);
        }
        Error::RankTooLarge { entry, rank } => {
            out.entry = entry;
            out.value = u64::from(rank);
        }
        Error::UnusedDimNonZero { entry, dim } => {
            out.entry = entry;
            out.value = u64::from(dim);
        }
        Error::LengthMismatch { entry, expected } => {
            out.entry = entry;
            out.value = expected;
        }
        Error::BadAlignment { entry, alignment } => {
            out.entry = entry;
            out.value = u64::from(alignment);
        }
        Error::Misaligned { entry, offset } => {
            out.entry = entry;
            out.offset = offset;
        }
        Error::NestedInvalid { entry, depth, inner } => {
            out.entry = entry;
            out.depth = u32::from(depth);
            out.inner_rule = u32::from(inner.number());
        }
        Error::NameBounds { entry }
        | Error::NamePoolLayout { entry }
        | Error::NameUtf8 { entry }
        | Error::DuplicateName { entry }
        | Error::ShapeOverflow { entry }
        | Error::BlockShape { entry }
        | Error::ByteShape { entry }
        | Error::EntryFlags { entry }
        | Error::TargetOverflow { entry }
        | Error::PayloadBounds { entry }
        | Error::PayloadOrder { entry }
        | Error::PayloadOverlap { entry }
        | Error::PaddingNotMinimal { entry }
        | Error::NestingTooDeep { entry } => out.entry = entry,
        Error::MetaUnknownType { record, code } => {
            out.record = record;
            out.value = u64::from(code);
        }
        Error::MetaBounds { record }
        | Error::MetaPoolLayout { record }
        | Error::MetaKeyLength { record }
        | Error::MetaKeyUtf8 { record }
        | Error::MetaKeyOrder { record }
        | Error::MetaDuplicateKey { record }
        | Error::MetaValueShape { record }
        | Error::MetaBool { record }
        | Error::MetaUtf8 { record }
        | Error::BlockGeometry { record } => out.record = record,
        // `BadMagic` has no context; a variant a later core adds keeps at least its rule.
        _ => {}
    }
}

/// The rule numbered `number`.
pub(crate) fn rule(number: u32) -> Option<Rule> {
    Rule::ALL.iter().copied().find(|r| u32::from(r.number()) == number)
}

/// The core's error that [`fields_of`] described as `e`, to print with its own `Display`; `None` when the
/// fields do not describe one (a struct not written by this library).
fn error_of(e: &tpack_error) -> Option<Error> {
    let small = |v: u64| u32::try_from(v).ok();
    let code16 = |v: u64| u16::try_from(v).ok();
    let byte = |v: u64| u8::try_from(v).ok();
    let section = || Section::ALL.get(usize::try_from(e.section).ok()?).copied();
    let (entry, record, position, offset, value) = (e.entry, e.record, e.position, e.offset, e.value);
    let (stored, computed) = (e.stored, e.computed);
    Some(match rule(e.rule)? {
        Rule::TooShort => Error::TooShort { len: value },
        Rule::BadMagic => Error::BadMagic,
        Rule::UnsupportedVersion => Error::UnsupportedVersion { major: code16(value)? },
        Rule::HeaderLength => Error::HeaderLength { header_len: small(value)? },
        Rule::UnknownIncompatFlags => Error::UnknownIncompatFlags { flags: value },
        Rule::DescriptorLength => Error::DescriptorLength { descriptor_len: small(value)? },
        Rule::ReservedNonZero => Error::ReservedNonZero { offset },
        Rule::Truncated => Error::Truncated { declared: value },
        Rule::TrailingBytes => Error::TrailingBytes { declared: value },
        Rule::SectionBounds => Error::SectionBounds { section: section()? },
        Rule::SectionLayout => Error::SectionLayout { section: section()? },
        Rule::SectionLength => Error::SectionLength { section: section()? },
        Rule::HeaderChecksum => Error::HeaderChecksum { stored, computed },
        Rule::TrailerChecksum => Error::TrailerChecksum { stored, computed },
        Rule::NameBounds => Error::NameBounds { entry },
        Rule::NamePoolLayout => Error::NamePoolLayout { entry },
        Rule::NameLength => Error::NameLength { entry, len: small(value)? },
        Rule::NameUtf8 => Error::NameUtf8 { entry },
        Rule::IndexRange => Error::IndexRange { position },
        Rule::IndexOrder => Error::IndexOrder { position },
        Rule::DuplicateName => Error::DuplicateName { entry },
        Rule::UnknownDtype => Error::UnknownDtype { entry, code: code16(value)? },
        Rule::RankTooLarge => Error::RankTooLarge { entry, rank: byte(value)? },
        Rule::UnusedDimNonZero => Error::UnusedDimNonZero { entry, dim: byte(value)? },
        Rule::ShapeOverflow => Error::ShapeOverflow { entry },
        Rule::BlockShape => Error::BlockShape { entry },
        Rule::ByteShape => Error::ByteShape { entry },
        Rule::LengthMismatch => Error::LengthMismatch { entry, expected: value },
        Rule::BadAlignment => Error::BadAlignment { entry, alignment: small(value)? },
        Rule::Misaligned => Error::Misaligned { entry, offset },
        Rule::EntryFlags => Error::EntryFlags { entry },
        Rule::TargetOverflow => Error::TargetOverflow { entry },
        Rule::PayloadBounds => Error::PayloadBounds { entry },
        Rule::PayloadOrder => Error::PayloadOrder { entry },
        Rule::PayloadOverlap => Error::PayloadOverlap { entry },
        Rule::PaddingNotMinimal => Error::PaddingNotMinimal { entry },
        Rule::PaddingNonZero => Error::PaddingNonZero { offset },
        Rule::NestingTooDeep => Error::NestingTooDeep { entry },
        Rule::NestedInvalid => {
            Error::NestedInvalid { entry, depth: byte(u64::from(e.depth))?, inner: rule(e.inner_rule)? }
        }
        Rule::MetaBounds => Error::MetaBounds { record },
        Rule::MetaPoolLayout => Error::MetaPoolLayout { record },
        Rule::MetaKeyLength => Error::MetaKeyLength { record },
        Rule::MetaKeyUtf8 => Error::MetaKeyUtf8 { record },
        Rule::MetaKeyOrder => Error::MetaKeyOrder { record },
        Rule::MetaDuplicateKey => Error::MetaDuplicateKey { record },
        Rule::MetaUnknownType => Error::MetaUnknownType { record, code: byte(value)? },
        Rule::MetaValueShape => Error::MetaValueShape { record },
        Rule::MetaBool => Error::MetaBool { record },
        Rule::MetaUtf8 => Error::MetaUtf8 { record },
        Rule::EntryChecksum => Error::EntryChecksum { entry, stored, computed },
        Rule::ExtensionLayout => Error::ExtensionLayout { offset },
        Rule::BlockGeometry => Error::BlockGeometry { record },
        Rule::MissingGeometry => Error::MissingGeometry { entry, code: code16(value)? },
        _ => return None,
    })
}

/// A fixed message for every result code (a static, NUL-terminated string; never NULL).
#[no_mangle]
pub extern "C" fn tpack_result_message(result: u32) -> *const c_char {
    let text: &'static core::ffi::CStr = match result {
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
        _ => c"unknown result code",
    };
    text.as_ptr()
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
        let error = out(error.cast_mut())?;
        let buf = buffer(buf.cast::<u8>(), len)?;
        if len == 0 {
            return Err(Failure::Code(tpack_result::TPACK_RESULT_SHORT_STORAGE));
        }
        // SAFETY: not NULL and aligned (`out`), readable by the caller's contract; `tpack_error` is plain data
        // whose every field is an integer, so any bits are a valid value.
        let error = unsafe { error.as_ptr().read() };
        // SAFETY: `len` writable bytes at `buf` by the caller's contract, at most `isize::MAX` (checked).
        let dst = unsafe { core::slice::from_raw_parts_mut(buf.as_ptr(), len) };
        let mut w = Truncating { buf: dst, len: 0 };
        let invalid = result_code(tpack_result::TPACK_RESULT_INVALID_CONTAINER);
        let too_small = result_code(tpack_result::TPACK_RESULT_BUFFER_TOO_SMALL);
        let _ = match (error.result, error_of(&error)) {
            (r, Some(e)) if r == invalid => write!(w, "{e}"),
            (r, _) if r == too_small && error.value != TPACK_NONE64 => {
                write!(w, "the decoder's buffer is too small: the stream needs {} bytes kept", error.value)
            }
            (result, _) => {
                // SAFETY: `tpack_result_message` returns a static NUL-terminated string.
                let text = unsafe { core::ffi::CStr::from_ptr(tpack_result_message(result)) };
                w.write_str(text.to_str().unwrap_or(""))
            }
        };
        let end = w.len;
        if let Some(nul) = dst.get_mut(end) {
            *nul = 0;
        }
        Ok(())
    })
}

/// The code of `result`, as `tpack_error.result` holds it.
pub(crate) fn result_code(result: tpack_result) -> u32 {
    // A fieldless `repr(u32)` enum: its discriminant is its code.
    #[allow(clippy::as_conversions)]
    let code = result as u32;
    code
}
