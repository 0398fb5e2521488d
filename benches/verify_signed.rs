//! Verifying a signed container against one core's SHA-256, and CRC verification of the same bytes unsigned
//! against crc32fast alone, each baseline measured in the same run on the same bytes in memory:
//!
//! - `signed`: a 1 GiB container of 256 entries of 4 MiB, signed (Ed25519). Baseline: `sha2::Sha256` over the
//!   whole file in one call. Measured: `Container::parse` + `authenticate` alone (the fixed cost: the prefix and
//!   the digests hashed, one signature verified), + `Authenticated::verify` (the whole payload-integrity group:
//!   R37, R64, R50), + `verify_entry` for every entry (the lazy path, R64 only), and `verify_entry` on every core
//!   (`std::thread::scope`, entries handed out one at a time).
//! - `signed, one entry`: the same for one entry of 1 GiB (no parallelism to find there).
//! - `unsigned`: the 256-entry container unsigned; `Container::parse` + `verify` against `crc32fast::hash` over
//!   the whole file.
//!
//! Timing: each group's jobs run one after the other in every round (so the machine's load falls on all of them
//! alike); a ratio is the baseline's time over the job's in the same round, and the median over the rounds is
//! reported. Jobs on one thread are timed in CPU time, the job on every core in wall time (see [`Kind`]). With
//! openssl on the PATH, `openssl speed -evp sha256` (16 KiB blocks) is reported for reference, with and without
//! the CPU's SHA extensions: `sha2`'s speed next to them shows which one it runs.
//!
//! Prints a table and one `RESULT {json}` line per figure for `benches/report.py`, and exits 1 if a ratio named
//! in the budget is below it. Settings (environment):
//! - `TPACK_BENCH_SIGNED_MIB` (default 1024): the file size; CI runs 256;
//! - `TPACK_BENCH_SIGNED_ROUNDS` (default 5);
//! - `TPACK_BENCH_SIGNED_BUDGET` (default 0.90): the least speed, relative to SHA-256 alone, of the signed
//!   verification (`authenticate` + `verify`, both containers), and relative to crc32fast of `Container::verify`.
//!
//! `cargo bench -p tpack --bench verify_signed`

use std::hint::black_box;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use sha2::Digest;
use tpack::auth::{Algorithm, Authenticated, Policy, SoftwareCrypto};
use tpack::sign::{SignOptions, SigningKey};
use tpack::write::{EntryDecl, StreamWriter, VecBookkeeping};
use tpack::{Container, Dtype};

/// Entries of the "many entries" container: 4 MiB each at 1 GiB.
const MANY: usize = 256;
/// The job whose speed the budget is about, in the signed groups.
const VERIFY: &str = "parse + authenticate + verify";

fn setting<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Test key 1 of `tests/support/cases/signature.rs`: its seed is SHA-256 of "tpack test key 1".
fn test_key() -> SigningKey {
    let seed: [u8; 32] = sha2::Sha256::digest(b"tpack test key 1").into();
    SigningKey::from_secret_bytes(Algorithm::Ed25519, &seed).unwrap()
}

/// A container of `entries` entries of `total / entries` pseudo-random bytes, signed by `key` if given.
fn container(total: usize, entries: usize, key: Option<&SigningKey>) -> Vec<u8> {
    let payload: Vec<u8> =
        (0..total / entries).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3]).collect();
    let names: Vec<String> = (0..entries).map(|i| format!("blocks.{i}.weight")).collect();
    let mut w = StreamWriter::new(Vec::with_capacity(total + (1 << 20)), VecBookkeeping);
    if let Some(key) = key {
        w.sign(key, &SignOptions { counter: 7, subject: Some("bench".into()), embed_public_key: false })
            .unwrap();
    }
    for name in &names {
        w.declare(EntryDecl::new(name, Dtype::U8, &[payload.len() as u64]).with_alignment(64)).unwrap();
    }
    for _ in 0..entries {
        w.write_entry(&payload).unwrap();
    }
    w.finish().unwrap()
}

fn authenticated<'a>(bytes: &'a [u8], policy: &Policy<'a>) -> Authenticated<'a> {
    let container = Container::parse(bytes).unwrap();
    let checked = container.authenticate(policy, &SoftwareCrypto).unwrap();
    assert!(checked.signer().is_some());
    checked
}

/// `verify_entry` for every entry, on `threads` threads that take the next unchecked entry until none is left.
fn verify_entries_on_threads(checked: &Authenticated<'_>, threads: usize) {
    let next = AtomicUsize::new(0);
    let entries = checked.container().len();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= entries {
                    break;
                }
                black_box(checked.verify_entry(index, &SoftwareCrypto).unwrap());
            });
        }
    });
}

