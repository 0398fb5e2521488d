//! Result codes and the error out-struct: [`tpack_result`], [`tpack_error`], and the translation of the
//! core's [`tpack::Error`] to and from the struct's fields through [`ErrorContext`] (so that its `Display`
//! text can be written without keeping a Rust value in C memory). The text itself is `message.rs`'s.

use tpack::format::Section;
use tpack::{Error, ErrorContext, Rule};

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
    /// An argument no container could be made of or read with: a length above `PTRDIFF_MAX`, or a code of this
    /// API's own that it does not define (each function's doc says which). A value a container could hold
    /// but that breaks a rule of the spec is `TPACK_RESULT_INVALID_CONTAINER`, from the writer as from the
    /// reader.
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
    /// before every entry was written (`entry` entries written of `value` declared), an open-ended entry
    /// declared to the one-pass writer or one that is not `RAW` (`entry`, refused by `tpack_writer_declare`),
    /// `tpack_writer_length` before `tpack_writer_finish`; or the declarations would make a container past
    /// 2^64 bytes, or the seekable sink was moved behind the writer's back.
    TPACK_RESULT_WRITER_MISUSE = 14,
    /// An earlier error stopped this writer; its output is not a valid container. Which failures stop it (the
    /// writer's own) and which leave it as it was (arguments, and values refused before it sees them): see
    /// `tpack_writer`.
    TPACK_RESULT_WRITER_POISONED = 15,
    /// The container is not signed: it has no signed attributes, signer or signed message to give. (Whether
    /// an unsigned container is acceptable is a policy's question: `require_signature`, R58.)
    TPACK_RESULT_NOT_SIGNED = 16,
}

/// "No index": the value of `tpack_error`'s `entry`, `record`, `position` and `section` when the error has
/// none.
pub const TPACK_NONE: u32 = u32::MAX;
/// "No number": the value of `tpack_error`'s `offset` and `value` when the error has none.
pub const TPACK_NONE64: u64 = u64::MAX;

