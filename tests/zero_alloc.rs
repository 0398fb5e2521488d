//! Parsing, verifying and looking up allocate nothing: a counting global allocator sees zero allocations
//! while a container is opened, validated, verified and queried. (A test, not a timing.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use tpack::write::{EntryDecl, StreamWriter, VecBookkeeping};
use tpack::zerocopy::little_endian::U64;
use tpack::{Container, Dtype, MetaValue, StringArray};

struct Counting;

thread_local! {
    /// Allocations made by this thread: tests run in parallel, and only the measured thread's count.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the allocator also runs while thread-locals are being torn down.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn container(entries: usize) -> Vec<u8> {
    let names: Vec<String> = (0..entries).map(|i| format!("model.layers.{i}.mlp.weight")).collect();
    let mut w = StreamWriter::new(Vec::new(), VecBookkeeping);
    for name in &names {
        w.declare(EntryDecl::new(name, Dtype::F32, &[2, 2])).unwrap();
    }
    w.metadata("arch", MetaValue::String("llama")).unwrap();
    w.metadata("sizes", MetaValue::U64Array(&[U64::new(1), U64::new(2), U64::new(3)])).unwrap();
    w.metadata("vocab", MetaValue::StringArray(StringArray::new(&["a", "b"]))).unwrap();
    for _ in 0..entries {
        w.write_entry(&[1; 16]).unwrap();
    }
    w.finish().unwrap()
}

/// Runs `f` and returns how many allocations it made.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

#[test]
fn parse_verify_and_lookups_allocate_nothing() {
    let sizes: &[usize] = if cfg!(miri) { &[0, 10] } else { &[0, 10, 1_000, 100_000] };
    for &entries in sizes {
        let bytes = container(entries);
        let probe = format!("model.layers.{}.mlp.weight", entries / 2);
        let n = allocations_in(|| {
            let c = Container::parse(&bytes).unwrap();
            c.verify().unwrap();
            assert_eq!(c.len(), entries);
            if entries > 0 {
                let e = c.get(&probe).unwrap();
                assert_eq!(e.le::<tpack::zerocopy::little_endian::F32>().unwrap().len(), 4);
                assert!(c.entries().all(|e| e.byte_len() == 16));
            }
            assert!(c.get("missing").is_none());
            assert!(matches!(c.metadata().get("arch"), Some(MetaValue::String("llama"))));
            assert!(
                matches!(c.metadata().get("vocab"), Some(MetaValue::StringArray(items)) if items.count() == 2)
            );
            assert_eq!(c.metadata().iter().count(), 3);
        });
        assert_eq!(n, 0, "{entries} entries: {n} allocations");
    }
}

/// The counter works: the same closure style does see an allocation.
#[test]
fn the_counter_counts() {
    let n = allocations_in(|| drop(std::hint::black_box(vec![1u8; 100])));
    assert!(n >= 1);
}

/// Parsing a damaged file (every error path on the way) allocates nothing either.
#[test]
fn refusing_allocates_nothing() {
    let bytes = container(100);
    let mut cases = Vec::new();
    for at in (0..bytes.len()).step_by(if cfg!(miri) { 997 } else { 97 }) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x40;
        cases.push(damaged);
    }
    cases.push(bytes[..bytes.len() / 2].to_vec());
    let n = allocations_in(|| {
        for case in &cases {
            let _ = Container::parse(case).and_then(|c| c.verify());
        }
    });
    assert_eq!(n, 0);
}