/// How a job compares with its group's baseline.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Over the same bytes on one thread: its speed, the baseline's CPU time over its own.
    Serial,
    /// Over the same bytes on every core: its speed-up, the baseline's wall time over its own.
    Parallel,
    /// A fixed cost under the other jobs (it reads a few bytes only): its CPU time as a share of the baseline's.
    Fixed,
}

/// One measured job: a name, what it runs, and how it compares.
struct Job<'a> {
    name: &'static str,
    run: Box<dyn Fn() + 'a>,
    kind: Kind,
}

fn job<'a>(kind: Kind, name: &'static str, run: impl Fn() + 'a) -> Job<'a> {
    Job { name, run: Box::new(run), kind }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The CPU time of this process so far, in seconds (every thread's; wall time where there is no such clock).
fn cpu_seconds(wall: Instant) -> f64 {
    #[cfg(unix)]
    {
        let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `now` is a valid timespec to write; the clock id is a constant every Unix has.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) } == 0 {
            return now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9;
        }
    }
    wall.elapsed().as_secs_f64()
}

fn result(name: &str, value: f64, unit: &str) {
    println!("RESULT {{\"name\": \"{name}\", \"value\": {value}, \"unit\": \"{unit}\"}}");
}

/// Runs `jobs` (the first is the baseline, on one thread) `rounds` times, each round every job once; prints
/// and reports each job's median wall and CPU times and its median ratio to the baseline, round by round (see
/// [`Kind`]). Speeds on one thread are in CPU time because other processes share this machine's cores: wall
/// time counts the time they run, CPU time only ours. Returns the median ratios, in job order (the baseline's
/// is 1).
fn measure(group: &str, bytes: usize, rounds: usize, jobs: &[Job<'_>]) -> Vec<f64> {
    for j in jobs {
        (j.run)(); // warm-up: page faults, thread start-up, CPU feature detection
    }
    let epoch = Instant::now();
    let mut walls = vec![Vec::new(); jobs.len()];
    let mut cpus = vec![Vec::new(); jobs.len()];
    for _ in 0..rounds {
        for (j, (wall, cpu)) in jobs.iter().zip(walls.iter_mut().zip(&mut cpus)) {
            let (start, start_cpu) = (Instant::now(), cpu_seconds(epoch));
            (j.run)();
            cpu.push(cpu_seconds(epoch) - start_cpu);
            wall.push(start.elapsed().as_secs_f64());
        }
    }
    println!("{group} ({:.0} MiB, median of {rounds} rounds):", bytes as f64 / f64::from(1 << 20));
    println!("  {:<52} {:>9} {:>9} {:>9} {:>9}", "", "wall ms", "CPU ms", "GB/s CPU", "ratio");
    let mut ratios = Vec::new();
    for (j, (wall, cpu)) in jobs.iter().zip(walls.iter().zip(&cpus)) {
        let ratio = median(match j.kind {
            Kind::Serial => cpus[0].iter().zip(cpu).map(|(base, own)| base / own).collect(),
            Kind::Parallel => walls[0].iter().zip(wall).map(|(base, own)| base / own).collect(),
            Kind::Fixed => cpus[0].iter().zip(cpu).map(|(base, own)| own / base).collect(),
        });
        let (wall, cpu) = (median(wall.clone()), median(cpu.clone()));
        println!(
            "  {:<52} {:>9.1} {:>9.1} {:>9} {:>8.1}%{}",
            j.name,
            wall * 1e3,
            cpu * 1e3,
            if j.kind == Kind::Fixed { "—".into() } else { format!("{:.2}", bytes as f64 / cpu / 1e9) },
            ratio * 100.0,
            match j.kind {
                Kind::Serial => " speed",
                Kind::Parallel => " speed-up (wall)",
                Kind::Fixed => " of the baseline's time",
            }
        );
        result(&format!("{group}/{}/wall", j.name), wall, "s");
        result(&format!("{group}/{}/cpu", j.name), cpu, "s");
        result(&format!("{group}/{}/ratio", j.name), ratio, "x");
        ratios.push(ratio);
    }
    ratios
}

/// Prints and reports the one-minute load average (Linux), which tells how many other processes wanted the
/// cores: what a speed-up on every core can reach.
fn report_load_average(when: &str) {
    let load = std::fs::read_to_string("/proc/loadavg").ok();
    if let Some(load) = load.as_deref().and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok()) {
        println!("load average {when}: {load:.2}");
        result(&format!("load average {when}"), load, "processes");
    }
}

