//! Errors: one [`Rule`] per validation rule of `spec/FORMAT.md` §12, and the [`Error`] that names the rule a
//! container breaks together with where it breaks it.

use core::fmt;

use crate::format::Section;

mod message;
pub mod packed;

/// The rule table: each rule's number, id and plain words, and the context its [`Error`] variant carries,
/// field by field, each to its slot of [`ErrorContext`]. From it come [`Rule`], [`Error::rule`],
/// [`Error::context`] and [`Error::from_context`], so a rule added here cannot compile until its error
/// variant exists with exactly these fields, and every binding that copies an [`ErrorContext`] gets its
/// context without a line of its own. `+ nesting` marks a rule found inside nested containers too, whose
/// error has a [`Nesting`] field of that name, copied to the `depth` and `outer_entry` slots.
///
/// The last column is the rule's context in its message, with `{slot}` placeholders (see
/// [`ErrorContext::write_template`]); the message is `"{id} {name}: {what}{context}"`, kept in records of
/// [`Rule::IDS`], [`Rule::NAMES`] and [`Rule::DESCRIPTIONS`], so that printing it needs no `format_args!` (see
/// `error/message.rs`).
macro_rules! rules {
    ($($name:ident = $num:literal, $id:literal, $what:literal { $($field:ident => $slot:ident),* } $(+ $nesting:ident)? $text:literal;)*) => {
        /// A validation rule of the spec (§12), by its number.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Rule {
            $(#[doc = $what] $name,)*
        }

        impl Rule {
            /// Every rule, in number order.
            pub const ALL: &'static [Rule] = &[$(Rule::$name),*];

            /// The rule's number: `17` for R17.
            #[must_use]
            pub const fn number(self) -> u8 {
                match self { $(Rule::$name => $num,)* }
            }

            // The three texts below are read from `Rule::IDS`, `Rule::NAMES` and `Rule::DESCRIPTIONS`, which the
            // messages are printed from: a `match` here would be a second copy of every text and a table of
            // pointers per column. The empty string is for a malformed table, which the assertions after this
            // `impl` rule out at compile time.

            /// The rule's id as the spec and the conformance kit write it: `"R17"`.
            #[must_use]
            pub const fn id(self) -> &'static str {
                match message::id_text(self.number()) { Some(id) => id, None => "" }
            }

            /// The rule's short name: `"NameLength"`.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match message::text(&message::NAMES, self.number(), message::NAME) { Some(name) => name, None => "" }
            }

            /// What the rule forbids, in plain words.
            #[must_use]
            pub const fn description(self) -> &'static str {
                match message::text(&message::DESCRIPTIONS, self.number(), message::DESCRIPTION) {
                    Some(what) => what,
                    None => "",
                }
            }

            /// Every rule's name, in number order, each ending with a NUL: one static string instead of a table
            /// of pointers and lengths (what `match` arms become), from which the C API hands out names.
            const NAMES: &'static str = concat!($(stringify!($name), "\0",)*);

            /// Every rule's id, in number order, each ending with a NUL: what the ids' fixed-width table is made
            /// from at compile time.
            const IDS: &'static str = concat!($($id, "\0",)*);

            /// Every rule's description and context template, in number order, each ending with a NUL; apart
            /// from [`Rule::NAMES`], so that a firmware that prints only ids and names does not link them.
            const DESCRIPTIONS: &'static str = concat!($($what, "\0", $text, "\0",)*);

            /// Every rule's message texts, in number order, each ending with a NUL: its summary (`"{name}:
            /// {what}"`) and its context template. Only read at compile time: the messages print its packed
            /// copy (`error/packed.rs`).
            const MESSAGES: &'static str = concat!($(stringify!($name), ": ", $what, "\0", $text, "\0",)*);
        }

        // The records of `Rule::NAMES` and `Rule::DESCRIPTIONS` are found by number: the numbers must be 1, 2, 3, ... in table order.
        #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects, clippy::as_conversions)]
        const _: () = {
            let mut i = 0;
            while i < Rule::ALL.len() {
                assert!(Rule::ALL[i].number() as usize == i + 1, "rules are not numbered 1, 2, 3, ...");
                // And each has its texts: the empty fallbacks of `id`, `name` and `description` never happen.
                assert!(!Rule::ALL[i].id().is_empty() && !Rule::ALL[i].name().is_empty());
                assert!(!Rule::ALL[i].description().is_empty());
                i += 1;
            }
        };

        impl Error {
            /// The spec rule this error reports.
            #[must_use]
            pub const fn rule(&self) -> Rule {
                match self { $(Error::$name { .. } => Rule::$name,)* }
            }

            /// Where the error is, as plain optional fields: what a binding copies into its own error type,
            /// field for field, without matching on the rule.
            #[must_use]
            pub fn context(&self) -> ErrorContext {
                let mut context = ErrorContext::default();
                match *self {
                    $(Error::$name { $($field,)* $($nesting)? } => {
                        $(context.$slot = Some($field.into());)*
                        $($nesting.put(&mut context);)?
                    })*
                }
                // R39's entry is the outermost container's, which holds the broken one.
                if let Error::NestedInvalid { entry, .. } = *self {
                    context.outer_entry = Some(entry);
                }
                context
            }

            /// The error of `rule` at `context`: the inverse of [`Error::context`], for a binding that keeps
            /// errors as plain fields and wants this crate's message back. `None` when a field the rule's
            /// error carries is missing from `context` or out of its range; fields the rule does not use are
            /// ignored.
            #[must_use]
            pub fn from_context(rule: Rule, context: &ErrorContext) -> Option<Error> {
                Some(match rule {
                    $(Rule::$name => Error::$name {
                        $($field: context.$slot?.try_into().ok()?,)*
                        $($nesting: Nesting::from_context(context)?,)?
                    },)*
                })
            }
        }
    };
}

