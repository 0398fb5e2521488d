//! On-disk structures and constants of tpack format 1.2 (`spec/FORMAT.md`).
//!
//! This module holds layouts, codes and numbers only; parsing is [`crate::Container::parse`], and the
//! arithmetic on them that reader and writer share is in `layout`. Every struct is a
//! `#[repr(C)]` sequence of `zerocopy` little-endian fields with alignment 1 and no padding, so it can be cast
//! from bytes at any address on any host.

use core::fmt;

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The 8-byte magic that starts every container: `\x89TPK\r\n\x1a\n` (spec §3.1).
pub const MAGIC: [u8; 8] = *b"\x89TPK\r\n\x1a\n";
/// The major version this crate reads and writes.
pub const VERSION_MAJOR: u16 = 1;
/// The highest minor version this crate knows; files of a higher minor are read with the leniency of spec §10.
pub const VERSION_MINOR: u16 = 2;
/// Length of the version 1.0 header, in bytes.
pub const HEADER_LEN_V1: u32 = 160;
/// Largest `header_len` a reader accepts.
pub const MAX_HEADER_LEN: u32 = 4096;
/// Length of one table descriptor, in bytes.
pub const DESCRIPTOR_LEN: u32 = 104;
/// Length of one index slot, in bytes.
pub const INDEX_SLOT_LEN: u64 = 4;
/// Length of one trailer checksum, in bytes.
pub const TRAILER_SLOT_LEN: u64 = 4;
/// Length of one metadata record, in bytes.
pub const META_RECORD_LEN: u32 = 24;
/// Most dimensions an entry may have.
pub const MAX_RANK: usize = 8;
/// Largest payload alignment.
pub const MAX_ALIGNMENT: u32 = 1 << 16;
/// Alignment a writer uses when none is asked for.
pub const DEFAULT_ALIGNMENT: u32 = 64;
/// Longest entry name, in bytes.
pub const MAX_NAME_LEN: u32 = 1024;
/// Longest metadata key, in bytes.
pub const MAX_KEY_LEN: u16 = 1024;
/// Deepest nesting of containers; the outermost container is at depth 0.
pub const MAX_NESTING_DEPTH: u8 = 8;
/// Most levels of `array[]` in one metadata value, the outermost included (minor version ≥ 1).
pub const MAX_ARRAY_DEPTH: u8 = 8;
/// Length of a header-extension item's own header (`tag`, `length`), in bytes (spec §3.4).
pub const EXTENSION_ITEM_HEADER_LEN: u32 = 8;
/// Header-extension tag of the block geometry table (spec §3.4).
pub const TAG_BLOCK_GEOMETRY: u32 = 1;
/// Length of one block geometry record, in bytes.
pub const GEOMETRY_RECORD_LEN: u32 = 16;
/// Largest `block_elements` a geometry record may give.
pub const MAX_BLOCK_ELEMENTS: u32 = 1 << 16;
/// Byte offset of `header_crc` within the header: the checksum skips these four bytes.
pub const HEADER_CRC_OFFSET: usize = 52;
/// `flags` bit of a descriptor: the entry has a load address in `target`.
pub const FLAG_HAS_TARGET: u8 = 1;
/// `compat_flags` bit of a file of minor version ≥ 2: the container is signed (spec §14). It announces the
/// signature; it proves nothing (an attacker clears it as easily as they strip the signature), so whether a
/// signature is required is the verifier's policy, never the file's.
pub const COMPAT_SIGNED: u64 = 1;
/// The name of the signature entry (spec §14): the last entry of a signed container.
pub const SIGNATURE_ENTRY_NAME: &str = "tpack.signature";
/// The alignment of the signature entry (spec §14), pinned so that the signed bytes leave a writer no choice.
pub const SIGNATURE_ALIGNMENT: u32 = 8;
/// The prefix of the metadata keys reserved for the signed attributes, in files of minor version ≥ 2.
pub const SIGNATURE_KEY_PREFIX: &str = "tpack.sig.";
/// Length of a SHA-256 digest, of an entry's digest in the signature entry, and of a key id.
pub const DIGEST_LEN: usize = 32;
/// Length of the signed message `M` (spec §14): the domain, then two SHA-256 digests.
pub const SIGNED_MESSAGE_LEN: usize = 80;
/// The first 16 bytes of the signed message: no tpack signature is a valid signature of anything else.
pub const SIGNATURE_DOMAIN: [u8; 16] = *b"tpack signed v1\0";
/// Incompatible-feature bits this reader implements (none in 1.0).
pub(crate) const KNOWN_INCOMPAT_FLAGS: u64 = 0;

