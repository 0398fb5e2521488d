//! The writer's sort of entry numbers and metadata records.
//!
//! With `alloc` (servers, large tables) it is `sort_unstable_by`: 3.8× faster than heapsort for the whole
//! write of a 10^6-entry container. Without it (microcontrollers, small tables) it is a heapsort of a few
//! hundred bytes: `sort_unstable_by` instantiates quicksort, insertion sort and heapsort for each of the
//! writer's two sorts, about 10 KB of flash on a Cortex-M4 — more than the whole reader. Both are in place,
//! O(n log n) and allocation-free. The writer sorts by a total order (ties broken by position), so the bytes
//! written do not depend on which one ran.

use core::cmp::Ordering;

/// Sorts `items` in place into ascending order by `compare`, which must be a total order.
pub(crate) fn sort_by<T: Copy>(items: &mut [T], mut compare: impl FnMut(T, T) -> Ordering) {
    #[cfg(feature = "alloc")]
    items.sort_unstable_by(|&a, &b| compare(a, b));
    #[cfg(not(feature = "alloc"))]
    heapsort_by(items, |a, b| compare(a, b) == Ordering::Less);
}

/// Heapsort: sorts `items` in place so that `is_less` holds between no later item and an earlier one.
#[cfg_attr(feature = "alloc", allow(dead_code))]
pub(crate) fn heapsort_by<T: Copy>(items: &mut [T], mut is_less: impl FnMut(T, T) -> bool) {
    let len = items.len();
    for start in (0..len.checked_div(2).unwrap_or(0)).rev() {
        sift_down(items, start, len, &mut is_less);
    }
    for end in (1..len).rev() {
        items.swap(0, end);
        sift_down(items, 0, end, &mut is_less);
    }
}

/// Moves `items[node]` down the max-heap `items[..end]` until both its children are not greater.
#[cfg_attr(feature = "alloc", allow(dead_code))]
fn sift_down<T: Copy>(items: &mut [T], mut node: usize, end: usize, is_less: &mut impl FnMut(T, T) -> bool) {
    loop {
        let Some(left) = node.checked_mul(2).and_then(|v| v.checked_add(1)).filter(|&l| l < end) else {
            return;
        };
        let right = left.saturating_add(1);
        let child = match (items.get(left), items.get(right)) {
            (Some(&l), Some(&r)) if right < end && is_less(l, r) => right,
            _ => left,
        };
        match (items.get(node), items.get(child)) {
            (Some(&parent), Some(&c)) if is_less(parent, c) => {
                items.swap(node, child);
                node = child;
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::heapsort_by;

    #[test]
    fn sorts_like_the_standard_library() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        // Under Miri the 1,000 items (most of the test's time there) are left to the native run.
        let long = if cfg!(miri) { None } else { Some(1000) };
        for len in (0..40).chain([127, 128, 129]).chain(long) {
            let mut items: Vec<u32> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % 50) as u32
                })
                .collect();
            let mut expected = items.clone();
            expected.sort_unstable();
            heapsort_by(&mut items, |a, b| a < b);
            assert_eq!(items, expected, "length {len}");
        }
    }
}
