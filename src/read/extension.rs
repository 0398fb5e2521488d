//! The group *extension* (R51–R52, spec §3.4): the items of the header extension of a file of minor version
//! ≥ 1, and the block geometry table among them.

use zerocopy::FromBytes;

use crate::error::Error;
use crate::format::{
    Dtype, ExtensionItem, GeometryRecord, Header, Packing, EXTENSION_ITEM_HEADER_LEN, GEOMETRY_RECORD_LEN,
    HEADER_LEN_V1, MAX_BLOCK_ELEMENTS, TAG_BLOCK_GEOMETRY,
};
use crate::layout::{align_up, len_u64};

/// R51–R52 for the header extension `[160, header_len)` of `bytes`; returns the block geometry records (none
/// without a geometry item). A minor-0 file has no extension (R4 made its `header_len` 160).
pub(super) fn geometry<'a>(bytes: &'a [u8], header: &Header) -> Result<&'a [GeometryRecord], Error> {
    let start = usize::try_from(HEADER_LEN_V1).unwrap_or(usize::MAX);
    let end = usize::try_from(header.header_len.get()).unwrap_or(usize::MAX);
    // R8 made the input at least `header_len` long; the fallback is unreachable.
    let extension = bytes.get(start..end).unwrap_or(&[]);
    let mut at = 0usize;
    let mut previous_tag = 0u32;
    let mut geometry: &[u8] = &[];
    while at < extension.len() {
        let offset = len_u64(at).saturating_add(u64::from(HEADER_LEN_V1));
        let err = Error::ExtensionLayout { offset };
        let rest = extension.get(at..).ok_or(err)?;
        let (item, rest) = ExtensionItem::ref_from_prefix(rest).map_err(|_| err)?;
        let tag = item.tag.get();
        if tag <= previous_tag {
            return Err(err);
        }
        previous_tag = tag;
        let body_len = usize::try_from(item.length.get()).map_err(|_| err)?;
        let body = rest.get(..body_len).ok_or(err)?;
        // Items start at multiples of 8 from the container's start (160 is one), so padding to a multiple of 8
        // from the item's start is padding to one from the container's.
        let item_len = u64::from(EXTENSION_ITEM_HEADER_LEN).saturating_add(len_u64(body_len));
        let padded = align_up(item_len, 8).and_then(|p| usize::try_from(p).ok()).ok_or(err)?;
        let padding = rest.get(body_len..padded.saturating_sub(8)).ok_or(err)?;
        if padding.iter().any(|&b| b != 0) {
            return Err(err);
        }
        if tag == TAG_BLOCK_GEOMETRY {
            geometry = body;
        }
        at = at.saturating_add(padded);
    }
    check_geometry(geometry, header.version_minor.get())
}

/// R52 for the body of a block geometry item of a file of minor version `minor`: a code defined for that minor
/// has its own geometry (a byte dtype, none), any other code is given one by its record (spec §3.4, §10).
fn check_geometry(body: &[u8], minor: u16) -> Result<&[GeometryRecord], Error> {
    // The record a body that is not a multiple of the record length breaks off in.
    let count =
        usize::try_from(GEOMETRY_RECORD_LEN).ok().and_then(|len| body.len().checked_div(len)).unwrap_or(0);
    let records = <[GeometryRecord]>::ref_from_bytes(body)
        .map_err(|_| Error::BlockGeometry { record: u32::try_from(count).unwrap_or(u32::MAX) })?;
    let mut previous: Option<u16> = None;
    for (record, r) in (0u32..).zip(records) {
        let err = Error::BlockGeometry { record };
        let dtype = Dtype::from_code(r.dtype.get());
        let elements = r.block_elements.get();
        // The byte dtypes have no geometry. SIGNATURE (code 55) is one from minor 2 on, and undefined in a
        // minor-1 file, where a record may give it a geometry like any undefined code (spec §3.4, §10). (Written
        // for the three codes rather than from `since_minor`, which costs the reader 160 bytes on a Cortex-M.)
        let signature = dtype == Dtype::SIGNATURE;
        let well_formed = previous.is_none_or(|p| p < dtype.code())
            && dtype != Dtype::RAW
            && dtype != Dtype::CONTAINER
            && !(signature && minor >= 2)
            && r.reserved.get() == 0
            && r.reserved2.get() == 0
            && elements.is_power_of_two()
            && elements <= MAX_BLOCK_ELEMENTS
            && r.block_bytes.get() != 0;
        if !well_formed {
            return Err(err);
        }
        if let Some(own) = dtype.packing().filter(|_| !signature) {
            if own != packing_of(r) {
                return Err(err);
            }
        }
        previous = Some(dtype.code());
    }
    Ok(records)
}

/// The packing a well-formed record gives its code.
pub(super) fn packing_of(r: &GeometryRecord) -> Packing {
    match r.block_elements.get() {
        1 => Packing::Element(u64::from(r.block_bytes.get())),
        elements => {
            Packing::Block { block_elems: u64::from(elements), block_bytes: u64::from(r.block_bytes.get()) }
        }
    }
}

/// The record `records` (sorted, validated) has for `dtype`.
pub(super) fn find(records: &[GeometryRecord], dtype: Dtype) -> Option<&GeometryRecord> {
    let at = records.binary_search_by_key(&dtype.code(), |r| r.dtype.get()).ok()?;
    records.get(at)
}
