//! Opening a memory-mapped container reads its prefix pages only: the page faults of `MappedFile::open` do not
//! grow with the payload. (A test binary of its own, so that no other test's faults are counted.)

// Memory maps, /proc and gigabyte files are outside what Miri interprets.
#![cfg(not(miri))]

use tpack::{AtomicFile, Dtype, MappedFile};

use tpack::write::{EntryDecl, SeekWriter, VecBookkeeping};

/// Minor + major page faults of this process so far (Linux `/proc/self/stat`, fields 10 and 12). Panics with
/// the reason when they cannot be read: on Linux that is a broken test, never a reason to pass.
fn faults() -> u64 {
    const STAT: &str = "/proc/self/stat";
    let stat = std::fs::read_to_string(STAT).unwrap_or_else(|e| panic!("{STAT}: {e}"));
    // The command name, field 2, is in parentheses and may hold spaces: count fields after its `) `.
    let (_, after_name) = stat.rsplit_once(") ").unwrap_or_else(|| panic!("{STAT}: no `) ` in {stat:?}"));
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |i: usize| -> u64 {
        let text = fields.get(i).unwrap_or_else(|| panic!("{STAT}: {} fields in {stat:?}", fields.len()));
        text.parse().unwrap_or_else(|e| panic!("{STAT}: field {} {text:?}: {e}", i + 3))
    };
    field(7) + field(9)
}

fn faults_to_open_and_parse(payload: usize) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tpack");
    let mut file = AtomicFile::create(&path).unwrap();
    let mut w = SeekWriter::new(file.sink(), VecBookkeeping);
    for i in 0..4 {
        w.declare(EntryDecl::new(&format!("layer{i}"), Dtype::U8, &[payload as u64 / 4])).unwrap();
    }
    let chunk = vec![1u8; 1 << 20];
    for _ in 0..4 {
        let mut left = payload / 4;
        while left > 0 {
            let n = left.min(chunk.len());
            w.write(&chunk[..n]).unwrap();
            left -= n;
        }
        w.end_entry().unwrap();
    }
    drop(w.finish().unwrap());
    file.commit().unwrap();

    let before = faults();
    let mapped = MappedFile::open(&path).unwrap();
    let c = mapped.container().unwrap();
    assert_eq!(c.len(), 4);
    let after = faults();
    after - before
}

#[test]
// Elsewhere there is no /proc/self/stat to count with; on Linux (CI) the test always runs.
#[cfg_attr(not(target_os = "linux"), ignore = "page faults are counted from Linux's /proc/self/stat")]
fn opening_faults_do_not_grow_with_the_payload() {
    // A counter that never moves would pass the comparison below: first see it count fresh pages.
    let before = faults();
    let mut fresh = vec![0u8; 16 << 20];
    for page in fresh.chunks_mut(4096) {
        page[0] = 1;
    }
    std::hint::black_box(&fresh);
    assert!(faults() > before, "touching 16 MiB of fresh memory counted no page fault");
    let small = faults_to_open_and_parse(1 << 20);
    let large = faults_to_open_and_parse(256 << 20);
    eprintln!("page faults to open + parse: 1 MiB payload {small}, 256 MiB payload {large}");
    // 256 MiB is 65,536 pages; reading it all would fault thousands of times even with fault-around.
    assert!(large <= small + 16, "1 MiB: {small} faults, 256 MiB: {large} faults");
    assert!(large < 64, "256 MiB: {large} faults");
}