/// Location of one section: `[offset, offset + length)` from the container's start.
#[derive(
    FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
#[repr(C)]
pub struct SectionRef {
    /// Offset of the section's first byte.
    pub offset: U64,
    /// Length of the section in bytes.
    pub length: U64,
}

/// The sections after the header, in their on-disk order (spec §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Section {
    /// Entry descriptors.
    Table = 0,
    /// Entry numbers sorted by name.
    Index = 1,
    /// Entry names in table order.
    Names = 2,
    /// Metadata records and pool.
    Metadata = 3,
    /// Aligned payloads.
    Payloads = 4,
    /// Payload checksums.
    Trailer = 5,
}

impl Section {
    /// All sections in on-disk order.
    pub const ALL: [Section; 6] = [
        Section::Table,
        Section::Index,
        Section::Names,
        Section::Metadata,
        Section::Payloads,
        Section::Trailer,
    ];

    /// The section's name as the spec writes it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Section::Table => "table",
            Section::Index => "index",
            Section::Names => "names",
            Section::Metadata => "metadata",
            Section::Payloads => "payloads",
            Section::Trailer => "trailer",
        }
    }
}

/// The fixed header at offset 0 (spec §3). Later minor versions may append bytes (`header_len > 160`).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug)]
#[repr(C)]
pub struct Header {
    /// Always [`MAGIC`].
    pub magic: [u8; 8],
    /// Major version; 1.
    pub version_major: U16,
    /// Minor version: the writers write the lowest minor that expresses the content (0 for 1.0 dtypes and
    /// metadata types only, 1 when a 1.1 dtype or type is used).
    pub version_minor: U16,
    /// Length of the header in bytes, a multiple of 8 from 160 to 4096.
    pub header_len: U32,
    /// Features a reader must understand; unknown bits mean reject.
    pub incompat_flags: U64,
    /// Features a reader may ignore.
    pub compat_flags: U64,
    /// Length of the whole container in bytes.
    pub total_len: U64,
    /// Number of entries.
    pub entry_count: U32,
    /// Length of one descriptor; [`DESCRIPTOR_LEN`].
    pub descriptor_len: U32,
    /// Number of metadata records.
    pub meta_count: U32,
    /// CRC-32/ISO-HDLC of the checksummed region without these four bytes (spec §3.3).
    pub header_crc: U32,
    /// Table, index, names, metadata, payloads and trailer, in [`Section`] order.
    pub sections: [SectionRef; 6],
    /// Zero.
    pub reserved: [u8; 8],
}

/// One entry's descriptor in the table (spec §4).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Descriptor {
    /// Offset of the name within the name pool.
    pub name_offset: U32,
    /// Length of the name in bytes.
    pub name_len: U32,
    /// Element type code ([`Dtype`]).
    pub dtype: U16,
    /// Number of dimensions, 0 to [`MAX_RANK`].
    pub rank: u8,
    /// Bit 0 is [`FLAG_HAS_TARGET`]; other bits zero.
    pub flags: u8,
    /// Payload alignment in bytes: a power of two up to [`MAX_ALIGNMENT`].
    pub alignment: U32,
    /// Payload offset from the start of the container.
    pub offset: U64,
    /// Payload length in bytes.
    pub length: U64,
    /// Load address; zero unless [`FLAG_HAS_TARGET`] is set.
    pub target: U64,
    /// Shape, outermost first; entries past `rank` are zero.
    pub dims: [U64; MAX_RANK],
}