/// `openssl speed -evp sha256` with 16 KiB blocks, in bytes per second, if openssl runs here; with
/// `without_sha_extensions`, OpenSSL is told the CPU has no SHA extensions (`OPENSSL_ia32cap`, x86: CPUID leaf 7
/// EBX bit 29), which gives the speed of software SHA-256 to compare `sha2`'s with.
fn openssl_sha256(without_sha_extensions: bool) -> Option<f64> {
    let mut command = Command::new("openssl");
    command.args(["speed", "-evp", "sha256", "-bytes", "16384", "-seconds", "3", "-mr"]);
    if without_sha_extensions {
        command.env("OPENSSL_ia32cap", ":~0x20000000");
    }
    let out = command.output();
    let out = out.ok().filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().find_map(|l| l.strip_prefix("+F:")?.rsplit(':').next()?.parse().ok())
}

fn main() {
    let total: usize = setting::<usize>("TPACK_BENCH_SIGNED_MIB", 1024) << 20;
    let rounds = setting("TPACK_BENCH_SIGNED_ROUNDS", 5usize);
    let budget = setting("TPACK_BENCH_SIGNED_BUDGET", 0.90f64);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let sha_ni = std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|c| c.contains(" sha_ni"));
    println!("verify_signed: {threads} threads; SHA-NI in /proc/cpuinfo: {sha_ni}");
    report_load_average("before");
    result("sha_ni", f64::from(u8::from(sha_ni)), "bool");
    result("threads", threads as f64, "count");
    result("bytes", total as f64, "B");
    let key = test_key();
    let trusted = [key.public().trusted()];
    let policy = Policy { min_counter: 7, subject: Some("bench"), ..Policy::require(&trusted) };
    let mut failures = Vec::new();
    let started = Instant::now();

    for (group, entries) in [("signed", MANY), ("signed, one entry", 1)] {
        let bytes = container(total, entries, Some(&key));
        authenticated(&bytes, &policy).verify(&SoftwareCrypto).unwrap();
        let mut jobs = vec![
            job(Kind::Serial, "baseline: sha2::Sha256 over the file", || {
                black_box(sha2::Sha256::digest(black_box(&bytes)));
            }),
            // The fixed cost under the others: the prefix and the digests hashed, one Ed25519 verification.
            job(Kind::Fixed, "parse + authenticate", || {
                black_box(authenticated(&bytes, &policy));
            }),
            job(Kind::Serial, VERIFY, || {
                authenticated(&bytes, &policy).verify(&SoftwareCrypto).unwrap();
            }),
            job(Kind::Serial, "parse + authenticate + verify_entry each", || {
                let checked = authenticated(&bytes, &policy);
                for index in 0..checked.container().len() {
                    black_box(checked.verify_entry(index, &SoftwareCrypto).unwrap());
                }
            }),
        ];
        if entries > 1 {
            jobs.push(job(Kind::Parallel, "parse + authenticate + verify_entry, every core", || {
                verify_entries_on_threads(&authenticated(&bytes, &policy), threads);
            }));
        }
        let ratios = measure(group, bytes.len(), rounds, &jobs);
        let verify = ratios[jobs.iter().position(|j| j.name == VERIFY).unwrap()];
        if verify < budget {
            failures.push(format!("{group}: authenticate + verify at {:.1}% of SHA-256", verify * 100.0));
        }
    }

    let bytes = container(total, MANY, None);
    let container = Container::parse(&bytes).unwrap();
    assert!(container.signed_attributes().is_none());
    let jobs = [
        job(Kind::Serial, "baseline: crc32fast::hash over the file", || {
            black_box(crc32fast::hash(black_box(&bytes)));
        }),
        job(Kind::Serial, "parse + Container::verify", || {
            Container::parse(&bytes).unwrap().verify().unwrap()
        }),
    ];
    let ratios = measure("unsigned", bytes.len(), rounds, &jobs);
    if ratios[1] < budget {
        failures.push(format!("unsigned: Container::verify at {:.1}% of crc32fast", ratios[1] * 100.0));
    }

    if let Some(speed) = openssl_sha256(false) {
        println!("openssl speed -evp sha256 (16 KiB blocks): {:.2} GB/s", speed / 1e9);
        result("openssl sha256", speed, "B/s");
    }
    if cfg!(target_arch = "x86_64") {
        if let Some(speed) = openssl_sha256(true) {
            println!("the same without SHA extensions (OPENSSL_ia32cap): {:.2} GB/s", speed / 1e9);
            result("openssl sha256 without SHA extensions", speed, "B/s");
        }
    }
    report_load_average("after");
    println!("verify_signed: {:.0} s", started.elapsed().as_secs_f64());
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("verify_signed: FAILED: {f}, under the budget of {:.0}%", budget * 100.0);
        }
        std::process::exit(1);
    }
}