/// Where an [`Error`] is, as plain fields: each is `Some` exactly when the rule's error carries it
/// ([`Error::context`]). Offsets are bytes from the start of the container being parsed; `value` is the
/// one number the rule is about (a length, a version, a code, a rank, a dimension, an alignment, flags).
///
/// The struct is exhaustive on purpose: a binding destructures it whole, so a slot added for a new rule
/// fails to compile there until the binding copies it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorContext {
    /// An entry, by its position in the table.
    pub entry: Option<u32>,
    /// A metadata record, or a block geometry record, by its position.
    pub record: Option<u32>,
    /// A position in the name index.
    pub position: Option<u32>,
    /// A byte offset.
    pub offset: Option<u64>,
    /// A section.
    pub section: Option<Section>,
    /// The number the rule is about.
    pub value: Option<u64>,
    /// A stored checksum.
    pub stored: Option<u32>,
    /// The checksum computed from the bytes.
    pub computed: Option<u32>,
    /// The nesting depth of the container that breaks the rule (R37, R50: 0 for the container the call was
    /// given, 1 for one nested directly in it, ...), or for R39 of the nested container that breaks
    /// `inner_rule`.
    pub depth: Option<u8>,
    /// For an error found inside a nested container (`depth` 1 or more): the entry of the container the call
    /// was given that holds it, directly or deeper down (for R39 the same as `entry`).
    pub outer_entry: Option<u32>,
    /// The rule a nested container breaks.
    pub inner_rule: Option<Rule>,
}

