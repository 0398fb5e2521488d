//! The group *entries* (R22–R32, spec §4): each descriptor on its own.

use super::extension;
use crate::error::{Error, ShapeError};
use crate::format::{
    is_newer_minor, Descriptor, Dtype, GeometryRecord, Packing, FLAG_HAS_TARGET, MAX_ALIGNMENT, MAX_RANK,
};
use crate::layout::{element_count, packed_len};

/// R22–R32 and R53 for every descriptor, in table order; `minor` is the file's minor version, `geometry` its
/// validated block geometry records.
pub(super) fn check(table: &[Descriptor], minor: u16, geometry: &[GeometryRecord]) -> Result<(), Error> {
    for (entry, d) in (0u32..).zip(table) {
        let dtype = Dtype::from_code(d.dtype.get());
        let record = extension::find(geometry, dtype);
        check_shape(entry, d, minor, record)?;
        check_placement(entry, d)?;
        // R53: a file of minor ≥ 1 records the geometry of every block dtype it uses (spec §3.4).
        if minor >= 1 && record.is_none() && matches!(dtype.packing(), Some(Packing::Block { .. })) {
            return Err(Error::MissingGeometry { entry, code: dtype.code() });
        }
    }
    Ok(())
}

/// R22–R28: a known dtype (or a newer minor), the rank, the dims and the length they give — with the file's
/// geometry `record` for a dtype this reader does not know.
fn check_shape(entry: u32, d: &Descriptor, minor: u16, record: Option<&GeometryRecord>) -> Result<(), Error> {
    let dtype = Dtype::from_code(d.dtype.get());
    // Known to this reader and defined for the file's minor version (a 1.1 code in a minor-0 file is not).
    let known = dtype.since_minor().is_some_and(|since| since <= minor);
    if !known && !is_newer_minor(minor) {
        return Err(Error::UnknownDtype { entry, code: dtype.code() });
    }
    let rank = usize::from(d.rank);
    let (dims, unused) = d.dims.split_at_checked(rank).ok_or(Error::RankTooLarge { entry, rank: d.rank })?;
    // An OR over the unused dimensions (no branch per dimension); the position only on failure.
    if unused.iter().fold(0, |any, x| any | x.get()) != 0 {
        let dim = unused.iter().position(|x| x.get() != 0).unwrap_or(0);
        let dim = u8::try_from(dim.saturating_add(rank)).unwrap_or(u8::MAX);
        return Err(Error::UnusedDimNonZero { entry, dim });
    }
    let dims = dims.iter().map(|x| x.get());
    let packing = match (dtype.packing(), record) {
        (Some(packing), _) => packing,
        (None, Some(record)) => extension::packing_of(record),
        (None, None) => {
            // A dtype of a newer minor without a geometry record has no known packing, but its element count
            // must still fit in 64 bits (R25 applies to every entry), so that `Shape::elements` is exact for
            // every entry a reader accepts.
            return match element_count(dims) {
                Some(_) => Ok(()),
                None => Err(Error::ShapeOverflow { entry }),
            };
        }
    };
    match packed_len(packing, dims) {
        Ok(expected) if expected == d.length.get() => Ok(()),
        Ok(expected) => Err(Error::LengthMismatch { entry, expected }),
        Err(ShapeError::PartialBlock) => Err(Error::BlockShape { entry }),
        Err(ShapeError::NotRankOne) => Err(Error::ByteShape { entry }),
        Err(ShapeError::UnknownDtype) => Err(Error::UnknownDtype { entry, code: dtype.code() }),
        Err(ShapeError::RankTooLarge) => Err(Error::RankTooLarge { entry, rank: d.rank }),
        Err(ShapeError::Overflow) => Err(Error::ShapeOverflow { entry }),
    }
}

/// R29–R32: alignment, flags and target.
fn check_placement(entry: u32, d: &Descriptor) -> Result<(), Error> {
    let alignment = d.alignment.get();
    if !alignment.is_power_of_two() || alignment > MAX_ALIGNMENT {
        return Err(Error::BadAlignment { entry, alignment });
    }
    // A power of two (just checked): a mask, not a 64-bit division.
    if d.offset.get() & u64::from(alignment).saturating_sub(1) != 0 {
        return Err(Error::Misaligned { entry, offset: d.offset.get() });
    }
    let target = d.target.get();
    if d.flags & !FLAG_HAS_TARGET != 0 || (d.flags & FLAG_HAS_TARGET == 0 && target != 0) {
        return Err(Error::EntryFlags { entry });
    }
    // target + length may equal 2^64 exactly (a segment ending at the top of the address space).
    let end = u128::from(target).checked_add(u128::from(d.length.get()));
    if end.is_none_or(|end| end > 1u128 << 64) {
        return Err(Error::TargetOverflow { entry });
    }
    Ok(())
}

// `split_at_checked` above relies on `MAX_RANK` being the length of the dims array.
const _: () = assert!(MAX_RANK == 8);
