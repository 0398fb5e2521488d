//! The group *entries* (R22–R32, spec §4): each descriptor on its own.

use crate::error::Error;
use crate::format::{
    is_newer_minor, Descriptor, Dtype, ShapeError, FLAG_HAS_TARGET, MAX_ALIGNMENT, MAX_RANK,
};
use crate::layout::{byte_len, element_count};

/// R22–R32 for every descriptor, in table order; `minor` is the file's minor version.
pub(super) fn check(table: &[Descriptor], minor: u16) -> Result<(), Error> {
    for (entry, d) in (0u32..).zip(table) {
        check_shape(entry, d, minor)?;
        check_placement(entry, d)?;
    }
    Ok(())
}

/// R22–R28: a known dtype (or a newer minor), the rank, the dims and the length they give.
fn check_shape(entry: u32, d: &Descriptor, minor: u16) -> Result<(), Error> {
    let dtype = Dtype::from_code(d.dtype.get());
    if !dtype.is_known() && !is_newer_minor(minor) {
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
    if !dtype.is_known() {
        // A dtype of a newer minor has no known packing, but its element count must still fit in 64 bits
        // (R25 applies to every entry), so that `Shape::elements` is exact for every entry a reader accepts.
        return match element_count(dims) {
            Some(_) => Ok(()),
            None => Err(Error::ShapeOverflow { entry }),
        };
    }
    match byte_len(dtype, dims) {
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
