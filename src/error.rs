//! Errors: one [`Rule`] per validation rule of `spec/FORMAT.md` §12, and the [`Error`] that names the rule a
//! container breaks together with where it breaks it.

use core::fmt;

use crate::format::Section;

macro_rules! rules {
    ($($name:ident = $num:literal, $id:literal, $what:literal;)*) => {
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

            /// The rule's id as the spec and the conformance kit write it: `"R17"`.
            #[must_use]
            pub const fn id(self) -> &'static str {
                match self { $(Rule::$name => $id,)* }
            }

            /// The rule's short name: `"NameLength"`.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self { $(Rule::$name => stringify!($name),)* }
            }

            /// What the rule forbids, in plain words.
            #[must_use]
            pub const fn description(self) -> &'static str {
                match self { $(Rule::$name => $what,)* }
            }
        }
    };
}

rules! {
    TooShort = 1, "R1", "the input is shorter than the 160-byte header";
    BadMagic = 2, "R2", "the input does not start with the tpack magic";
    UnsupportedVersion = 3, "R3", "the major version is not 1";
    HeaderLength = 4, "R4", "header_len is not a multiple of 8 in 160..=4096 (exactly 160 for minor 0)";
    UnknownIncompatFlags = 5, "R5", "an incompatible-feature flag this reader does not implement is set";
    DescriptorLength = 6, "R6", "descriptor_len is not 104";
    ReservedNonZero = 7, "R7", "a reserved header byte is not zero";
    Truncated = 8, "R8", "the input is shorter than the container's declared length";
    TrailingBytes = 9, "R9", "bytes follow the container's declared end";
    SectionBounds = 10, "R10", "a section lies beyond the end of the container";
    SectionLayout = 11, "R11", "a section does not start where the previous one ends";
    SectionLength = 12, "R12", "a section's length does not match the entry count";
    HeaderChecksum = 13, "R13", "the header checksum does not match";
    TrailerChecksum = 14, "R14", "the trailer checksum does not match";
    NameBounds = 15, "R15", "a name lies beyond the name pool";
    NamePoolLayout = 16, "R16", "names are not packed in table order";
    NameLength = 17, "R17", "a name is empty or longer than 1024 bytes";
    NameUtf8 = 18, "R18", "a name is not valid UTF-8";
    IndexRange = 19, "R19", "the index is not a permutation of the entries";
    IndexOrder = 20, "R20", "the index is not sorted by name";
    DuplicateName = 21, "R21", "two entries have the same name";
    UnknownDtype = 22, "R22", "an entry has an unknown dtype";
    RankTooLarge = 23, "R23", "an entry has more than 8 dimensions";
    UnusedDimNonZero = 24, "R24", "a dimension past an entry's rank is not zero";
    ShapeOverflow = 25, "R25", "an entry's shape overflows 64 bits";
    BlockShape = 26, "R26", "a block-quantized entry's innermost dimension is not a whole number of blocks";
    ByteShape = 27, "R27", "a RAW or CONTAINER entry does not have rank 1";
    LengthMismatch = 28, "R28", "an entry's byte length does not match its dtype and shape";
    BadAlignment = 29, "R29", "an entry's alignment is not a power of two from 1 to 65536";
    Misaligned = 30, "R30", "an entry's offset is not a multiple of its alignment";
    EntryFlags = 31, "R31", "an entry has unknown flags, or a target address without the flag";
    TargetOverflow = 32, "R32", "an entry's target address plus length exceeds 2^64";
    PayloadBounds = 33, "R33", "a payload lies outside the payload section";
    PayloadOrder = 34, "R34", "payloads are not in table order";
    PayloadOverlap = 35, "R35", "two payloads overlap";
    PaddingNotMinimal = 36, "R36", "a payload is not at the smallest aligned offset after the previous one";
    PaddingNonZero = 37, "R37", "a padding byte is not zero";
    NestingTooDeep = 38, "R38", "containers are nested more than 8 deep";
    NestedInvalid = 39, "R39", "a nested container is invalid";
    MetaBounds = 40, "R40", "a metadata record, key or value lies beyond the metadata section";
    MetaPoolLayout = 41, "R41", "metadata keys and values are not packed in record order";
    MetaKeyLength = 42, "R42", "a metadata key is empty or longer than 1024 bytes";
    MetaKeyUtf8 = 43, "R43", "a metadata key is not valid UTF-8";
    MetaKeyOrder = 44, "R44", "metadata keys are not sorted";
    MetaDuplicateKey = 45, "R45", "two metadata records have the same key";
    MetaUnknownType = 46, "R46", "a metadata value has an unknown type";
    MetaValueShape = 47, "R47", "a metadata record's fields do not fit its type, or its reserved byte is set";
    MetaBool = 48, "R48", "a metadata bool is neither 0 nor 1";
    MetaUtf8 = 49, "R49", "a metadata string is not valid UTF-8";
    EntryChecksum = 50, "R50", "an entry's payload does not match its checksum";
    ExtensionLayout = 51, "R51", "the header extension's items do not exactly fill it, or one is malformed";
    BlockGeometry = 52, "R52", "a block geometry record is malformed or contradicts a known dtype";
    MissingGeometry = 53, "R53", "a block dtype used in a file of minor version 1 or later has no geometry record";
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.id(), self.name())
    }
}

