//! The group *payloads* (R33–R36, spec §6): payloads in table order, each at the smallest aligned offset.
//! Their padding (R37) is checked on verification, which reads the payload section anyway.

use super::header::Bounds;
use crate::error::{Error, Nesting};
use crate::format::Descriptor;
use crate::layout::{align_up, slice};

/// R33–R36 entry by entry in table order, then the end-of-section part of R36.
pub(super) fn check(table: &[Descriptor], section: Bounds) -> Result<(), Error> {
    let mut cursor = section.offset;
    let mut previous_start = section.offset;
    for (entry, d) in (0u32..).zip(table) {
        let start = d.offset.get();
        let end = start.checked_add(d.length.get()).ok_or(Error::PayloadBounds { entry })?;
        if start < section.offset || end > section.end {
            return Err(Error::PayloadBounds { entry });
        }
        if start < previous_start {
            return Err(Error::PayloadOrder { entry });
        }
        if start < cursor {
            return Err(Error::PayloadOverlap { entry });
        }
        let aligned = align_up(cursor, u64::from(d.alignment.get())).ok_or(Error::PayloadBounds { entry })?;
        if start != aligned {
            return Err(Error::PaddingNotMinimal { entry });
        }
        previous_start = start;
        cursor = end;
    }
    if cursor != section.end {
        return Err(Error::PaddingNotMinimal { entry: u32::try_from(table.len()).unwrap_or(u32::MAX) });
    }
    Ok(())
}

/// R37 for the padding `[start, end)` of a container's `bytes`.
pub(crate) fn check_padding(bytes: &[u8], start: u64, end: u64) -> Result<(), Error> {
    let err = Error::PaddingNonZero { offset: start, nesting: Nesting::OUTERMOST };
    let padding = slice(bytes, start, end.checked_sub(start).ok_or(err)?).ok_or(err)?;
    match padding.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(at) => {
            let offset = start.saturating_add(u64::try_from(at).unwrap_or(u64::MAX));
            Err(Error::PaddingNonZero { offset, nesting: Nesting::OUTERMOST })
        }
    }
}