rules! {
    TooShort = 1, "R1", "the input is shorter than the 160-byte header" { len => value } " (input is {value} bytes)";
    BadMagic = 2, "R2", "the input does not start with the tpack magic" {} "";
    UnsupportedVersion = 3, "R3", "the major version is not 1" { major => value } " (major version {value})";
    HeaderLength = 4, "R4", "header_len is not a multiple of 8 in 160..=4096 (exactly 160 for minor 0)" { header_len => value } " (header_len {value})";
    UnknownIncompatFlags = 5, "R5", "an incompatible-feature flag this reader does not implement is set" { flags => value } " (flags {value:x})";
    DescriptorLength = 6, "R6", "descriptor_len is not 104" { descriptor_len => value } " (descriptor_len {value})";
    ReservedNonZero = 7, "R7", "a reserved header byte is not zero" { offset => offset } " (at byte {offset})";
    Truncated = 8, "R8", "the input is shorter than the container's declared length" { declared => value } " (the header declares {value} bytes)";
    TrailingBytes = 9, "R9", "bytes follow the container's declared end" { declared => value } " (the header declares {value} bytes)";
    SectionBounds = 10, "R10", "a section lies beyond the end of the container" { section => section } " (section {section})";
    SectionLayout = 11, "R11", "a section does not start where the previous one ends" { section => section } " (section {section})";
    SectionLength = 12, "R12", "a section's length does not match the entry count" { section => section } " (section {section})";
    HeaderChecksum = 13, "R13", "the header checksum does not match" { stored => stored, computed => computed } " (stored {stored}, computed {computed})";
    TrailerChecksum = 14, "R14", "the trailer checksum does not match" { stored => stored, computed => computed } " (stored {stored}, computed {computed})";
    NameBounds = 15, "R15", "a name lies beyond the name pool" { entry => entry } " (entry {entry})";
    NamePoolLayout = 16, "R16", "names are not packed in table order" { entry => entry } " (entry {entry})";
    NameLength = 17, "R17", "a name is empty or longer than 1024 bytes" { entry => entry, len => value } " (entry {entry}: {value} bytes)";
    NameUtf8 = 18, "R18", "a name is not valid UTF-8" { entry => entry } " (entry {entry})";
    IndexRange = 19, "R19", "the index is not a permutation of the entries" { position => position } " (index position {position})";
    IndexOrder = 20, "R20", "the index is not sorted by name" { position => position } " (index position {position})";
    DuplicateName = 21, "R21", "two entries have the same name" { entry => entry } " (entry {entry})";
    UnknownDtype = 22, "R22", "an entry has an unknown dtype" { entry => entry, code => value } " (entry {entry}: code {value})";
    RankTooLarge = 23, "R23", "an entry has more than 8 dimensions" { entry => entry, rank => value } " (entry {entry}: rank {value})";
    UnusedDimNonZero = 24, "R24", "a dimension past an entry's rank is not zero" { entry => entry, dim => value } " (entry {entry}: dims[{value}])";
    ShapeOverflow = 25, "R25", "an entry's shape overflows 64 bits" { entry => entry } " (entry {entry})";
    BlockShape = 26, "R26", "a block-quantized entry's innermost dimension is not a whole number of blocks" { entry => entry } " (entry {entry})";
    ByteShape = 27, "R27", "a RAW or CONTAINER entry does not have rank 1" { entry => entry } " (entry {entry})";
    LengthMismatch = 28, "R28", "an entry's byte length does not match its dtype and shape" { entry => entry, expected => value } " (entry {entry}: dtype and shape give {value} bytes)";
    BadAlignment = 29, "R29", "an entry's alignment is not a power of two from 1 to 65536" { entry => entry, alignment => value } " (entry {entry}: alignment {value})";
    Misaligned = 30, "R30", "an entry's offset is not a multiple of its alignment" { entry => entry, offset => offset } " (entry {entry}: offset {offset})";
    EntryFlags = 31, "R31", "an entry has unknown flags, or a target address without the flag" { entry => entry } " (entry {entry})";
    TargetOverflow = 32, "R32", "an entry's target address plus length exceeds 2^64" { entry => entry } " (entry {entry})";
    PayloadBounds = 33, "R33", "a payload lies outside the payload section" { entry => entry } " (entry {entry})";
    PayloadOrder = 34, "R34", "payloads are not in table order" { entry => entry } " (entry {entry})";
    PayloadOverlap = 35, "R35", "two payloads overlap" { entry => entry } " (entry {entry})";
    PaddingNotMinimal = 36, "R36", "a payload is not at the smallest aligned offset after the previous one" { entry => entry } " (entry {entry})";
    PaddingNonZero = 37, "R37", "a padding byte is not zero" { offset => offset } + nesting " (at byte {offset})";
    NestingTooDeep = 38, "R38", "containers are nested more than 8 deep" { entry => entry } " (entry {entry})";
    NestedInvalid = 39, "R39", "a nested container is invalid" { entry => entry, depth => depth, inner => inner_rule } " (entry {entry}, at depth {depth}: {inner})";
    MetaBounds = 40, "R40", "a metadata record, key or value lies beyond the metadata section" { record => record } " (metadata record {record})";
    MetaPoolLayout = 41, "R41", "metadata keys and values are not packed in record order" { record => record } " (metadata record {record})";
    MetaKeyLength = 42, "R42", "a metadata key is empty or longer than 1024 bytes" { record => record } " (metadata record {record})";
    MetaKeyUtf8 = 43, "R43", "a metadata key is not valid UTF-8" { record => record } " (metadata record {record})";
    MetaKeyOrder = 44, "R44", "metadata keys are not sorted" { record => record } " (metadata record {record})";
    MetaDuplicateKey = 45, "R45", "two metadata records have the same key" { record => record } " (metadata record {record})";
    MetaUnknownType = 46, "R46", "a metadata value has an unknown type" { record => record, code => value } " (metadata record {record}: code {value})";
    MetaValueShape = 47, "R47", "a metadata record's fields do not fit its type, or its reserved byte is set" { record => record } " (metadata record {record})";
    MetaBool = 48, "R48", "a metadata bool is neither 0 nor 1" { record => record } " (metadata record {record})";
    MetaUtf8 = 49, "R49", "a metadata string is not valid UTF-8" { record => record } " (metadata record {record})";
    EntryChecksum = 50, "R50", "an entry's payload does not match its checksum" { entry => entry, stored => stored, computed => computed } + nesting " (entry {entry}: stored {stored}, computed {computed})";
    ExtensionLayout = 51, "R51", "the header extension's items do not exactly fill it, or one is malformed" { offset => offset } " (at byte {offset})";
    BlockGeometry = 52, "R52", "a block geometry record is malformed or contradicts a known dtype" { record => record } " (geometry record {record})";
    MissingGeometry = 53, "R53", "a block dtype used in a file of minor version 1 or later has no geometry record" { entry => entry, code => value } " (entry {entry}: dtype code {value})";
    SignedFlag = 54, "R54", "the SIGNED flag, the signature entry and the signed attributes do not agree" {} "";
    SignatureEntry = 55, "R55", "the signature entry is not the one last entry `tpack.signature`, aligned to 8, without a target" { entry => entry } " (entry {entry})";
    SignatureMeta = 56, "R56", "a signed attribute (`tpack.sig.*`) is missing, of the wrong type or length, or unknown" { attribute => value } " ({attribute})";
    SignatureLength = 57, "R57", "the signature entry's length does not fit the entry count and the algorithm" { entry => entry, expected => value } " (entry {entry}: expected {value} bytes)";
    SignatureRequired = 58, "R58", "a signature is required and the container is not signed" {} "";
    UnknownKey = 59, "R59", "the container is signed by a key that is not trusted" {} "";
    AlgorithmMismatch = 60, "R60", "the signature's algorithm is not the trusted key's, or is not implemented" { algorithm => value } " (algorithm {value})";
    SubjectMismatch = 61, "R61", "the signed subject is not the one expected" {} "";
    Rollback = 62, "R62", "the signed security counter is below the minimum accepted" { counter => value } " (counter {value})";
    BadSignature = 63, "R63", "the signature does not verify" {} "";
    EntryDigest = 64, "R64", "an entry's payload does not match its signed digest" { entry => entry } " (entry {entry})";
}

