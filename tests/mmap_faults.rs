//! Opening a memory-mapped container reads its prefix pages only: the page faults of `MappedFile::open` do not
//! grow with the payload. (A test binary of its own, so that no other test's faults are counted.)

// Memory maps, /proc and gigabyte files are outside what Miri interprets.
#![cfg(not(miri))]

use tpack::{AtomicFile, Dtype, EntryDecl, MappedFile, SeekWriter, VecTables};

/// Minor + major page faults of this process so far (Linux `/proc/self/stat`, fields 10 and 12).
fn faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
    Some(fields.get(7)?.parse::<u64>().ok()? + fields.get(9)?.parse::<u64>().ok()?)
}

fn faults_to_open_and_parse(payload: usize) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tpack");
    let mut file = AtomicFile::create(&path).unwrap();
    let mut w = SeekWriter::new(file.sink(), VecTables::new());
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

    let before = faults().expect("/proc/self/stat");
    let mapped = MappedFile::open(&path).unwrap();
    let c = mapped.container().unwrap();
    assert_eq!(c.len(), 4);
    let after = faults().unwrap();
    after - before
}

#[test]
fn opening_faults_do_not_grow_with_the_payload() {
    if faults().is_none() {
        eprintln!("no /proc/self/stat here; skipped");
        return;
    }
    let small = faults_to_open_and_parse(1 << 20);
    let large = faults_to_open_and_parse(256 << 20);
    eprintln!("page faults to open + parse: 1 MiB payload {small}, 256 MiB payload {large}");
    // 256 MiB is 65,536 pages; reading it all would fault thousands of times even with fault-around.
    assert!(large <= small + 16, "1 MiB: {small} faults, 256 MiB: {large} faults");
    assert!(large < 64, "256 MiB: {large} faults");
}