/// One metadata record (spec §7).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct MetaRecord {
    /// Pool offset of the key.
    pub key_offset: U32,
    /// Key length in bytes, 1 to [`MAX_KEY_LEN`].
    pub key_len: U16,
    /// Value type code ([`MetaType`]).
    pub value_type: u8,
    /// Zero.
    pub reserved: u8,
    /// Pool bytes of a variable value; 0 for a scalar.
    pub value_len: U32,
    /// Pool offset of a variable value; 0 for a scalar.
    pub value_offset: U32,
    /// Scalar value bits; 0 for a variable value.
    pub value: U64,
}

/// The header of one item of the header extension (spec §3.4), followed by `length` bytes of body and zero
/// padding to a multiple of 8.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct ExtensionItem {
    /// What the item is ([`TAG_BLOCK_GEOMETRY`]); 0 is not a tag.
    pub tag: U32,
    /// Length of the body in bytes.
    pub length: U32,
}

/// One record of the block geometry table (spec §3.4): the geometry a file gives a dtype code.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct GeometryRecord {
    /// The dtype code; records are in strictly ascending order of it.
    pub dtype: U16,
    /// Zero.
    pub reserved: U16,
    /// Elements per block: a power of two from 1 to [`MAX_BLOCK_ELEMENTS`]; 1 for an element dtype.
    pub block_elements: U32,
    /// Bytes per block (per element for an element dtype); at least 1.
    pub block_bytes: U32,
    /// Zero.
    pub reserved2: U32,
}

// The spec fixes these sizes; a field edit that changes them must fail to compile. (`as` is the only
// conversion usable in a const context; the values are small constants.)
#[allow(clippy::as_conversions)]
const _: () = {
    assert!(core::mem::size_of::<Header>() == HEADER_LEN_V1 as usize);
    assert!(core::mem::size_of::<Descriptor>() == DESCRIPTOR_LEN as usize);
    assert!(core::mem::size_of::<MetaRecord>() == META_RECORD_LEN as usize);
    assert!(core::mem::size_of::<ExtensionItem>() == EXTENSION_ITEM_HEADER_LEN as usize);
    assert!(core::mem::size_of::<GeometryRecord>() == GEOMETRY_RECORD_LEN as usize);
};

/// Whether a file of minor version `minor` is newer than this reader, which makes unknown dtype and metadata
/// type codes skippable rather than errors (spec §10).
pub(crate) const fn is_newer_minor(minor: u16) -> bool {
    minor > VERSION_MINOR
}

/// How a dtype packs its elements into bytes (spec §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Packing {
    /// A fixed number of bytes per element.
    Element(u64),
    /// `block_bytes` bytes per `block_elems` elements along the innermost dimension.
    Block {
        /// Elements in one block (a power of two).
        block_elems: u64,
        /// Bytes in one block.
        block_bytes: u64,
    },
    /// One byte per element, rank exactly 1 (`RAW` and `CONTAINER`).
    Bytes,
}

impl Packing {
    /// Tag of [`Packing::to_u16`] for a block: bits 9–13 hold log2 of its elements, bits 0–8 its bytes.
    const BLOCK_TAG: u16 = 1 << 14;
    /// [`Packing::to_u16`] of [`Packing::Bytes`].
    const BYTES_CODE: u16 = 1 << 15;