/// Where a payload-integrity error (R37, R50) is in the nesting: in the container the call was given (depth 0),
/// or in a container nested in it `depth` levels down, held — directly or deeper down — by its entry
/// `outer_entry`. [`Container::verify`](crate::Container::verify) and the push decoder verify nested
/// containers too (spec §9) and report what they find there under the integrity rule itself, placed by this.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Nesting {
    depth: u8,
    /// The outermost container's entry; 0 at depth 0, so that equal places compare equal.
    outer_entry: u32,
}

impl Nesting {
    /// The container the call was given.
    pub const OUTERMOST: Nesting = Nesting { depth: 0, outer_entry: 0 };

    /// A container `depth` levels down inside `outer_entry` (which depth 0 ignores).
    #[must_use]
    pub const fn new(depth: u8, outer_entry: u32) -> Nesting {
        if depth == 0 {
            Nesting::OUTERMOST
        } else {
            Nesting { depth, outer_entry }
        }
    }

    /// How deep: 0 for the container the call was given, 1 for one it holds directly.
    #[must_use]
    pub const fn depth(self) -> u8 {
        self.depth
    }

    /// The entry of the container the call was given that holds this one, directly or deeper down; `None` at
    /// depth 0.
    #[must_use]
    pub const fn outer_entry(self) -> Option<u32> {
        if self.depth == 0 {
            None
        } else {
            Some(self.outer_entry)
        }
    }