/// Why a call failed, with the context the core's error has. Written only on failure, and only when the
/// caller passed a non-NULL `out_error`.
///
/// For `TPACK_RESULT_INVALID_CONTAINER`, `rule` is the broken rule (1…64) and the other fields say where, as
/// far as the rule has such a place; a field without one holds `TPACK_NONE` / `TPACK_NONE64`. Entries and
/// offsets are those of the container that breaks the rule: for an error found inside a nested container
/// (R37 or R50 from `tpack_container_verify` or a decoder), that container's own, and `depth` and
/// `outer_entry` say where it is.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct tpack_error {
    /// The code the call returned (a `tpack_result`, as a plain `uint32_t` so that any bits are a valid
    /// struct).
    pub result: u32,
    /// The rule number, 1…64 (58…64: the container is not authentic under the policy); 0 when the failure
    /// is not a broken rule.
    pub rule: u32,
    /// The entry's position in the table (R55, R57, R64 too), in the container that `depth` places. For R39,
    /// the entry of the container the call was given that holds the broken container, directly or deeper
    /// down.
    pub entry: u32,
    /// The metadata record (R40–R49), or the block geometry record (R52).
    pub record: u32,
    /// The position in the name index (R19, R20).
    pub position: u32,
    /// The section (R10–R12), 0…5 in on-disk order: table, index, names, metadata, payloads, trailer.
    pub section: u32,
    /// R39: the rule the nested container breaks (0 otherwise).
    pub inner_rule: u32,
    /// The depth of the container that breaks the rule (for R39, that breaks `inner_rule`): 0 for the container
    /// the call was given (and for every rule not found inside a nested container), 1 for one it holds
    /// directly, ... Only R37, R39 and R50 are found deeper.
    pub depth: u32,
    /// When `depth` is 1 or more: the entry of the container the call was given that holds the container
    /// `depth` names, directly or deeper down (for R39 the same as `entry`); `TPACK_NONE` when `depth` is 0.
    pub outer_entry: u32,
    /// R13, R14, R50: the stored checksum (0 otherwise).
    pub stored: u32,
    /// R13, R14, R50: the computed checksum (0 otherwise).
    pub computed: u32,
    /// A byte offset: R7, R37 and R51 (where the bad byte or item is), R30 (the entry's offset).
    pub offset: u64,
    /// The rule's own number: the input length (R1), major version (R3), `header_len` (R4), flags (R5),
    /// `descriptor_len` (R6), declared length (R8, R9), name length (R17), dtype code (R22, R53), rank (R23),
    /// dimension (R24), expected byte length (R28), alignment (R29), metadata type code (R46), the signed
    /// attribute at fault (R56: 0 `tpack.sig.alg`, 1 `.key`, 2 `.counter`, 3 `.subject`, 4 `.pubkey`, 5
    /// another `tpack.sig.` key), expected length (R57), algorithm code (R60), signed counter (R62); the buffer
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
    /// An error that is not a broken rule: its code, and the entry and number it names.
    Other {
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
            Failure::Other { result, .. } => result,
        }
    }

    /// The out-struct for this failure.
    pub(crate) fn describe(self) -> tpack_error {
        let mut out = blank(self.result());
        match self {
            Failure::Code(_) => {}
            Failure::BufferTooSmall { needed } => out.value = needed,
            Failure::Invalid(e) => out = fields_of(e),
            Failure::Other { entry, value, .. } => {
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
        outer_entry: TPACK_NONE,
        stored: 0,
        computed: 0,
        offset: TPACK_NONE64,
        value: TPACK_NONE64,
    }
}

/// The out-struct of an invalid container: the rule's number and its context, slot for slot. The context is
/// destructured whole, so a slot the core adds fails to compile here until it has a field.
fn fields_of(e: Error) -> tpack_error {
    let ErrorContext {
        entry,
        record,
        position,
        offset,
        section,
        value,
        stored,
        computed,
        depth,
        outer_entry,
        inner_rule,
    } = e.context();
    tpack_error {
        result: result_code(tpack_result::TPACK_RESULT_INVALID_CONTAINER),
        rule: u32::from(e.rule().number()),
        entry: entry.unwrap_or(TPACK_NONE),
        record: record.unwrap_or(TPACK_NONE),
        position: position.unwrap_or(TPACK_NONE),
        section: section.map_or(TPACK_NONE, section_number),
        inner_rule: inner_rule.map_or(0, |r| u32::from(r.number())),
        depth: depth.map_or(0, u32::from),
        outer_entry: outer_entry.unwrap_or(TPACK_NONE),
        stored: stored.unwrap_or(0),
        computed: computed.unwrap_or(0),
        offset: offset.unwrap_or(TPACK_NONE64),
        value: value.unwrap_or(TPACK_NONE64),
    }
}

/// The context that [`fields_of`] described as `e`, to print the core's message with
/// (`tpack::Rule::write_message`). Every field is passed on as it is — `TPACK_NONE` too, which can be a real
/// value (R5's flags may be all ones) — since a message prints only the slots its rule uses; a section or depth
/// out of its range becomes `None`, for which the message is refused.
pub(crate) fn context_of(e: &tpack_error) -> ErrorContext {
    ErrorContext {
        entry: Some(e.entry),
        record: Some(e.record),
        position: Some(e.position),
        offset: Some(e.offset),
        section: usize::try_from(e.section).ok().and_then(|i| Section::ALL.get(i)).copied(),
        value: Some(e.value),
        stored: Some(e.stored),
        computed: Some(e.computed),
        depth: u8::try_from(e.depth).ok(),
        outer_entry: Some(e.outer_entry),
        inner_rule: rule(e.inner_rule),
    }
}

/// The number of `section` in on-disk order, as `tpack_error.section` holds it.
fn section_number(section: Section) -> u32 {
    (0u32..).zip(Section::ALL).find(|(_, s)| *s == section).map_or(TPACK_NONE, |(i, _)| i)
}

/// The rule numbered `number`.
pub(crate) fn rule(number: u32) -> Option<Rule> {
    Rule::ALL.iter().copied().find(|r| u32::from(r.number()) == number)
}

/// The code of `result`, as `tpack_error.result` holds it.
pub(crate) fn result_code(result: tpack_result) -> u32 {
    // A fieldless `repr(u32)` enum: its discriminant is its code.
    #[allow(clippy::as_conversions)]
    let code = result as u32;
    code
}
