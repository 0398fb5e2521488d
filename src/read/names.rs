//! The group *names and index* (R15–R21, spec §5), and lookups by name over the validated index.

use core::cmp::Ordering;

use zerocopy::little_endian::U32;

use crate::error::Error;
use crate::format::{Descriptor, MAX_NAME_LEN};
use crate::layout::{len_u64, name_in, name_span, span};
use crate::utf8::is_boundary;

/// R15–R18: names are packed in table order, non-empty, short enough and UTF-8.
pub(super) fn check_names(table: &[Descriptor], pool: &[u8]) -> Result<(), Error> {
    // One UTF-8 pass over the whole pool (a fast path for ASCII) instead of one call per name. The pool is the
    // names back to back, so when it is valid a name is valid exactly when it starts and ends on character
    // boundaries; only an invalid pool needs the per-name check, to name the entry.
    let text = crate::utf8::is_valid(pool).then_some(pool);
    let mut cursor: u64 = 0;
    for (entry, d) in (0u32..).zip(table) {
        let len = d.name_len.get();
        let at = name_span(d);
        let range = span(at.start, u64::from(len), pool.len()).ok_or(Error::NameBounds { entry })?;
        if at.start != cursor {
            return Err(Error::NamePoolLayout { entry });
        }
        if len == 0 || len > MAX_NAME_LEN {
            return Err(Error::NameLength { entry, len });
        }
        let valid = match text {
            Some(text) => is_boundary(text, range.start) && is_boundary(text, range.end),
            None => pool.get(range).is_some_and(crate::utf8::is_valid),
        };
        if !valid {
            return Err(Error::NameUtf8 { entry });
        }
        cursor = at.end;
    }
    if cursor != len_u64(pool.len()) {
        return Err(Error::NamePoolLayout { entry: u32::try_from(table.len()).unwrap_or(u32::MAX) });
    }
    Ok(())
}

/// R19–R21: the index lists every entry once, in strictly ascending name order.
///
/// Strict ascent makes all listed values distinct, so `n` in-range values are a permutation without a bitmap;
/// each name takes part in at most two comparisons, so the cost is linear in the pool size.
pub(super) fn check_index(table: &[Descriptor], index: &[U32], pool: &[u8]) -> Result<(), Error> {
    let mut previous: Option<(u32, &[u8])> = None;
    for (position, slot) in (0u32..).zip(index) {
        let entry = slot.get();
        let Some(d) = usize::try_from(entry).ok().and_then(|i| table.get(i)) else {
            return Err(Error::IndexRange { position });
        };
        let name = name_in(pool, d);
        if let Some((prev_entry, prev_name)) = previous {
            if prev_entry == entry {
                return Err(Error::IndexRange { position });
            }
            match compare_from(prev_name, name, 0).0 {
                Ordering::Less => {}
                Ordering::Equal => return Err(Error::DuplicateName { entry }),
                Ordering::Greater => return Err(Error::IndexOrder { position }),
            }
        }
        previous = Some((entry, name));
    }
    Ok(())
}

/// The table position of the entry called `wanted`: a binary search over a validated index.
pub(super) fn find(table: &[Descriptor], index: &[U32], pool: &[u8], wanted: &[u8]) -> Option<u32> {
    // Names in a checkpoint share long prefixes (`model.layers.17.self_attn.`). Every name between the bounds
    // shares with `wanted` at least the shorter of the bounds' common prefixes with it, so each comparison
    // starts there instead of at byte 0.
    let (mut lo, mut hi) = (0usize, index.len());
    let (mut common_lo, mut common_hi) = (0usize, 0usize);
    while lo < hi {
        let mid = lo.saturating_add(hi.saturating_sub(lo) / 2);
        let entry = index.get(mid)?.get();
        let d = table.get(usize::try_from(entry).ok()?)?;
        let (order, common) = compare_from(name_in(pool, d), wanted, common_lo.min(common_hi));
        match order {
            Ordering::Less => {
                lo = mid.saturating_add(1);
                common_lo = common;
            }
            Ordering::Greater => {
                hi = mid;
                common_hi = common;
            }
            Ordering::Equal => return Some(entry),
        }
    }
    None
}

/// Compares `a` with `b` as byte strings, knowing their first `skip` bytes are equal; returns the order and
/// the length of their common prefix.
fn compare_from(a: &[u8], b: &[u8], skip: usize) -> (Ordering, usize) {
    let (a_rest, b_rest) = (a.get(skip..).unwrap_or(&[]), b.get(skip..).unwrap_or(&[]));
    // Eight bytes at a time while both have them: one load and compare instead of eight.
    let mut common = skip;
    for (x, y) in a_rest.chunks_exact(8).zip(b_rest.chunks_exact(8)) {
        let word = |c: &[u8]| c.try_into().map_or(0, u64::from_le_bytes);
        let diff = word(x) ^ word(y);
        if diff != 0 {
            // Little-endian words: the lowest set bit is in the first differing byte.
            let at = common.saturating_add(usize::try_from(diff.trailing_zeros() / 8).unwrap_or(0));
            return (a.get(at).cmp(&b.get(at)), at);
        }
        common = common.saturating_add(8);
    }
    let a_tail = a.get(common..).unwrap_or(&[]);
    let b_tail = b.get(common..).unwrap_or(&[]);
    let same = a_tail.iter().zip(b_tail).take_while(|(x, y)| x == y).count();
    let common = common.saturating_add(same);
    let order = match (a.get(common), b.get(common)) {
        (Some(x), Some(y)) => x.cmp(y),
        _ => a.len().cmp(&b.len()),
    };
    (order, common)
}
