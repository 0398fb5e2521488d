//! The arithmetic that the reader and the writers share, so that they cannot disagree: alignment, an entry's
//! element count and byte length (spec §4.1), byte ranges inside a slice, and where a name lies in the pool.
//!
//! Every function is total: an overflow or an out-of-range value is `None` or an error, never a wrap or a
//! panic.

use core::ops::Range;

use crate::error::ShapeError;
use crate::format::{Descriptor, Dtype, Packing, MAX_RANK};

/// `value` rounded up to a multiple of `alignment`, a power of two; `None` on overflow or for alignment 0.
#[must_use]
pub(crate) fn align_up(value: u64, alignment: u64) -> Option<u64> {
    // A power of two (validated by the caller), so the mask is exact and no 64-bit division is needed.
    let mask = alignment.checked_sub(1)?;
    Some(value.checked_add(mask)? & !mask)
}

/// `[offset, offset + length)` as a `Range<usize>` inside a slice of `len` bytes, if it fits.
#[must_use]
pub(crate) fn span(offset: u64, length: u64, len: usize) -> Option<Range<usize>> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(length).ok()?)?;
    (end <= len).then_some(start..end)
}

/// The bytes `[offset, offset + length)` of `bytes`, if they are all inside it.
#[must_use]
pub(crate) fn slice(bytes: &[u8], offset: u64, length: u64) -> Option<&[u8]> {
    bytes.get(span(offset, length, bytes.len())?)
}

/// The element count of a shape: the dimensions multiplied left to right, `None` when a partial product
/// overflows `u64` (R25, which holds even when a later dimension is 0).
#[must_use]
pub(crate) fn element_count(dims: impl Iterator<Item = u64>) -> Option<u64> {
    let mut count = 1u64;
    for d in dims {
        count = count.checked_mul(d)?;
    }
    Some(count)
}

/// The payload length that `dtype` and `dims` (outermost first) give (spec §4.1; rules R25–R27). The rank is
/// not checked here (the caller has: R23).
///
/// # Errors
/// [`ShapeError::UnknownDtype`] for a code without a packing, or the shape rule broken.
pub(crate) fn byte_len(
    dtype: Dtype,
    dims: impl ExactSizeIterator<Item = u64> + DoubleEndedIterator + Clone,
) -> Result<u64, ShapeError> {
    packed_len(dtype.packing().ok_or(ShapeError::UnknownDtype)?, dims)
}

/// The payload length that `packing` and `dims` give (spec §4.1): [`byte_len`] for a packing known from
/// elsewhere (a file's geometry record, spec §3.4).
///
/// # Errors
/// The shape rule broken.
pub(crate) fn packed_len(
    packing: Packing,
    dims: impl ExactSizeIterator<Item = u64> + DoubleEndedIterator + Clone,
) -> Result<u64, ShapeError> {
    let count = element_count(dims.clone()).ok_or(ShapeError::Overflow)?;
    match packing {
        Packing::Element(size) => count.checked_mul(size).ok_or(ShapeError::Overflow),
        Packing::Block { block_elems, block_bytes } => {
            // Block sizes are powers of two (a test checks, and R52 for a file's own geometry), so a mask and a
            // shift replace a 64-bit division, which costs a kilobyte of code on a Cortex-M.
            let innermost = dims.clone().next_back().ok_or(ShapeError::PartialBlock)?;
            let mask = block_elems.checked_sub(1).ok_or(ShapeError::PartialBlock)?;
            if innermost & mask != 0 {
                return Err(ShapeError::PartialBlock);
            }
            count
                .checked_shr(block_elems.trailing_zeros())
                .and_then(|blocks| blocks.checked_mul(block_bytes))
                .ok_or(ShapeError::Overflow)
        }
        Packing::Bytes if dims.len() == 1 => Ok(count),
        Packing::Bytes => Err(ShapeError::NotRankOne),
    }
}

/// Where descriptor `d`'s name lies in the name pool.
#[must_use]
pub(crate) fn name_span(d: &Descriptor) -> Range<u64> {
    let start = u64::from(d.name_offset.get());
    start..start.saturating_add(u64::from(d.name_len.get()))
}

/// Descriptor `d`'s name in `pool`, or empty when it does not lie inside it (never for a validated pool).
#[must_use]
pub(crate) fn name_in<'a>(pool: &'a [u8], d: &Descriptor) -> &'a [u8] {
    slice(pool, u64::from(d.name_offset.get()), u64::from(d.name_len.get())).unwrap_or(&[])
}

/// A length as `u64`. A slice never exceeds `isize::MAX` bytes, so this cannot saturate on any supported
/// target.
#[must_use]
pub(crate) fn len_u64(len: usize) -> u64 {
    u64::try_from(len).unwrap_or(u64::MAX)
}

// The one method of `Dtype` that needs layout arithmetic lives here, so that `format` (the on-disk types)
// depends on nothing.
impl Dtype {
    /// The payload length in bytes of an entry of this dtype with shape `dims` (outermost first), by the
    /// rules of spec §4.1.
    ///
    /// # Errors
    /// A [`ShapeError`] naming the rule the shape breaks: an unknown dtype (R22), more than
    /// [`MAX_RANK`] dimensions (R23), a count or length past `u64` (R25), a block dtype whose innermost
    /// dimension is not a whole number of blocks (R26), a byte dtype whose rank is not 1 (R27).
    pub fn byte_len(self, dims: &[u64]) -> Result<u64, ShapeError> {
        if dims.len() > MAX_RANK {
            return Err(ShapeError::RankTooLarge);
        }
        byte_len(self, dims.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_up_rounds_to_the_next_multiple() {
        assert_eq!(align_up(0, 64), Some(0));
        assert_eq!(align_up(1, 64), Some(64));
        assert_eq!(align_up(64, 64), Some(64));
        assert_eq!(align_up(u64::MAX, 2), None);
        assert_eq!(align_up(5, 0), None);
    }

    #[test]
    fn span_rejects_ranges_past_the_end_and_overflow() {
        assert_eq!(span(2, 3, 5), Some(2..5));
        assert_eq!(span(2, 4, 5), None);
        assert_eq!(span(u64::MAX, 1, 5), None);
    }

    #[test]
    fn byte_len_follows_spec_4_1() {
        assert_eq!(byte_len(Dtype::F32, [2u64, 3].into_iter()), Ok(24));
        assert_eq!(byte_len(Dtype::F32, [].into_iter()), Ok(4));
        assert_eq!(byte_len(Dtype::Q8_0, [2u64, 64].into_iter()), Ok(4 * 34));
        assert_eq!(byte_len(Dtype::Q8_0, [2u64, 48].into_iter()), Err(ShapeError::PartialBlock));
        assert_eq!(byte_len(Dtype::Q8_0, [].into_iter()), Err(ShapeError::PartialBlock));
        assert_eq!(byte_len(Dtype::RAW, [2u64, 2].into_iter()), Err(ShapeError::NotRankOne));
        assert_eq!(byte_len(Dtype::F64, [1u64 << 62].into_iter()), Err(ShapeError::Overflow));
        // A partial product that overflows breaks R25 even when a later dimension is zero.
        assert_eq!(byte_len(Dtype::U8, [1u64 << 40, 1 << 40, 0].into_iter()), Err(ShapeError::Overflow));
        assert_eq!(byte_len(Dtype::from_code(900), [3u64].into_iter()), Err(ShapeError::UnknownDtype));
    }
}