    /// The same place seen from the container whose entry `entry` holds this one: a level deeper, in `entry`.
    #[must_use]
    pub(crate) const fn held_by(self, entry: u32) -> Nesting {
        Nesting { depth: self.depth.saturating_add(1), outer_entry: entry }
    }

    fn put(self, context: &mut ErrorContext) {
        context.depth = Some(self.depth);
        context.outer_entry = self.outer_entry();
    }

    /// The place `context` gives (depth 0 when it gives no depth); `None` for a depth past the nesting limit,
    /// or a nested one without its outer entry.
    fn from_context(context: &ErrorContext) -> Option<Nesting> {
        match context.depth {
            None | Some(0) => Some(Nesting::OUTERMOST),
            Some(depth) if depth <= crate::format::MAX_NESTING_DEPTH => {
                Some(Nesting { depth, outer_entry: context.outer_entry? })
            }
            Some(_) => None,
        }
    }
}

impl Error {
    /// Where the error is in the nesting: for R37 and R50 the container they were found in, for R39 the
    /// nested container that breaks its inner rule; [`Nesting::OUTERMOST`] for every other rule.
    #[must_use]
    pub const fn nesting(&self) -> Nesting {
        match *self {
            Error::PaddingNonZero { nesting, .. } | Error::EntryChecksum { nesting, .. } => nesting,
            Error::NestedInvalid { entry, depth, .. } => Nesting::new(depth, entry),
            _ => Nesting::OUTERMOST,
        }
    }

    /// This error, found in the container that entry `entry` holds, as the container holding it reports it:
    /// an integrity error (R37, R50) a level deeper inside `entry`; any other unchanged. What
    /// [`Container::verify`](crate::Container::verify) does with a nested container's errors, for a caller
    /// that verifies the nested containers itself (on another thread, say).
    #[must_use]
    pub fn held_by(mut self, entry: u32) -> Error {
        // In place: rebuilding the two variants cost code on a Cortex-M.
        if let Error::PaddingNonZero { nesting, .. } | Error::EntryChecksum { nesting, .. } = &mut self {
            *nesting = nesting.held_by(entry);
        }
        self
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.id(), self.name())
    }
}

