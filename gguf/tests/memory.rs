//! The parser's memory does not grow with the metadata arrays of the file: an array is a validated view of
//! the input, so a file of a million nested arrays costs what a file of one does. Measured with a counting
//! global allocator (this test binary's only test, so nothing else allocates meanwhile).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

#[path = "support/hand_made.rs"]
mod hand_made;
use hand_made::HandMadeGguf;

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only the counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A version-3 GGUF file with no tensors and one metadata value `key`, an array of `count` arrays of one
/// `bool` each (as gguf-py writes `[[True]] * count`).
fn nested_arrays(count: u64) -> Vec<u8> {
    const T_BOOL: u32 = 7;
    const T_ARRAY: u32 = 9;
    let mut gguf = HandMadeGguf::v3(0, 1);
    gguf.string("key").u32(T_ARRAY).u32(T_ARRAY).u64(count);
    for _ in 0..count {
        gguf.u32(T_BOOL).u64(1).bytes.push(1);
    }
    gguf.bytes
}

/// The peak of live heap bytes while `bytes` is parsed and every element of its one array is read.
fn peak_while_parsing(bytes: &[u8]) -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let file = tpack_gguf::parse(bytes).unwrap();
    let Some(tpack_gguf::GgufValue::Array(outer)) = file.get("key") else { panic!("no array") };
    let mut trues = 0usize;
    for item in outer.iter() {
        let tpack_gguf::GgufValue::Array(inner) = item else { panic!("not an array") };
        trues += inner.iter().filter(|v| *v == tpack_gguf::GgufValue::Bool(true)).count();
    }
    assert_eq!(trues, outer.len());
    drop(file);
    PEAK.load(Ordering::Relaxed) - before
}

#[test]
fn a_million_nested_arrays_cost_what_ten_do() {
    let small = peak_while_parsing(&nested_arrays(10));
    let large = peak_while_parsing(&nested_arrays(1_000_000));
    // Copied, each of the million arrays took a 32-byte `Vec` and its element (48 MB in all).
    assert!(large <= small + 1024, "{large} bytes at the peak for a million arrays, {small} for ten");
}