    /// The packing in two bytes, at compile time (a packing out of this range fails the build): `Element(n)`
    /// as `n` (1–255), a block as [`Packing::BLOCK_TAG`] with log2 of its elements (a power of two up to
    /// 2^31) and its bytes (1–511), `Bytes` as [`Packing::BYTES_CODE`]. 0 is no packing.
    #[allow(clippy::arithmetic_side_effects, clippy::as_conversions)] // at compile time only
    const fn to_u16(self) -> u16 {
        match self {
            Packing::Element(bytes) => {
                assert!(bytes >= 1 && bytes <= 0xff);
                bytes as u16
            }
            Packing::Block { block_elems, block_bytes } => {
                assert!(block_elems.is_power_of_two() && block_elems.trailing_zeros() < 32);
                assert!(block_bytes >= 1 && block_bytes <= 0x1ff);
                Self::BLOCK_TAG | ((block_elems.trailing_zeros() as u16) << 9) | block_bytes as u16
            }
            Packing::Bytes => Self::BYTES_CODE,
        }
    }

    /// The packing that [`Packing::to_u16`] gave `code`; `None` for 0.
    #[allow(clippy::as_conversions)] // u16 to u64 and u32, lossless; `From` is not `const`
    const fn from_u16(code: u16) -> Option<Packing> {
        if code == 0 {
            None
        } else if code == Self::BYTES_CODE {
            Some(Packing::Bytes)
        } else if code & Self::BLOCK_TAG != 0 {
            let log2 = ((code >> 9) & 0x1f) as u32;
            Some(Packing::Block { block_elems: 1u64 << log2, block_bytes: (code & 0x1ff) as u64 })
        } else {
            Some(Packing::Element(code as u64))
        }
    }
}

/// Defines a newtype over an on-disk code with a constant per known code, so that every code has exactly one
/// spelling: a known code is one of the constants, any other (from a file of a newer minor version) is a value
/// for which `is_known` is false.
macro_rules! codes {
    (
        $(#[$type_doc:meta])*
        $ty:ident($repr:ty), unknown as $word:literal;
        $($(#[$doc:meta])* $name:ident = $code:literal, $text:literal;)*
    ) => {
        $(#[$type_doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $ty($repr);

        impl $ty {
            $($(#[$doc])* pub const $name: $ty = $ty($code);)*

            /// Every code this crate knows (those of format 1.1 and earlier), in code order.
            pub const ALL: &'static [$ty] = &[$($ty::$name),*];

            /// The value for on-disk code `code`, known or not.
            #[must_use]
            pub const fn from_code(code: $repr) -> $ty {
                $ty(code)
            }

            /// The on-disk code.
            #[must_use]
            pub const fn code(self) -> $repr {
                self.0
            }

            /// Whether this crate knows the code (it is one of `ALL`).
            #[must_use]
            pub const fn is_known(self) -> bool {
                // A match on the codes, not `name().is_some()`: no table of names in a reader that never
                // prints one. (Written as the list of codes, which a later minor may leave gaps in.)
                #[allow(clippy::manual_range_patterns)]
                let known = matches!(self.0, $($code)|*);
                known
            }

            /// The name the spec uses, or `None` for a code this crate does not know.
            #[must_use]
            pub const fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($code => Some($text),)*
                    _ => None,
                }
            }

            /// The value with this spec name; names are case-sensitive.
            #[must_use]
            pub fn from_name(name: &str) -> Option<$ty> {
                match name {
                    $($text => Some($ty::$name),)*
                    _ => None,
                }
            }
        }

        impl fmt::Debug for $ty {
            /// The spec name, or the type and code for a code this crate does not know.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, "{}({})", stringify!($ty), self.0),
                }
            }
        }

        impl fmt::Display for $ty {
            /// The spec name, or a word and the code for a code this crate does not know.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, "{} {}", $word, self.0),
                }
            }
        }
    };
}

