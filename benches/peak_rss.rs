//! Peak memory of streaming a 2 GiB container to a file: the writer's memory is O(table), never O(payload).
//! Baseline in the same run: the process's peak before writing. Fails (exit 1) past the 32 MiB budget.
//!
//! `cargo bench --bench peak_rss` (Linux: reads VmHWM from /proc/self/status).

use tpack::{AtomicFile, Container, Dtype, MappedFile};

use tpack::write::{EntryDecl, SeekWriter, VecBookkeeping};

const TOTAL: u64 = 2 << 30;
const CHUNK: usize = 1 << 20;
const ENTRIES: u64 = 64;
const BUDGET_KIB: u64 = 32 * 1024;

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    // `cargo bench` passes `--bench`; there is nothing to filter.
    let Some(before) = vm_hwm_kib() else {
        println!("peak_rss: no /proc/self/status on this system; skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.tpack");
    let data: Vec<u8> = (0..CHUNK).map(|i| (i % 251) as u8).collect();
    let mut file = AtomicFile::create(&path).unwrap();
    let mut w = SeekWriter::new(file.sink(), VecBookkeeping);
    let names: Vec<String> = (0..ENTRIES).map(|i| format!("blocks.{i}.weight")).collect();
    for name in &names {
        w.declare(EntryDecl::open_ended(name, Dtype::RAW)).unwrap();
    }
    for _ in 0..ENTRIES {
        for _ in 0..TOTAL / ENTRIES / CHUNK as u64 {
            w.write(&data).unwrap();
        }
        w.end_entry().unwrap();
    }
    drop(w.finish().unwrap());
    file.commit().unwrap();
    let after = vm_hwm_kib().unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let mapped = MappedFile::open(&path).unwrap();
    let c: Container<'_> = mapped.container().unwrap();
    assert_eq!(c.len() as u64, ENTRIES);
    println!(
        "peak_rss: wrote a {:.2} GiB container; peak RSS {} KiB before writing (baseline), {} KiB after: \
         the write added {} KiB ({:.4} of the payload); budget {} KiB",
        size as f64 / f64::from(1 << 30),
        before,
        after,
        after - before,
        (after - before) as f64 * 1024.0 / size as f64,
        BUDGET_KIB
    );
    if after > BUDGET_KIB {
        eprintln!("peak_rss: FAILED: peak RSS {after} KiB is over the {BUDGET_KIB} KiB budget");
        std::process::exit(1);
    }
}