/// Why a container was rejected: the rule it breaks (see [`Error::rule`]) and where.
///
/// `entry` is an index into the table, `record` into the metadata records, `position` into the name index;
/// offsets are bytes from the start of the container being parsed. The context is kept small (16 bytes in
/// all) so that errors move in registers: what the caller already has — the input's length, the descriptor's
/// stored length — is not repeated.
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
    /// R37.
    PaddingNonZero { offset: u64 },
    /// R38.
    NestingTooDeep { entry: u32 },
    /// R39: `inner` is the rule the nested container breaks, `depth` the nested container's depth.
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
    /// R50.
    EntryChecksum { entry: u32, stored: u32, computed: u32 },
    /// R51: `offset` is where the bad item (or its padding) starts.
    ExtensionLayout { offset: u64 },
    /// R52: `record` is the record's position in the table (the table's record count when its length is not
    /// a whole number of records).
    BlockGeometry { record: u32 },
    /// R53.
    MissingGeometry { entry: u32, code: u16 },
}

impl Error {
    /// The spec rule this error reports.
    #[must_use]
    pub const fn rule(&self) -> Rule {
        match self {
            Error::TooShort { .. } => Rule::TooShort,
            Error::BadMagic => Rule::BadMagic,
            Error::UnsupportedVersion { .. } => Rule::UnsupportedVersion,
            Error::HeaderLength { .. } => Rule::HeaderLength,
            Error::UnknownIncompatFlags { .. } => Rule::UnknownIncompatFlags,
            Error::DescriptorLength { .. } => Rule::DescriptorLength,
            Error::ReservedNonZero { .. } => Rule::ReservedNonZero,
            Error::Truncated { .. } => Rule::Truncated,
            Error::TrailingBytes { .. } => Rule::TrailingBytes,
            Error::SectionBounds { .. } => Rule::SectionBounds,
            Error::SectionLayout { .. } => Rule::SectionLayout,
            Error::SectionLength { .. } => Rule::SectionLength,
            Error::HeaderChecksum { .. } => Rule::HeaderChecksum,
            Error::TrailerChecksum { .. } => Rule::TrailerChecksum,
            Error::NameBounds { .. } => Rule::NameBounds,
            Error::NamePoolLayout { .. } => Rule::NamePoolLayout,
            Error::NameLength { .. } => Rule::NameLength,
            Error::NameUtf8 { .. } => Rule::NameUtf8,
            Error::IndexRange { .. } => Rule::IndexRange,
            Error::IndexOrder { .. } => Rule::IndexOrder,
            Error::DuplicateName { .. } => Rule::DuplicateName,
            Error::UnknownDtype { .. } => Rule::UnknownDtype,
            Error::RankTooLarge { .. } => Rule::RankTooLarge,
            Error::UnusedDimNonZero { .. } => Rule::UnusedDimNonZero,
            Error::ShapeOverflow { .. } => Rule::ShapeOverflow,
            Error::BlockShape { .. } => Rule::BlockShape,
            Error::ByteShape { .. } => Rule::ByteShape,
            Error::LengthMismatch { .. } => Rule::LengthMismatch,
            Error::BadAlignment { .. } => Rule::BadAlignment,
            Error::Misaligned { .. } => Rule::Misaligned,
            Error::EntryFlags { .. } => Rule::EntryFlags,
            Error::TargetOverflow { .. } => Rule::TargetOverflow,
            Error::PayloadBounds { .. } => Rule::PayloadBounds,
            Error::PayloadOrder { .. } => Rule::PayloadOrder,
            Error::PayloadOverlap { .. } => Rule::PayloadOverlap,
            Error::PaddingNotMinimal { .. } => Rule::PaddingNotMinimal,
            Error::PaddingNonZero { .. } => Rule::PaddingNonZero,
            Error::NestingTooDeep { .. } => Rule::NestingTooDeep,
            Error::NestedInvalid { .. } => Rule::NestedInvalid,
            Error::MetaBounds { .. } => Rule::MetaBounds,
            Error::MetaPoolLayout { .. } => Rule::MetaPoolLayout,
            Error::MetaKeyLength { .. } => Rule::MetaKeyLength,
            Error::MetaKeyUtf8 { .. } => Rule::MetaKeyUtf8,
            Error::MetaKeyOrder { .. } => Rule::MetaKeyOrder,
            Error::MetaDuplicateKey { .. } => Rule::MetaDuplicateKey,
            Error::MetaUnknownType { .. } => Rule::MetaUnknownType,
            Error::MetaValueShape { .. } => Rule::MetaValueShape,
            Error::MetaBool { .. } => Rule::MetaBool,
            Error::MetaUtf8 { .. } => Rule::MetaUtf8,
            Error::EntryChecksum { .. } => Rule::EntryChecksum,
            Error::ExtensionLayout { .. } => Rule::ExtensionLayout,
            Error::BlockGeometry { .. } => Rule::BlockGeometry,
            Error::MissingGeometry { .. } => Rule::MissingGeometry,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = self.rule();
        write!(f, "{}: {}", rule, rule.description())?;
        match *self {
            Error::TooShort { len } => write!(f, " (input is {len} bytes)"),
            Error::BadMagic => Ok(()),
            Error::UnsupportedVersion { major } => write!(f, " (major version {major})"),
            Error::HeaderLength { header_len } => write!(f, " (header_len {header_len})"),
            Error::UnknownIncompatFlags { flags } => write!(f, " (flags {flags:#x})"),
            Error::DescriptorLength { descriptor_len } => {
                write!(f, " (descriptor_len {descriptor_len})")
            }
            Error::BlockGeometry { record } => write!(f, " (geometry record {record})"),
            Error::MissingGeometry { entry, code } => write!(f, " (entry {entry}: dtype code {code})"),
            Error::ReservedNonZero { offset }
            | Error::PaddingNonZero { offset }
            | Error::ExtensionLayout { offset } => {
                write!(f, " (at byte {offset})")
            }
            Error::Truncated { declared } | Error::TrailingBytes { declared } => {
                write!(f, " (the header declares {declared} bytes)")
            }
            Error::SectionBounds { section }
            | Error::SectionLayout { section }
            | Error::SectionLength { section } => write!(f, " (section {})", section.name()),
            Error::HeaderChecksum { stored, computed } | Error::TrailerChecksum { stored, computed } => {
                write!(f, " (stored {stored:#010x}, computed {computed:#010x})")
            }
            Error::EntryChecksum { entry, stored, computed } => {
                write!(f, " (entry {entry}: stored {stored:#010x}, computed {computed:#010x})")
            }
            Error::NameLength { entry, len } => write!(f, " (entry {entry}: {len} bytes)"),
            Error::IndexRange { position } | Error::IndexOrder { position } => {
                write!(f, " (index position {position})")
            }
            Error::UnknownDtype { entry, code } => write!(f, " (entry {entry}: code {code})"),
            Error::RankTooLarge { entry, rank } => write!(f, " (entry {entry}: rank {rank})"),
            Error::UnusedDimNonZero { entry, dim } => write!(f, " (entry {entry}: dims[{dim}])"),
            Error::LengthMismatch { entry, expected } => {
                write!(f, " (entry {entry}: dtype and shape give {expected} bytes)")
            }
            Error::BadAlignment { entry, alignment } => {
                write!(f, " (entry {entry}: alignment {alignment})")
            }
            Error::Misaligned { entry, offset } => write!(f, " (entry {entry}: offset {offset})"),
            Error::NestedInvalid { entry, depth, inner } => {
                write!(f, " (entry {entry}, at depth {depth}: {inner}: {})", inner.description())
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
            | Error::NestingTooDeep { entry } => write!(f, " (entry {entry})"),
            Error::MetaUnknownType { record, code } => {
                write!(f, " (metadata record {record}: code {code})")
            }
            Error::MetaBounds { record }
            | Error::MetaPoolLayout { record }
            | Error::MetaKeyLength { record }
            | Error::MetaKeyUtf8 { record }
            | Error::MetaKeyOrder { record }
            | Error::MetaDuplicateKey { record }
            | Error::MetaValueShape { record }
            | Error::MetaBool { record }
            | Error::MetaUtf8 { record } => write!(f, " (metadata record {record})"),
        }
    }
}

impl core::error::Error for Error {}