/// The dtype codes of spec §4.1, each with how it packs elements into bytes.
macro_rules! dtypes {
    ($($(#[$doc:meta])* $name:ident = $code:literal, $text:literal, $packing:expr;)*) => {
        codes! {
            /// Element type of an entry (spec §4.1): its on-disk code. Match on the constants with a `_` arm.
            ///
            /// `Display` is the spec name (`F32`), or `dtype 77` for a code this crate does not know.
            Dtype(u16), unknown as "dtype";
            $($(#[$doc])* $name = $code, $text;)*
        }

        /// One past the largest known code: [`PACKINGS`]' length (`[0; _]` needs Rust 1.89; the MSRV is 1.88).
        const PACKINGS_LEN: usize = {
            let mut len = 0;
            $(if $code >= len { len = $code + 1; })*
            len
        };

        /// Each known code's packing in two bytes ([`Packing::to_u16`]), by code; 0 for the codes in between.
        /// A table of 104 bytes instead of a match that built each `Packing` in code (366 bytes of flash on a
        /// Cortex-M4).
        const PACKINGS: [u16; PACKINGS_LEN] = {
            let mut table = [0; PACKINGS_LEN];
            $(table[$code] = Packing::to_u16($packing);)*
            table
        };

        impl Dtype {
            /// How the dtype packs elements into bytes, or `None` for a code this crate does not know.
            #[must_use]
            pub const fn packing(self) -> Option<Packing> {
                #[allow(clippy::as_conversions)] // u16 to usize, lossless; `usize::from` is not a `const fn`
                let code = self.0 as usize;
                if code >= PACKINGS.len() {
                    return None;
                }
                #[allow(clippy::indexing_slicing)] // `code` is in range, checked above
                Packing::from_u16(PACKINGS[code])
            }

            /// [`Dtype::packing`] as a match on the codes, what the table replaced: the test compares them.
            #[cfg(test)]
            fn packing_by_match(self) -> Option<Packing> {
                match self.0 {
                    $($code => Some($packing),)*
                    _ => None,
                }
            }
        }

        #[cfg(test)]
        #[test]
        fn packing_table_gives_each_code_its_packing() {
            for code in 0..=u16::MAX {
                let dtype = Dtype::from_code(code);
                assert_eq!(dtype.packing(), dtype.packing_by_match(), "code {code}");
            }
            assert_eq!(Dtype::Q8_K.packing(), Some(Packing::Block { block_elems: 256, block_bytes: 292 }));
            assert_eq!(Dtype::F64.packing(), Some(Packing::Element(8)));
            assert_eq!(Dtype::CONTAINER.packing(), Some(Packing::Bytes));
            assert_eq!(Dtype::from_code(44).packing(), None);
        }
    };
}

dtypes! {
    /// IEEE 754 binary64.
    F64 = 1, "F64", Packing::Element(8);
    /// IEEE 754 binary32.
    F32 = 2, "F32", Packing::Element(4);
    /// IEEE 754 binary16.
    F16 = 3, "F16", Packing::Element(2);
    /// bfloat16.
    BF16 = 4, "BF16", Packing::Element(2);
    /// OCP FP8 E4M3FN.
    F8E4M3 = 5, "F8E4M3", Packing::Element(1);
    /// OCP FP8 E5M2.
    F8E5M2 = 6, "F8E5M2", Packing::Element(1);
    /// Signed 64-bit integer.
    I64 = 7, "I64", Packing::Element(8);
    /// Signed 32-bit integer.
    I32 = 8, "I32", Packing::Element(4);
    /// Signed 16-bit integer.
    I16 = 9, "I16", Packing::Element(2);
    /// Signed 8-bit integer.
    I8 = 10, "I8", Packing::Element(1);
    /// Unsigned 64-bit integer.
    U64 = 11, "U64", Packing::Element(8);
    /// Unsigned 32-bit integer.
    U32 = 12, "U32", Packing::Element(4);
    /// Unsigned 16-bit integer.
    U16 = 13, "U16", Packing::Element(2);
    /// Unsigned 8-bit integer.
    U8 = 14, "U8", Packing::Element(1);
    /// Boolean, one byte per element.
    BOOL = 15, "BOOL", Packing::Element(1);
    /// GGUF Q8_0: blocks of 32 elements in 34 bytes (f16 scale, 32 × i8).
    Q8_0 = 16, "Q8_0", Packing::Block { block_elems: 32, block_bytes: 34 };
    /// GGUF Q4_0: blocks of 32 elements in 18 bytes (f16 scale, 16 bytes of nibbles).
    Q4_0 = 17, "Q4_0", Packing::Block { block_elems: 32, block_bytes: 18 };
    /// Opaque bytes, rank 1.
    RAW = 18, "RAW", Packing::Bytes;
    /// A nested container, rank 1.
    CONTAINER = 19, "CONTAINER", Packing::Bytes;
    /// GGUF Q4_1 (format 1.1): blocks of 32 elements in 20 bytes.
    Q4_1 = 20, "Q4_1", Packing::Block { block_elems: 32, block_bytes: 20 };
    /// GGUF Q5_0 (format 1.1): blocks of 32 elements in 22 bytes.
    Q5_0 = 21, "Q5_0", Packing::Block { block_elems: 32, block_bytes: 22 };
    /// GGUF Q5_1 (format 1.1): blocks of 32 elements in 24 bytes.
    Q5_1 = 22, "Q5_1", Packing::Block { block_elems: 32, block_bytes: 24 };
    /// GGUF Q8_1 (format 1.1): blocks of 32 elements in 36 bytes (ggml's `block_q8_1`).
    Q8_1 = 23, "Q8_1", Packing::Block { block_elems: 32, block_bytes: 36 };
    /// GGUF Q2_K (format 1.1): super-blocks of 256 elements in 84 bytes.
    Q2_K = 24, "Q2_K", Packing::Block { block_elems: 256, block_bytes: 84 };
    /// GGUF Q3_K (format 1.1): super-blocks of 256 elements in 110 bytes.
    Q3_K = 25, "Q3_K", Packing::Block { block_elems: 256, block_bytes: 110 };
    /// GGUF Q4_K (format 1.1): super-blocks of 256 elements in 144 bytes.
    Q4_K = 26, "Q4_K", Packing::Block { block_elems: 256, block_bytes: 144 };
    /// GGUF Q5_K (format 1.1): super-blocks of 256 elements in 176 bytes.
    Q5_K = 27, "Q5_K", Packing::Block { block_elems: 256, block_bytes: 176 };
    /// GGUF Q6_K (format 1.1): super-blocks of 256 elements in 210 bytes.
    Q6_K = 28, "Q6_K", Packing::Block { block_elems: 256, block_bytes: 210 };
    /// GGUF Q8_K (format 1.1): super-blocks of 256 elements in 292 bytes.
    Q8_K = 29, "Q8_K", Packing::Block { block_elems: 256, block_bytes: 292 };
    /// GGUF IQ2_XXS (format 1.1): 256 elements in 66 bytes.
    IQ2_XXS = 30, "IQ2_XXS", Packing::Block { block_elems: 256, block_bytes: 66 };
    /// GGUF IQ2_XS (format 1.1): 256 elements in 74 bytes.
    IQ2_XS = 31, "IQ2_XS", Packing::Block { block_elems: 256, block_bytes: 74 };
    /// GGUF IQ3_XXS (format 1.1): 256 elements in 98 bytes.
    IQ3_XXS = 32, "IQ3_XXS", Packing::Block { block_elems: 256, block_bytes: 98 };
    /// GGUF IQ1_S (format 1.1): 256 elements in 50 bytes.
    IQ1_S = 33, "IQ1_S", Packing::Block { block_elems: 256, block_bytes: 50 };
    /// GGUF IQ4_NL (format 1.1): 32 elements in 18 bytes.
    IQ4_NL = 34, "IQ4_NL", Packing::Block { block_elems: 32, block_bytes: 18 };
    /// GGUF IQ3_S (format 1.1): 256 elements in 110 bytes.
    IQ3_S = 35, "IQ3_S", Packing::Block { block_elems: 256, block_bytes: 110 };
    /// GGUF IQ2_S (format 1.1): 256 elements in 82 bytes.
    IQ2_S = 36, "IQ2_S", Packing::Block { block_elems: 256, block_bytes: 82 };
    /// GGUF IQ4_XS (format 1.1): 256 elements in 136 bytes.
    IQ4_XS = 37, "IQ4_XS", Packing::Block { block_elems: 256, block_bytes: 136 };
    /// GGUF IQ1_M (format 1.1): 256 elements in 56 bytes.
    IQ1_M = 38, "IQ1_M", Packing::Block { block_elems: 256, block_bytes: 56 };
    /// GGUF TQ1_0 (format 1.1): 256 elements in 54 bytes.
    TQ1_0 = 39, "TQ1_0", Packing::Block { block_elems: 256, block_bytes: 54 };
    /// GGUF TQ2_0 (format 1.1): 256 elements in 66 bytes.
    TQ2_0 = 40, "TQ2_0", Packing::Block { block_elems: 256, block_bytes: 66 };
    /// GGUF MXFP4 (format 1.1): 32 elements in 17 bytes (an E8M0 scale, 16 bytes of FP4 pairs).
    MXFP4 = 41, "MXFP4", Packing::Block { block_elems: 32, block_bytes: 17 };
    /// GGUF NVFP4 (format 1.1): 64 elements in 36 bytes (four UE4M3 scales, 32 bytes of FP4 pairs).
    NVFP4 = 42, "NVFP4", Packing::Block { block_elems: 64, block_bytes: 36 };
    /// GGUF Q1_0 (format 1.1): 128 elements in 18 bytes (an F16 scale, 16 bytes of sign bits).
    Q1_0 = 43, "Q1_0", Packing::Block { block_elems: 128, block_bytes: 18 };
    /// complex64 (format 1.1): a binary32 real part, then a binary32 imaginary part.
    C64 = 48, "C64", Packing::Element(8);
    /// OCP E8M0 scale, exponent only (format 1.1).
    F8E8M0 = 49, "F8E8M0", Packing::Element(1);
    /// FP8 E4M3 without infinities or negative zero (format 1.1).
    F8E4M3FNUZ = 50, "F8E4M3FNUZ", Packing::Element(1);
    /// FP8 E5M2 without infinities or negative zero (format 1.1).
    F8E5M2FNUZ = 51, "F8E5M2FNUZ", Packing::Element(1);
    /// OCP FP4 E2M1 (format 1.1): two elements per byte, the first in the low nibble.
    F4E2M1 = 52, "F4E2M1", Packing::Block { block_elems: 2, block_bytes: 1 };
    /// OCP FP6 E2M3 (format 1.1): four elements in three bytes.
    F6E2M3 = 53, "F6E2M3", Packing::Block { block_elems: 4, block_bytes: 3 };
    /// OCP FP6 E3M2 (format 1.1): four elements in three bytes.
    F6E3M2 = 54, "F6E3M2", Packing::Block { block_elems: 4, block_bytes: 3 };
    /// The signature of a signed container (format 1.2, spec §14): the entries' digests, then the signature;
    /// bytes, rank 1. Only the signing writers write it.
    SIGNATURE = 55, "SIGNATURE", Packing::Bytes;
}

codes! {
    /// Type of a metadata value (spec §7.1): its on-disk code. Match on the constants with a `_` arm.
    ///
    /// `Display` is the spec name (`string[]`), or `type 12` for a code this crate does not know.
    MetaType(u8), unknown as "type";
    /// Unsigned 64-bit integer, inline.
    U64 = 1, "u64";
    /// Signed 64-bit integer, inline.
    I64 = 2, "i64";
    /// IEEE binary64, inline.
    F64 = 3, "f64";
    /// Boolean (0 or 1), inline.
    BOOL = 4, "bool";
    /// UTF-8 text in the pool.
    STRING = 5, "string";
    /// Opaque bytes in the pool.
    BYTES = 6, "bytes";
    /// Array of u64 in the pool.
    U64_ARRAY = 7, "u64[]";
    /// Array of i64 in the pool.
    I64_ARRAY = 8, "i64[]";
    /// Array of f64 in the pool.
    F64_ARRAY = 9, "f64[]";
    /// Array of length-prefixed UTF-8 strings in the pool.
    STRING_ARRAY = 10, "string[]";
    /// Unsigned 8-bit integer, in the pool (format 1.1).
    U8 = 11, "u8";
    /// Signed 8-bit integer, in the pool (format 1.1).
    I8 = 12, "i8";
    /// Unsigned 16-bit integer, in the pool (format 1.1).
    U16 = 13, "u16";
    /// Signed 16-bit integer, in the pool (format 1.1).
    I16 = 14, "i16";
    /// Unsigned 32-bit integer, in the pool (format 1.1).
    U32 = 15, "u32";
    /// Signed 32-bit integer, in the pool (format 1.1).
    I32 = 16, "i32";
    /// IEEE binary32, in the pool (format 1.1).
    F32 = 17, "f32";
    /// Array of u8 (format 1.1).
    U8_ARRAY = 18, "u8[]";
    /// Array of i8 (format 1.1).
    I8_ARRAY = 19, "i8[]";
    /// Array of u16 (format 1.1).
    U16_ARRAY = 20, "u16[]";
    /// Array of i16 (format 1.1).
    I16_ARRAY = 21, "i16[]";
    /// Array of u32 (format 1.1).
    U32_ARRAY = 22, "u32[]";
    /// Array of i32 (format 1.1).
    I32_ARRAY = 23, "i32[]";
    /// Array of f32 (format 1.1).
    F32_ARRAY = 24, "f32[]";
    /// Array of booleans, one byte each (format 1.1).
    BOOL_ARRAY = 25, "bool[]";
    /// Array of arrays, each with its own array type (format 1.1).
    ARRAY_ARRAY = 26, "array[]";
}

impl MetaType {
    /// Whether the value is stored inline in the record (rather than in the pool). Types a later minor version
    /// adds are always stored in the pool (spec §10).
    #[must_use]
    pub const fn is_inline(self) -> bool {
        matches!(self, MetaType::U64 | MetaType::I64 | MetaType::F64 | MetaType::BOOL)
    }

    /// The lowest minor version that defines this type: 0 for the types of format 1.0, 1 for those of 1.1,
    /// `None` for a code this crate does not know.
    #[must_use]
    pub const fn since_minor(self) -> Option<u16> {
        match self.0 {
            1..=10 => Some(0),
            11..=26 => Some(1),
            _ => None,
        }
    }

    /// For a type stored in the pool with a fixed width (the 1.1 scalars) or an array of fixed-width
    /// elements: `(element width in bytes, whether it is a single scalar)`. `None` for the others.
    #[must_use]
    pub(crate) const fn pool_width(self) -> Option<(usize, bool)> {
        match self.0 {
            7..=9 => Some((8, false)),
            11 | 12 => Some((1, true)),
            13 | 14 => Some((2, true)),
            15..=17 => Some((4, true)),
            18 | 19 | 25 => Some((1, false)),
            20 | 21 => Some((2, false)),
            22..=24 => Some((4, false)),
            _ => None,
        }
    }

    /// Whether values of this type are arrays (what an `array[]` item may be).
    #[must_use]
    pub const fn is_array(self) -> bool {
        matches!(self.0, 7..=10 | 18..=26)
    }
}

impl Dtype {
    /// The lowest minor version that defines this dtype: 0 for the dtypes of format 1.0, 1 for those of 1.1,
    /// `None` for a code this crate does not know.
    #[must_use]
    pub const fn since_minor(self) -> Option<u16> {
        match self.0 {
            1..=19 => Some(0),
            20..=43 | 48..=54 => Some(1),
            55 => Some(2),
            _ => None,
        }
    }
}