/// Why a container was rejected: the rule it breaks (see [`Error::rule`]) and where.
///
/// `entry` is an index into the table, `record` into the metadata records, `position` into the name index;
/// offsets are bytes from the start of the container being parsed, or for R37 and R50 of the nested container
/// their [`Nesting`] places. The context is kept small (24 bytes in all, 16 before R37 and R50 said where in
/// the nesting they are) so that errors move in a few words: what the caller already has — the input's
/// length, the descriptor's stored length — is not repeated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)]
// Field meanings are stated once, above.
// A 4-byte tag aligns the fields, so an error moves in a few word loads instead of a `memcpy` call (which
// costs ~1 KiB of code on a Cortex-M).
#[repr(u32)]
pub enum Error {
    /// R1.
    TooShort { len: u64 },
    /// R2.
    BadMagic,
    /// R3.
    UnsupportedVersion { major: u16 },
    /// R4.
    HeaderLength { header_len: u32 },
    /// R5.
    UnknownIncompatFlags { flags: u64 },
    /// R6.
    DescriptorLength { descriptor_len: u32 },
    /// R7.
    ReservedNonZero { offset: u64 },
    /// R8.
    Truncated { declared: u64 },
    /// R9.
    TrailingBytes { declared: u64 },
    /// R10.
    SectionBounds { section: Section },
    /// R11.
    SectionLayout { section: Section },
    /// R12.
    SectionLength { section: Section },
    /// R13.
    HeaderChecksum { stored: u32, computed: u32 },
    /// R14.
    TrailerChecksum { stored: u32, computed: u32 },
    /// R15.
    NameBounds { entry: u32 },
    /// R16; `entry` equals the entry count when unused bytes follow the last name.
    NamePoolLayout { entry: u32 },
    /// R17.
    NameLength { entry: u32, len: u32 },
    /// R18.
    NameUtf8 { entry: u32 },
    /// R19.
    IndexRange { position: u32 },
    /// R20.
    IndexOrder { position: u32 },
    /// R21; `entry` is one of the two entries.
    DuplicateName { entry: u32 },
    /// R22.
    UnknownDtype { entry: u32, code: u16 },
    /// R23.
    RankTooLarge { entry: u32, rank: u8 },
    /// R24.
    UnusedDimNonZero { entry: u32, dim: u8 },
    /// R25.
    ShapeOverflow { entry: u32 },
    /// R26.
    BlockShape { entry: u32 },
    /// R27.
    ByteShape { entry: u32 },
    /// R28.
    LengthMismatch { entry: u32, expected: u64 },
    /// R29.
    BadAlignment { entry: u32, alignment: u32 },
    /// R30.
    Misaligned { entry: u32, offset: u64 },
    /// R31.
    EntryFlags { entry: u32 },
    /// R32.
    TargetOverflow { entry: u32 },
    /// R33.
    PayloadBounds { entry: u32 },
    /// R34.
    PayloadOrder { entry: u32 },
    /// R35.
    PayloadOverlap { entry: u32 },
    /// R36; `entry` equals the entry count when the payload section runs past the last payload.
    PaddingNotMinimal { entry: u32 },
    /// R37: `offset` is from the start of the container whose padding it is, which `nesting` places.
    PaddingNonZero { offset: u64, nesting: Nesting },
    /// R38.
    NestingTooDeep { entry: u32 },
    /// R39: `entry` is this container's `CONTAINER` entry that holds the broken container, directly or deeper
    /// down; `inner` is the rule that container breaks and `depth` its depth (1 for one held directly by the
    /// outermost container).
    NestedInvalid { entry: u32, depth: u8, inner: Rule },
    /// R40; `record` equals the record count when the records themselves overrun the section.
    MetaBounds { record: u32 },
    /// R41; `record` equals the record count when unused bytes follow the last item.
    MetaPoolLayout { record: u32 },
    /// R42.
    MetaKeyLength { record: u32 },
    /// R43.
    MetaKeyUtf8 { record: u32 },
    /// R44.
    MetaKeyOrder { record: u32 },
    /// R45.
    MetaDuplicateKey { record: u32 },
    /// R46.
    MetaUnknownType { record: u32, code: u8 },
    /// R47.
    MetaValueShape { record: u32 },
    /// R48.
    MetaBool { record: u32 },
    /// R49.
    MetaUtf8 { record: u32 },
    /// R50: `entry` is an entry of the container that `nesting` places.
    EntryChecksum { entry: u32, stored: u32, computed: u32, nesting: Nesting },
    /// R51: `offset` is where the bad item (or its padding) starts.
    ExtensionLayout { offset: u64 },
    /// R52: `record` is the record's position in the table (the table's record count when its length is not
    /// a whole number of records).
    BlockGeometry { record: u32 },
    /// R53.
    MissingGeometry { entry: u32, code: u16 },
    /// R54.
    SignedFlag,
    /// R55.
    SignatureEntry { entry: u32 },
    /// R56: `attribute` is the signed attribute at fault.
    SignatureMeta { attribute: SignedAttribute },
    /// R57: `expected` is the length the entry count and the algorithm give (for an algorithm this crate
    /// does not know, the length of the digests, which the entry must exceed).
    SignatureLength { entry: u32, expected: u64 },
    /// R58.
    SignatureRequired,
    /// R59.
    UnknownKey,
    /// R60: `algorithm` is the container's algorithm code.
    AlgorithmMismatch { algorithm: u64 },
    /// R61.
    SubjectMismatch,
    /// R62: `counter` is the container's signed counter.
    Rollback { counter: u64 },
    /// R63.
    BadSignature,
    /// R64.
    EntryDigest { entry: u32 },
}

