//! A tensor view over its storage's bytes: where it ends, whether it is one contiguous run, and its
//! elements gathered in row-major order when it is not.

use std::borrow::Cow;

use crate::pickle::TensorView;

/// The number of storage elements the view needs (one past the last element it reads), or `None` if that
/// overflows a u64. A view with a zero-sized dimension needs only its offset.
#[must_use]
pub fn extent(view: &TensorView<'_>) -> Option<u64> {
    if view.size.contains(&0) {
        return Some(view.offset);
    }
    let mut last = view.offset;
    for (&size, &stride) in view.size.iter().zip(&view.stride) {
        last = last.checked_add(size.checked_sub(1)?.checked_mul(stride)?)?;
    }
    last.checked_add(1)
}

/// The number of elements of the view, or `None` on overflow.
#[must_use]
pub fn numel(view: &TensorView<'_>) -> Option<u64> {
    view.size.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
}

/// Whether the view's elements are one run in row-major order: each stride is the product of the sizes
/// inside it (dimensions of size 1 may have any stride).
#[must_use]
pub fn is_contiguous(view: &TensorView<'_>) -> bool {
    let mut expected = 1u64;
    for (&size, &stride) in view.size.iter().zip(&view.stride).rev() {
        if size != 1 && stride != expected {
            return false;
        }
        expected = expected.saturating_mul(size);
    }
    true
}

/// The view's bytes in row-major order, from `storage` (the storage's bytes, `element` bytes each): a
/// slice of it when the view is contiguous, else a copy gathered element by element. `budget` is what may
/// still be copied, reduced by what this copies.
///
/// # Errors
/// `Err(needed)`: the view lies outside `storage`, or its copy needs `needed` bytes, more than `budget`.
pub fn bytes<'a>(
    view: &TensorView<'_>,
    storage: &'a [u8],
    element: u64,
    budget: &mut u64,
) -> Result<Cow<'a, [u8]>, u64> {
    let numel = numel(view).ok_or(u64::MAX)?;
    let len = numel.checked_mul(element).ok_or(u64::MAX)?;
    let end = extent(view).and_then(|e| e.checked_mul(element)).ok_or(u64::MAX)?;
    if end > storage.len() as u64 {
        return Err(end);
    }
    if numel == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    let start = view.offset.checked_mul(element).ok_or(u64::MAX)?;
    if is_contiguous(view) {
        let run = start
            .checked_add(len)
            .and_then(|stop| storage.get(usize::try_from(start).ok()?..usize::try_from(stop).ok()?));
        return run.map(Cow::Borrowed).ok_or(len);
    }
    if len > *budget {
        return Err(len);
    }
    *budget = budget.saturating_sub(len);
    let width = usize::try_from(element).map_err(|_| len)?;
    let mut out = Vec::with_capacity(usize::try_from(len).map_err(|_| len)?);
    let rank = view.size.len();
    let mut index = vec![0u64; rank];
    // Every element's position is at most `extent - 1`, checked above, so these sums cannot overflow.
    let mut at = view.offset;
    loop {
        let from = usize::try_from(at.saturating_mul(element)).map_err(|_| len)?;
        let item = storage.get(from..from.saturating_add(width)).ok_or(len)?;
        out.extend_from_slice(item);
        // Advance the odometer, innermost dimension first.
        let mut dim = rank;
        loop {
            let Some(d) = dim.checked_sub(1) else {
                return Ok(Cow::Owned(out));
            };
            dim = d;
            let (Some(i), Some(&size), Some(&stride)) =
                (index.get_mut(d), view.size.get(d), view.stride.get(d))
            else {
                return Ok(Cow::Owned(out));
            };
            *i = i.saturating_add(1);
            at = at.saturating_add(stride);
            if *i < size {
                break;
            }
            at = at.saturating_sub(stride.saturating_mul(size));
            *i = 0;
        }
    }
}
