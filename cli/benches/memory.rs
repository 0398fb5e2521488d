//! Memory and page faults, each measured in a fresh child process with its baseline in the same run:
//!
//! 1. Peak anonymous memory (`RssAnon`, sampled every millisecond from /proc/self/status) while converting a
//!    2 GiB safetensors model to tpack with `tpack convert`'s code, against safetensors' own serializer
//!    (`serialize_to_file`, which streams, and `serialize`, which builds the file in memory) writing the same
//!    model from the same mapped input, and against a child that only maps and parses the input (the process
//!    baseline).
//! 2. Page faults (minor + major) of opening and validating a memory-mapped 4 GiB container
//!    (`MappedFile::open` + a lookup), against the same for a 1 MiB one.
//!
//! Prints one `RESULT {json}` line per figure for `benches/report.py`. Linux only (it reads /proc).
//! `cargo bench -p tpack-cli --bench memory`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use safetensors::tensor::{Dtype as StDtype, TensorView};

#[path = "../tests/common/sparse.rs"]
mod sparse;

use sparse::sparse_container;

const MODEL_BYTES: u64 = 2 << 30;
const TENSORS: u64 = 64;

fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Minor + major page faults of this process so far (`/proc/self/stat`, fields 10 and 12).
fn faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split_whitespace().collect();
    fields[7].parse::<u64>().unwrap() + fields[9].parse::<u64>().unwrap()
}

/// Runs `work` while a thread samples RssAnon every millisecond; returns the peak in KiB.
fn peak_anon_kib(work: impl FnOnce()) -> u64 {
    let peak = Arc::new(AtomicU64::new(status_kib("RssAnon:").unwrap()));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if let Some(now) = status_kib("RssAnon:") {
                    peak.fetch_max(now, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    work();
    if let Some(now) = status_kib("RssAnon:") {
        peak.fetch_max(now, Ordering::Relaxed);
    }
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    peak.load(Ordering::Relaxed)
}

fn map(path: &Path) -> memmap2::Mmap {
    let file = std::fs::File::open(path).unwrap();
    // SAFETY: a read-only map of a file this process made and nothing else writes.
    unsafe { memmap2::Mmap::map(&file).unwrap() }
}

/// The roles a child process plays; the parent prints their results.
fn child(role: &str, input: &Path, output: &Path) {
    let result = match role {
        "baseline" => peak_anon_kib(|| {
            let m = map(input);
            let st = safetensors::SafeTensors::deserialize(&m).unwrap();
            std::hint::black_box(st.len());
        }),
        "tpack" => peak_anon_kib(|| {
            tpack_cli::run_convert(input, output, None, true, None, true).unwrap();
        }),
        "safetensors" => peak_anon_kib(|| {
            let m = map(input);
            let st = safetensors::SafeTensors::deserialize(&m).unwrap();
            let tensors = st.tensors();
            safetensors::serialize_to_file(tensors, None, output).unwrap();
        }),
        "safetensors-in-memory" => peak_anon_kib(|| {
            let m = map(input);
            let st = safetensors::SafeTensors::deserialize(&m).unwrap();
            let bytes = safetensors::serialize(st.tensors(), None).unwrap();
            std::fs::write(output, &bytes).unwrap();
        }),
        "faults" => {
            let before = faults();
            let mapped = tpack::MappedFile::open(input).unwrap();
            let c = mapped.container().unwrap();
            let found = c.get("blocks.3.weight").map(|e| e.byte_len());
            let after = faults();
            assert!(found.is_some());
            after - before
        }
        other => panic!("unknown role {other}"),
    };
    println!("{result}");
}

fn run_child(role: &str, input: &Path, output: &Path) -> u64 {
    let out = Command::new(std::env::current_exe().unwrap())
        .env("TPACK_MEMORY_ROLE", role)
        .arg(input)
        .arg(output)
        .output()
        .unwrap();
    assert!(out.status.success(), "{role}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
}

fn write_model(path: &Path) {
    let per = (MODEL_BYTES / TENSORS) as usize;
    let data: Vec<u8> = (0..per).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3]).collect();
    let names: Vec<String> = (0..TENSORS).map(|i| format!("model.layers.{i}.mlp.weight")).collect();
    let views: Vec<(&str, TensorView<'_>)> = names
        .iter()
        .map(|n| (n.as_str(), TensorView::new(StDtype::F32, vec![per / 4], &data).unwrap()))
        .collect();
    safetensors::serialize_to_file(views, None, path).unwrap();
}

fn result(name: &str, value: f64, unit: &str) {
    println!("RESULT {}", serde_json::json!({"name": name, "value": value, "unit": unit}));
}

fn main() {
    if let Ok(role) = std::env::var("TPACK_MEMORY_ROLE") {
        let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
        child(&role, &args[0], &args[1]);
        return;
    }
    if status_kib("RssAnon:").is_none() {
        println!("memory: no /proc/self/status on this system; skipped");
        return;
    }
    let dir = tempfile::tempdir_in(
        std::env::var_os("TPACK_BENCH_DIR").map_or_else(std::env::temp_dir, PathBuf::from),
    )
    .unwrap();
    let model = dir.path().join("model.safetensors");
    write_model(&model);
    let gib = std::fs::metadata(&model).unwrap().len() as f64 / f64::from(1 << 30);
    println!("memory: converting a {gib:.2} GiB safetensors model ({TENSORS} tensors)");
    let baseline = run_child("baseline", &model, &dir.path().join("unused"));
    let tpack = run_child("tpack", &model, &dir.path().join("model.tpack"));
    let safetensors = run_child("safetensors", &model, &dir.path().join("copy.safetensors"));
    std::fs::remove_file(dir.path().join("copy.safetensors")).ok();
    let in_memory = run_child("safetensors-in-memory", &model, &dir.path().join("copy.safetensors"));
    println!(
        "memory: peak RssAnon: process baseline {baseline} KiB; tpack convert {tpack} KiB; safetensors \
         serialize_to_file {safetensors} KiB; safetensors serialize (in memory) {in_memory} KiB"
    );
    result("convert_peak_anon_safetensors_in_memory_kib", in_memory as f64, "KiB");
    result("convert_peak_anon_baseline_kib", baseline as f64, "KiB");
    result("convert_peak_anon_tpack_kib", tpack as f64, "KiB");
    result("convert_peak_anon_safetensors_kib", safetensors as f64, "KiB");
    result("convert_model_gib", gib, "GiB");
    std::fs::remove_file(dir.path().join("model.tpack")).ok();
    std::fs::remove_file(dir.path().join("copy.safetensors")).ok();
    std::fs::remove_file(&model).ok();

    let small = dir.path().join("small.tpack");
    let large = dir.path().join("large.tpack");
    sparse_container(&small, 4, 1 << 20);
    sparse_container(&large, 4, 4 << 30);
    let unused = dir.path().join("unused");
    let f_small = run_child("faults", &small, &unused);
    let f_large = run_child("faults", &large, &unused);
    println!("memory: page faults to open + validate + look up: 1 MiB container {f_small}, 4 GiB container {f_large}");
    result("open_faults_1mib", f_small as f64, "faults");
    result("open_faults_4gib", f_large as f64, "faults");
    if tpack > 32 * 1024 {
        eprintln!(
            "memory: FAILED: converting peaked at {tpack} KiB of anonymous memory, over the 32 MiB budget"
        );
        std::process::exit(1);
    }
}