/// A signed attribute of spec §14: the metadata key an [`Error::SignatureMeta`] (R56) is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SignedAttribute {
    /// `tpack.sig.alg`: missing, not a `u64`, or an algorithm not defined for the file's minor version.
    Algorithm,
    /// `tpack.sig.key`: missing, or not 32 bytes.
    KeyId,
    /// `tpack.sig.counter`: missing, or not a `u64`.
    Counter,
    /// `tpack.sig.subject`: not a string of 1 to 255 bytes.
    Subject,
    /// `tpack.sig.pubkey`: not bytes of the algorithm's public key length.
    PublicKey,
    /// A `tpack.sig.` key this version of the format does not define.
    Unknown,
}

impl SignedAttribute {
    const ALL: [SignedAttribute; 6] = [
        SignedAttribute::Algorithm,
        SignedAttribute::KeyId,
        SignedAttribute::Counter,
        SignedAttribute::Subject,
        SignedAttribute::PublicKey,
        SignedAttribute::Unknown,
    ];

    /// The metadata key, or `None` for [`SignedAttribute::Unknown`].
    #[must_use]
    pub const fn key(self) -> Option<&'static str> {
        match self {
            SignedAttribute::Algorithm => Some("tpack.sig.alg"),
            SignedAttribute::KeyId => Some("tpack.sig.key"),
            SignedAttribute::Counter => Some("tpack.sig.counter"),
            SignedAttribute::Subject => Some("tpack.sig.subject"),
            SignedAttribute::PublicKey => Some("tpack.sig.pubkey"),
            SignedAttribute::Unknown => None,
        }
    }
}

/// The attribute's position in [`ErrorContext::value`].
impl From<SignedAttribute> for u64 {
    fn from(attribute: SignedAttribute) -> u64 {
        match attribute {
            SignedAttribute::Algorithm => 0,
            SignedAttribute::KeyId => 1,
            SignedAttribute::Counter => 2,
            SignedAttribute::Subject => 3,
            SignedAttribute::PublicKey => 4,
            SignedAttribute::Unknown => 5,
        }
    }
}

impl TryFrom<u64> for SignedAttribute {
    type Error = ();
    fn try_from(value: u64) -> Result<Self, ()> {
        SignedAttribute::ALL.into_iter().find(|a| u64::from(*a) == value).ok_or(())
    }
}

/// The rule's message at this error's context: [`Rule::write_message`].
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.rule().write_message(&self.context(), f)
    }
}

impl core::error::Error for Error {}

/// Why a dtype and shape give no byte length ([`Dtype::byte_len`](crate::Dtype::byte_len)); each names the rule of spec §12.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShapeError {
    /// R22: the dtype code is not one this crate knows.
    UnknownDtype,
    /// R23: more than [`MAX_RANK`](crate::format::MAX_RANK) dimensions.
    RankTooLarge,
    /// R25: the element count or the byte length overflows `u64`.
    Overflow,
    /// R26: a block dtype with rank 0, or an innermost dimension that is not a whole number of blocks.
    PartialBlock,
    /// R27: a `RAW` or `CONTAINER` entry whose rank is not 1.
    NotRankOne,
}

impl ShapeError {
    /// The spec rule the shape breaks.
    #[must_use]
    pub const fn rule(self) -> Rule {
        match self {
            ShapeError::UnknownDtype => Rule::UnknownDtype,
            ShapeError::RankTooLarge => Rule::RankTooLarge,
            ShapeError::Overflow => Rule::ShapeOverflow,
            ShapeError::PartialBlock => Rule::BlockShape,
            ShapeError::NotRankOne => Rule::ByteShape,
        }
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.rule().write_summary(f)
    }
}

impl core::error::Error for ShapeError {}
