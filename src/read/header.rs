//! The groups *header* (R1–R9), *sections* (R10–R12) and *checksums* (R13–R14) of spec §12, in number order:
//! everything that locates the sections and proves the checksummed region intact.

use zerocopy::little_endian::U32;
use zerocopy::FromBytes;

use crate::checksum::{crc32, header_crc};
use crate::error::Error;
use crate::format::{
    Descriptor, Header, Section, SectionRef, DESCRIPTOR_LEN, HEADER_LEN_V1, INDEX_SLOT_LEN,
    KNOWN_INCOMPAT_FLAGS, MAGIC, MAX_HEADER_LEN, TRAILER_SLOT_LEN, VERSION_MAJOR,
};
use crate::layout::{len_u64, slice};

/// The sections of a container whose header, layout and checksums are valid, cast to their types.
pub(crate) struct Sections<'a> {
    pub(crate) header: &'a Header,
    pub(crate) table: &'a [Descriptor],
    pub(crate) index: &'a [U32],
    pub(crate) names: &'a [u8],
    /// The metadata section: records, then pool. Its split is a metadata rule (R40), checked later.
    pub(crate) metadata: &'a [u8],
    /// `[offset, end)` of the payload section.
    pub(crate) payloads: Bounds,
    /// One stored CRC per entry.
    pub(crate) checksums: &'a [U32],
}

/// A section's `[offset, end)`, from a header that R10 accepted (so the sum cannot overflow).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub(crate) offset: u64,
    pub(crate) end: u64,
}

impl From<&SectionRef> for Bounds {
    fn from(r: &SectionRef) -> Self {
        Bounds { offset: r.offset.get(), end: r.offset.get().saturating_add(r.length.get()) }
    }
}

/// R1–R2: enough bytes for a header, and the magic. The rest of the header is unchecked.
pub(crate) fn read_magic(bytes: &[u8]) -> Result<&Header, Error> {
    let Ok((header, _)) = Header::ref_from_prefix(bytes) else {
        return Err(Error::TooShort { len: len_u64(bytes.len()) });
    };
    if header.magic != MAGIC {
        return Err(Error::BadMagic);
    }
    Ok(header)
}

/// R1–R3: enough bytes for a header, the magic, the major version.
pub(crate) fn read_header(bytes: &[u8]) -> Result<&Header, Error> {
    let header = read_magic(bytes)?;
    if header.version_major.get() != VERSION_MAJOR {
        return Err(Error::UnsupportedVersion { major: header.version_major.get() });
    }
    Ok(header)
}

/// R1–R14 on a whole container: returns its sections.
pub(super) fn check(bytes: &[u8]) -> Result<Sections<'_>, Error> {
    let header = read_magic(bytes)?;
    if let Err(error) = check_fields(header) {
        if !diagnosable(header, &error) {
            return Err(error);
        }
        // The header diagnosis needs the sections located and the checksummed region in the input.
        check_sections(header).map_err(|_| error)?;
        let [.., metadata, _, _] = &header.sections;
        let region = slice(bytes, 0, Bounds::from(metadata).end).ok_or(error)?;
        return Err(diagnose(error, region));
    }
    check_length(header, len_u64(bytes.len()))?;
    check_sections(header)?;
    // Checksums come before the contents, so a damaged file is reported as damaged, not as whatever nonsense
    // the damage happens to spell.
    let mut sections = check_prefix(bytes, header)?;
    let trailer = Bounds::from(&header.sections[5]);
    sections.checksums = check_trailer(section(bytes, trailer, Section::Trailer)?, sections.table.len())?;
    Ok(sections)
}

/// R13 on the checksummed region at the start of `bytes` (the header, table, index, names and metadata: the
/// *prefix* of a stream, spec §11.2), for a `header` that R1–R12 accepted; returns the sections, without the
/// trailer's checksums (left empty). `bytes` may end anywhere after the metadata.
pub(crate) fn check_prefix<'a>(bytes: &'a [u8], header: &'a Header) -> Result<Sections<'a>, Error> {
    let [table, index, names, metadata, payloads, _] = header.sections.each_ref().map(Bounds::from);
    let region = section(bytes, Bounds { offset: 0, end: metadata.end }, Section::Metadata)?;
    let computed = header_crc(region);
    if computed != header.header_crc.get() {
        return Err(Error::HeaderChecksum { stored: header.header_crc.get(), computed });
    }
    let count = usize::try_from(header.entry_count.get())
        .map_err(|_| Error::SectionLength { section: Section::Table })?;
    let table = <[Descriptor]>::ref_from_bytes_with_elems(section(bytes, table, Section::Table)?, count)
        .map_err(|_| Error::SectionLength { section: Section::Table })?;
    let index = <[U32]>::ref_from_bytes_with_elems(section(bytes, index, Section::Index)?, count)
        .map_err(|_| Error::SectionLength { section: Section::Index })?;
    Ok(Sections {
        header,
        table,
        index,
        names: section(bytes, names, Section::Names)?,
        metadata: section(bytes, metadata, Section::Metadata)?,
        payloads,
        checksums: &[],
    })
}

/// R8–R9: the header's declared length against the input's `actual` length.
pub(crate) fn check_length(header: &Header, actual: u64) -> Result<(), Error> {
    let total = header.total_len.get();
    if actual < total || actual < u64::from(header.header_len.get()) {
        return Err(Error::Truncated { declared: total });
    }
    if actual > total {
        return Err(Error::TrailingBytes { declared: total });
    }
    Ok(())
}

/// R3–R7: the header's own fields, in number order.
pub(crate) fn check_fields(header: &Header) -> Result<(), Error> {
    let major = header.version_major.get();
    if major != VERSION_MAJOR {
        return Err(Error::UnsupportedVersion { major });
    }
    check_header_len(header)?;
    let flags = header.incompat_flags.get();
    if flags & !KNOWN_INCOMPAT_FLAGS != 0 {
        return Err(Error::UnknownIncompatFlags { flags });
    }
    check_descriptor_and_reserved(header)
}

/// R4: the header length, for the file's minor version.
fn check_header_len(header: &Header) -> Result<(), Error> {
    let minor = header.version_minor.get();
    let header_len = header.header_len.get();
    if !header_len.is_multiple_of(8)
        || !(HEADER_LEN_V1..=MAX_HEADER_LEN).contains(&header_len)
        || (minor == 0 && header_len != HEADER_LEN_V1)
    {
        return Err(Error::HeaderLength { header_len });
    }
    Ok(())
}

/// R6–R7: the descriptor length and the reserved bytes.
fn check_descriptor_and_reserved(header: &Header) -> Result<(), Error> {
    if header.descriptor_len.get() != DESCRIPTOR_LEN {
        return Err(Error::DescriptorLength { descriptor_len: header.descriptor_len.get() });
    }
    if let Some(at) = header.reserved.iter().position(|&b| b != 0) {
        let field = core::mem::offset_of!(Header, reserved);
        let offset = field.checked_add(at).and_then(|o| u64::try_from(o).ok()).unwrap_or(u64::MAX);
        return Err(Error::ReservedNonZero { offset });
    }
    Ok(())
}

/// Whether the header diagnosis of spec §12 judges a header of which [`check_fields`] said `error`.
///
/// R3 and R5 send the user for a newer reader, which is wrong advice for a damaged header (one flipped bit of
/// `version_major` or `incompat_flags` breaks them). So R3 or R5 of a header whose R4, R6 and R7 hold waits
/// for the caller to check R10–R12 (which, broken, leave it standing) and then [`diagnose`] the checksum.
pub(crate) fn diagnosable(header: &Header, error: &Error) -> bool {
    matches!(error, Error::UnsupportedVersion { .. } | Error::UnknownIncompatFlags { .. })
        && check_header_len(header).is_ok()
        && check_descriptor_and_reserved(header).is_ok()
}

/// The header diagnosis of spec §12 for a header whose R3 or R5 (`newer`) it judges ([`diagnosable`], sections
/// valid), given its checksummed `region` (header included): R13 when `header_crc` does not match it — the
/// header is damaged, and that is what the user must be told — else `newer`.
pub(crate) fn diagnose(newer: Error, region: &[u8]) -> Error {
    let Ok((header, _)) = Header::ref_from_prefix(region) else { return newer };
    let computed = header_crc(region);
    let stored = header.header_crc.get();
    if computed == stored {
        newer
    } else {
        Error::HeaderChecksum { stored, computed }
    }
}

/// R10–R12, in number order (R10 for every section in layout order, then R11, then R12). Works on the
/// header's own fields: no copies, which on a Cortex-M would pull in `memcpy`.
pub(crate) fn check_sections(header: &Header) -> Result<(), Error> {
    let total = header.total_len.get();
    for (section, r) in Section::ALL.iter().zip(&header.sections) {
        if r.offset.get().checked_add(r.length.get()).is_none_or(|end| end > total) {
            return Err(Error::SectionBounds { section: *section });
        }
    }
    let mut cursor = u64::from(header.header_len.get());
    for (section, r) in Section::ALL.iter().zip(&header.sections) {
        if r.offset.get() != cursor {
            return Err(Error::SectionLayout { section: *section });
        }
        cursor = Bounds::from(r).end;
    }
    if cursor != total {
        return Err(Error::SectionLayout { section: Section::Trailer });
    }
    let [table, index, _, _, _, trailer] = &header.sections;
    let n = u64::from(header.entry_count.get());
    let expect = [
        (Section::Table, table, n.checked_mul(u64::from(DESCRIPTOR_LEN))),
        (Section::Index, index, n.checked_mul(INDEX_SLOT_LEN)),
        (Section::Trailer, trailer, n.checked_add(1).and_then(|k| k.checked_mul(TRAILER_SLOT_LEN))),
    ];
    for (section, r, expected) in expect {
        if expected != Some(r.length.get()) {
            return Err(Error::SectionLength { section });
        }
    }
    Ok(())
}

/// R14: the trailer's last value is the CRC of the `count` values before it; returns those values.
pub(crate) fn check_trailer(trailer: &[u8], count: usize) -> Result<&[U32], Error> {
    let err = Error::SectionLength { section: Section::Trailer };
    let (checksums, stored) = <[U32]>::ref_from_prefix_with_elems(trailer, count).map_err(|_| err)?;
    let stored = U32::read_from_bytes(stored).map_err(|_| err)?.get();
    // R12 made the trailer 4 × (count + 1) bytes, so its first 4 × count bytes are the checksums.
    let computed = crc32(trailer.get(..trailer.len().saturating_sub(4)).unwrap_or(&[]));
    if computed != stored {
        return Err(Error::TrailerChecksum { stored, computed });
    }
    Ok(checksums)
}

/// The bytes of a section that R10–R11 placed inside the container.
fn section(bytes: &[u8], b: Bounds, section: Section) -> Result<&[u8], Error> {
    let err = Error::SectionBounds { section };
    slice(bytes, b.offset, b.end.checked_sub(b.offset).ok_or(err)?).ok_or(err)
}
