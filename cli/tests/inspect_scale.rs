//! `tpack inspect` at the scale and with the names of real files: hostile text, names the tree must keep
//! apart, a 300-tensor model against a golden text, 100,000 entries, the flags; `verify` of several files.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use proptest::prelude::*;
use serde_json::Value;
use tpack::write::{Builder, NewEntry};
use tpack::zerocopy::little_endian::U64;
use tpack::{Dtype, MetaValue};
use tpack_cli::{run_inspect_with, InspectOptions};
use unicode_width::UnicodeWidthStr;

const WIDTH: usize = 100;

fn container(names: &[&str], meta: &[(&str, MetaValue<'_>)]) -> Vec<u8> {
    let mut b = Builder::new();
    for n in names {
        b.push(NewEntry::new(n, Dtype::F32, &[1], &[0; 4])).unwrap();
    }
    for (k, v) in meta {
        b.metadata(k, *v).unwrap();
    }
    b.finish().unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Characters that must never reach a terminal raw (listed here, not taken from the code under test).
fn is_dangerous(c: char) -> bool {
    let c = u32::from(c);
    c < 0x20
        || (0x7f..=0x9f).contains(&c)
        || (0x202a..=0x202e).contains(&c)
        || (0x2066..=0x2069).contains(&c)
        || [0x200e, 0x200f, 0x061c, 0x2028, 0x2029].contains(&c)
}

#[track_caller]
fn assert_terminal_safe(out: &str) {
    for line in out.split('\n') {
        if let Some(c) = line.chars().find(|&c| is_dangerous(c)) {
            panic!("raw {c:?} in output line {line:?}");
        }
    }
}

#[track_caller]
fn assert_fits(out: &str) {
    for line in out.lines() {
        assert!(line.width() <= WIDTH, "{} columns: {line}", line.width());
    }
}

const HOSTILE: [&str; 9] = [
    "evil\u{1b}[2J\u{1b}]0;pwned\u{7}",
    "cr\rforged: intact",
    "bs\u{8}\u{8}\u{8}x",
    "lf\nentries (0):",
    "c1\u{9b}31m\u{85}\u{7f}",
    "bidi\u{202e}txt.exe\u{202c}",
    "iso\u{2066}late\u{2069}\u{200e}\u{200f}\u{61c}",
    "tab\there\u{0}nul",
    "back\\slash",
];

#[test]
fn hostile_names_keys_and_values_are_escaped_in_every_text_output() {
    let dir = tempfile::tempdir().unwrap();
    let meta = [
        ("key\u{1b}[31m\u{202e}", MetaValue::String("value\u{1b}]8;;http://x\u{7}\r\n")),
        ("plain", MetaValue::String("v\u{2067}\u{9d}")),
    ];
    let path = write(dir.path(), "h\u{1b}[1m.tpack", &container(&HOSTILE, &meta));
    for args in
        [&[][..], &["--flat"], &["--expand", "--depth", "1"], &["--filter", "\u{1b}"], &["--no-tensors"]]
    {
        let mut argv = vec![std::ffi::OsString::from("inspect"), path.clone().into_os_string()];
        argv.extend(args.iter().map(std::ffi::OsString::from));
        let out = assert_ok(&tpack(argv));
        assert_terminal_safe(&out);
        assert_fits(&out);
    }
    let out = assert_ok(&run!("inspect", path));
    for want in
        ["cr\\rforged", "lf\\nentries", "bidi\\u{202e}txt.exe\\u{202c}", "back\\\\slash", "tab\\there\\0nul"]
    {
        assert!(out.contains(want), "lacks {want:?}:\n{out}");
    }
    assert!(out.contains("\"value\\u{1b}]8;;http://x\\u{7}\\r\\n\""), "{out}");
    for name in HOSTILE {
        // In-process: a NUL cannot be passed as an argument.
        let opts = InspectOptions { entry: Some(name.to_owned()), ..InspectOptions::default() };
        assert_terminal_safe(&run_inspect_with(&path, &opts).unwrap());
    }
    let v = assert_ok(&run!("verify", path));
    assert_terminal_safe(&v);
    // JSON keeps the names exact (JSON escapes them itself).
    let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", path, "--json"))).unwrap();
    let names: Vec<&str> =
        doc["entries"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    let mut want = HOSTILE.to_vec();
    want.sort();
    let mut got = names.clone();
    got.sort();
    assert_eq!(got, want);
}

/// The entry names a text report's tree or flat list spells, read back from the drawing alone.
fn spelled(out: &str) -> Vec<String> {
    let mut lines = out.lines().skip_while(|l| !l.starts_with("entries ("));
    lines.next();
    let mut path: Vec<String> = Vec::new();
    let mut names = Vec::new();
    for line in lines.skip(1) {
        let Some(rest) = line.strip_prefix("  ") else { break };
        let chars: Vec<char> = rest.chars().collect();
        let mut depth = 0;
        while chars.len() >= 4 * (depth + 1)
            && matches!(
                chars[4 * depth..4 * depth + 4].iter().collect::<String>().as_str(),
                "│   " | "    " | "├── " | "└── "
            )
        {
            depth += 1;
        }
        let cell: String = chars[4 * depth..].iter().collect();
        let (label, details) = cell.split_once("  ").unwrap_or((&cell, ""));
        path.truncate(depth.saturating_sub(1));
        path.push(label.to_owned());
        if details.trim_start().starts_with("F32") || details.trim_start().starts_with("F16") {
            names.push(if depth == 0 { label.to_owned() } else { path.concat() });
        }
    }
    names
}

#[test]
fn names_the_old_tree_merged_each_get_one_row() {
    let names = ["a.b", "a/b", "model.weight", "model/weight", "model.bias", ".", "..", "/", "//", "a", "a."];
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "m.tpack", &container(&names, &[]));
    let mut want: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
    want.sort();
    for flat in [false, true] {
        let out = assert_ok(&if flat { run!("inspect", path, "--flat") } else { run!("inspect", path) });
        let mut got = spelled(&out);
        got.sort();
        assert_eq!(got, want, "flat {flat}:\n{out}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// Every entry appears exactly once in the text output, and its row's path spells its name.
    #[test]
    fn every_entry_appears_exactly_once(names in proptest::collection::btree_set("[ab./]{1,6}", 1..30)) {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "m.tpack", &container(&names, &[]));
        let out = run_inspect_with(&path, &InspectOptions::default()).unwrap();
        let mut got = spelled(&out);
        got.sort();
        let mut want: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
        want.sort();
        prop_assert_eq!(got, want, "{}", out);
    }
}

/// The 300-tensor GPT-2-like model written by PyPI safetensors (fixtures/make_gpt2.py), in a temp dir.
fn gpt2() -> Option<(tempfile::TempDir, PathBuf)> {
    let python = python()?;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpt2.safetensors");
    let o = std::process::Command::new(python).arg(fixture("make_gpt2.py")).arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some((dir, path))
}

/// Runs `tpack` in `dir`, so that reports name files without the temp dir's path.
fn run_in(dir: &Path, args: &[&str]) -> String {
    assert_ok(&assert_cmd::Command::cargo_bin("tpack").unwrap().current_dir(dir).args(args).output().unwrap())
}

#[track_caller]
fn golden(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("TPACK_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with TPACK_BLESS=1)", path.display()));
    assert_eq!(got, want, "{} is stale (run with TPACK_BLESS=1 to rewrite it)", path.display());
}

#[test]
fn a_300_tensor_model_matches_its_golden_text_within_100_columns() {
    let Some((dir, _)) = gpt2() else { return };
    let d = dir.path();
    let st = run_in(d, &["inspect", "gpt2.safetensors"]);
    run_in(d, &["convert", "gpt2.safetensors", "gpt2.tpack"]);
    let tp = run_in(d, &["inspect", "gpt2.tpack"]);
    for out in [&st, &tp] {
        assert_fits(out);
        assert!(out.contains("entries (300):") && out.contains("totals: 300 entries"), "{out}");
        assert!(out.contains("{3..14}.") && out.contains("--expand"), "{out}");
    }
    golden("gpt2.safetensors.txt", &st);
    golden("gpt2.tpack.txt", &tp);
    // Expanded and flat, every one of the 300 is a row of its own, and still within 100 columns.
    for args in [&["inspect", "gpt2.tpack", "--expand"][..], &["inspect", "gpt2.safetensors", "--flat"]] {
        let out = run_in(d, args);
        assert_fits(&out);
        let rows = spelled(&out);
        assert_eq!(rows.len(), 300, "{args:?}:\n{out}");
        // Rows spell whole names, except the one long name cut in the middle.
        assert_eq!(rows.iter().filter(|r| r.contains('…')).count(), 1, "{rows:?}");
        assert!(rows.contains(&"transformer.h.15.mlp.c_fc.weight_scale".to_owned()), "{rows:?}");
    }
    // Layers in natural order: 2 before 10.
    let flat = run_in(d, &["inspect", "gpt2.tpack", "--flat"]);
    let at = |s: &str| flat.find(s).unwrap_or_else(|| panic!("{s}"));
    assert!(at("transformer.h.2.attn") < at("transformer.h.10.attn"));
    assert!(at("transformer.h.9.mlp") < at("transformer.h.10.attn"));
}

#[test]
fn filter_depth_and_no_tensors() {
    let Some((dir, _)) = gpt2() else { return };
    let d = dir.path();
    let out = run_in(d, &["inspect", "gpt2.safetensors", "--flat", "--filter", "*.h.1?.attn.c_attn.*"]);
    assert!(out.contains("entries (20 of 300 match \"*.h.1?.attn.c_attn.*\"):"), "{out}");
    let out = run_in(d, &["inspect", "gpt2.safetensors", "--filter", "ln_f"]);
    assert!(out.contains("entries (2 of 300 match \"ln_f\"):"), "{out}");
    let out = run_in(d, &["inspect", "gpt2.safetensors", "--no-tensors"]);
    assert!(!out.contains("entries (") && out.contains("totals: 300 entries"), "{out}");
    let out = run_in(d, &["inspect", "gpt2.safetensors", "--depth", "2"]);
    assert!(out.contains("├── h.") && out.contains("(290 entries)") && out.contains("(2 entries)"), "{out}");
    assert_fits(&out);
    let doc: Value =
        serde_json::from_str(&run_in(d, &["inspect", "gpt2.safetensors", "--json", "--filter", "wte"]))
            .unwrap();
    assert_eq!(doc["entries"].as_array().unwrap().len(), 1);
    assert_eq!(doc["totals"]["entries"], 300);
    assert_eq!(doc["totals"]["entries_listed"], 1);
    assert_eq!(doc["format"], "safetensors");
}

#[test]
fn foreign_files_are_inspected_directly() {
    let out = assert_ok(&run!("inspect", fixture("model.gguf")));
    for want in
        ["GGUF", "entries (12):", "blk.0.", "attn_q.weight", "Q8_0", "[8, 64]", "general.architecture"]
    {
        assert!(out.contains(want), "{want}:\n{out}");
    }
    assert_fits(&out);
    let doc: Value =
        serde_json::from_str(&assert_ok(&run!("inspect", fixture("model.gguf"), "--json"))).unwrap();
    assert_eq!(doc["schema"], "tpack-inspect/3");
    assert_eq!(doc["entries"].as_array().unwrap().len(), 12);
    let out = assert_ok(&run!("inspect", fixture("model.safetensors"), "--entry", "layers.0.attn.q.weight"));
    assert!(out.contains("F32") && out.contains("[4, 8] (32 elements)"), "{out}");
}

/// A shard set (a Hugging Face index or its directory, the first split of a split GGUF) is inspected as
/// `convert` reads it: the entries and metadata of the container it converts to.
#[test]
fn shard_sets_are_inspected_as_convert_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let names = |d: &Value| -> Vec<(String, String, Value)> {
        let mut v: Vec<_> = d["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_owned(),
                    e["dtype"].as_str().unwrap().to_owned(),
                    e["shape"].clone(),
                )
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    for (input, files) in [
        (fixture("sharded"), 5),
        (fixture("sharded/model.safetensors.index.json"), 5),
        (fixture("split/model-00001-of-00003.gguf"), 3),
    ] {
        let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", input, "--json"))).unwrap();
        assert_eq!(doc["files"], files, "{}", input.display());
        let out = dir.path().join("set.tpack");
        assert_ok(&run!("convert", input, out, "--force"));
        let converted: Value = serde_json::from_str(&assert_ok(&run!("inspect", out, "--json"))).unwrap();
        assert_eq!(names(&doc), names(&converted), "{}", input.display());
        assert_eq!(doc["totals"]["payload_bytes"], converted["totals"]["payload_bytes"]);
        let text = assert_ok(&run!("inspect", input));
        assert!(text.replace("\n    ", " ").contains(&format!("shard set of {files} files")), "{text}");
        assert_fits(&text);
    }
}

#[test]
fn json_elides_long_arrays_unless_full() {
    let dir = tempfile::tempdir().unwrap();
    let long: Vec<U64> = (0..1000).map(U64::new).collect();
    let tokens: Vec<&str> = (0..500).map(|_| "tok").collect();
    let bytes = container(
        &["w"],
        &[
            ("ids", MetaValue::U64Array(&long)),
            ("short", MetaValue::U64Array(&long[..3])),
            ("vocab", MetaValue::StringArray(tpack::StringArray::new(&tokens))),
        ],
    );
    let path = write(dir.path(), "m.tpack", &bytes);
    let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", path, "--json"))).unwrap();
    let ids = &doc["metadata"][0];
    assert_eq!(
        (ids["key"].as_str(), ids["elided"].as_bool(), ids["count"].as_u64()),
        (Some("ids"), Some(true), Some(1000))
    );
    assert_eq!(ids["value"].as_array().unwrap().len(), 32);
    assert!(doc["metadata"][1].get("elided").is_none());
    assert_eq!(doc["metadata"][2]["count"], 500);
    assert_eq!(doc["totals"]["elided_values"], 2);
    let full: Value = serde_json::from_str(&assert_ok(&run!("inspect", path, "--json", "--full"))).unwrap();
    assert_eq!(full["metadata"][0]["value"].as_array().unwrap().len(), 1000);
    assert!(full["metadata"][0].get("elided").is_none());
    let text = assert_ok(&run!("inspect", path));
    assert!(text.contains("ids (u64[]) = [0, 1, 2, 3, 4, 5, 6, 7, … 992 more]"), "{text}");
}

/// 100,000 entries: text and JSON stay fast (no quadratic step) and text stays within 100 columns.
#[test]
fn a_100k_entry_file_stays_usable() {
    let names: Vec<String> = (0..100_000)
        .map(|i| format!("model.layers.{}.experts.{}.w{}", i / 1000, (i / 10) % 100, i % 10))
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "big.tpack", &container(&refs, &[]));
    let limit = Duration::from_secs(if cfg!(debug_assertions) { 60 } else { 10 });
    for opts in [
        InspectOptions::default(),
        InspectOptions { expand: true, ..InspectOptions::default() },
        InspectOptions { flat: true, ..InspectOptions::default() },
        InspectOptions { json: true, ..InspectOptions::default() },
    ] {
        let start = Instant::now();
        let out = run_inspect_with(&path, &opts).unwrap();
        let took = start.elapsed();
        eprintln!("100k entries, {opts:?}: {took:?}, {} bytes", out.len());
        assert!(took < limit, "{opts:?} took {took:?}");
        if !opts.json {
            assert_fits(&out);
        }
    }
}

#[test]
fn verify_takes_several_files_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.tpack", &container(&["a", "b"], &[]));
    let mut bytes = container(&["a", "b"], &[]);
    let c = tpack::Container::parse(&bytes).unwrap();
    let at = c.get("b").unwrap().offset() as usize;
    bytes[at] ^= 1;
    let bad = write(dir.path(), "bad.tpack", &bytes);
    let missing = dir.path().join("missing.tpack");
    let o = run!("verify", good, good);
    assert_eq!(stdout(&o).matches("good.tpack: intact: 2 entries").count(), 2);
    let o = run!("verify", good, bad, missing);
    let err = assert_fails(&o, 1, &["2 of 3 files are not intact", "bad.tpack", "missing.tpack"]);
    assert!(!err.contains("good.tpack"), "{err}");
    let out = stdout(&o);
    assert!(
        out.contains("good.tpack: intact") && out.contains("bad.tpack is corrupt: 1 of 2 entries"),
        "{out}"
    );
    assert!(out.contains("entry 1 \"b\"") && out.contains("cannot open"), "{out}");
    let o = run!("verify", good, bad, "--json");
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["schema"], "tpack-verify/1");
    assert_eq!(doc["intact"], false);
    assert_eq!(doc["files"][0]["intact"], true);
    assert_eq!(doc["files"][1]["problems"][0]["name"], "b");
    let o = run!("verify", good, "--json");
    let doc: Value = serde_json::from_str(&assert_ok(&o)).unwrap();
    assert_eq!(doc["intact"], true);
}

/// The environment variables through which a test runs itself again as a small process that measures the
/// `tpack` command it is given (JSON list of arguments) and writes its output to a file.
///
/// Why a second process: `ru_maxrss` keeps the high-water mark of the memory a process had before `exec`,
/// so a child spawned from a test that built an 8 MB fixture in memory reports at least the test's own peak.
/// The test process's fresh copy has built nothing.
#[cfg(target_os = "linux")]
const PROBE_ARGS: &str = "TPACK_RSS_PROBE_ARGS";
/// See [`PROBE_ARGS`].
#[cfg(target_os = "linux")]
const PROBE_OUT: &str = "TPACK_RSS_PROBE_OUT";

/// In a probe process (started by [`peak_rss_kib`]): runs the `tpack` command, prints `PEAK_KIB=<n> OK=<b>`
/// and returns `true`. In a test, returns `false` and does nothing.
#[cfg(target_os = "linux")]
fn run_probe() -> bool {
    let Ok(args) = std::env::var(PROBE_ARGS) else { return false };
    let args: Vec<String> = serde_json::from_str(&args).unwrap();
    let out = std::fs::File::create(std::env::var(PROBE_OUT).unwrap()).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tpack"))
        .args(&args)
        .stdout(out)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: `rusage` is plain data that `wait4` fills; the child is ours and waited for only here
    // (`Child` is dropped without `wait`).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid);
    drop(child);
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    println!("PEAK_KIB={} OK={ok}", usage.ru_maxrss);
    true
}

/// Runs `tpack args` from a fresh copy of this test binary (running the test `test` as a probe) and returns
/// whether it succeeded, its standard output and its peak resident set in KiB (`ru_maxrss` from `wait4`; the
/// pages of the mapped file it touched count too).
#[cfg(target_os = "linux")]
fn peak_rss_kib(test: &str, args: &[&std::ffi::OsStr]) -> (bool, String, u64) {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("stdout");
    let args: Vec<&str> = args.iter().map(|a| a.to_str().unwrap()).collect();
    let probe = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(PROBE_ARGS, serde_json::to_string(&args).unwrap())
        .env(PROBE_OUT, &out_path)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&probe.stdout).into_owned();
    let line = report.lines().find_map(|l| l.split_once("PEAK_KIB=")).map(|(_, rest)| rest);
    let line = line.unwrap_or_else(|| panic!("{report}"));
    let (peak, ok) = line.split_once(" OK=").unwrap();
    (ok == "true", std::fs::read_to_string(&out_path).unwrap(), peak.parse().unwrap())
}

/// The peak the done-criterion of issue 22 allows for `inspect` of an 8 MB file, text or JSON.
#[cfg(target_os = "linux")]
const PEAK_LIMIT_KIB: u64 = 64 * 1024;

/// `inspect` and `inspect --json` of `path` each peak under [`PEAK_LIMIT_KIB`] and within the file's size
/// plus 16 MiB of `baseline` (the same command on a small file of the same shape): memory does not grow with
/// the values, only with the map. Returns both outputs.
#[cfg(target_os = "linux")]
#[track_caller]
fn assert_bounded(test: &str, what: &str, path: &Path, baseline: &Path) -> [String; 2] {
    let file_kib = std::fs::metadata(path).unwrap().len() / 1024;
    [&[][..], &["--json"][..]].map(|flags| {
        let args = |p: &Path| {
            let mut a = vec![std::ffi::OsStr::new("inspect"), p.as_os_str()];
            a.extend(flags.iter().map(std::ffi::OsStr::new));
            peak_rss_kib(test, &a)
        };
        let (ok, out, peak) = args(path);
        let (base_ok, _, base) = args(baseline);
        assert!(ok && base_ok, "{what} {flags:?} failed:\n{out}");
        eprintln!("{what} {flags:?}: peak {} KiB (small file of the same shape: {base} KiB)", peak);
        assert!(peak < PEAK_LIMIT_KIB, "{what} {flags:?}: peak RSS {peak} KiB");
        assert!(peak < base + file_kib + 16 * 1024, "{what} {flags:?}: {peak} KiB against {base} KiB");
        out
    })
}

/// A container with one metadata record `key` holding `value`.
#[cfg(target_os = "linux")]
fn container_of(dir: &Path, name: &str, value: MetaValue<'_>) -> PathBuf {
    write(dir, name, &container(&["w"], &[("key", value)]))
}

/// Issue 22: an 8 MB container holding one `array[]` of a million empty `u8[]` took 743 MiB (text) and
/// 2,208 MiB (`--json`) to print 2.7 KB; an 8,000,000-element `bool[]`, 256 / 744 MiB.
#[cfg(target_os = "linux")]
#[test]
fn inspect_memory_is_bounded_by_what_it_shows_for_containers() {
    if run_probe() {
        return;
    }
    const TEST: &str = "inspect_memory_is_bounded_by_what_it_shows_for_containers";
    use tpack::ArrayArray;
    let dir = tempfile::tempdir().unwrap();
    let empties = vec![MetaValue::U8Array(&[]); 1_000_000];
    let big = container_of(dir.path(), "arrays.tpack", MetaValue::ArrayArray(ArrayArray::new(&empties)));
    let small = container_of(
        dir.path(),
        "arrays-small.tpack",
        MetaValue::ArrayArray(ArrayArray::new(&empties[..10])),
    );
    assert!(std::fs::metadata(&big).unwrap().len() > 8_000_000);
    let [text, json] = assert_bounded(TEST, "array[] of 1,000,000 u8[]", &big, &small);
    assert!(text.contains("key (array[]) = [u8[] [], u8[] [], "), "{text}");
    assert!(text.contains(", … 999992…\n"), "the line is cut at 100 columns: {text}");
    let doc: Value = serde_json::from_str(&json).unwrap();
    let record = &doc["metadata"][0];
    assert_eq!(
        (record["count"].as_u64(), record["value"].as_array().map(Vec::len)),
        (Some(1_000_000), Some(32))
    );
    assert_eq!(record["value"][31], serde_json::json!({"type": "u8[]", "value": []}));

    let bools: Vec<bool> = (0..8_000_000).map(|i| i % 3 == 0).collect();
    let big = container_of(dir.path(), "bools.tpack", MetaValue::BoolArray(&bools));
    let small = container_of(dir.path(), "bools-small.tpack", MetaValue::BoolArray(&bools[..10]));
    let [text, json] = assert_bounded(TEST, "bool[] of 8,000,000", &big, &small);
    assert!(
        text.contains("key (bool[]) = [true, false, false, true, false, false, true, false, … 7999992 more]"),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["metadata"][0]["count"], 8_000_000);
    assert_eq!(doc["totals"]["elided_values"], 1);
}

/// Issue 22: a 6 MB GGUF file of 500,000 nested arrays took 425 MiB (text) and 1,108 MiB (`--json`). Written by
/// PyPI gguf's `GGUFWriter`, which refuses empty arrays, so each holds one `bool`.
#[cfg(target_os = "linux")]
#[test]
fn inspect_memory_is_bounded_by_what_it_shows_for_gguf() {
    if run_probe() {
        return;
    }
    const TEST: &str = "inspect_memory_is_bounded_by_what_it_shows_for_gguf";
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, count: usize| {
        let path = dir.path().join(name);
        let script = format!(
            "import sys, gguf, numpy as np\n\
             w = gguf.GGUFWriter(sys.argv[1], arch='llama')\n\
             w.add_array('test.nested', [[True]] * {count})\n\
             w.add_tensor('w', np.arange(4, dtype=np.float32))\n\
             w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()\n"
        );
        let out = std::process::Command::new(&py).args(["-c", &script]).arg(&path).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        path
    };
    let big = write("nested.gguf", 500_000);
    let small = write("nested-small.gguf", 10);
    assert!(std::fs::metadata(&big).unwrap().len() > 6_000_000);
    let [text, json] = assert_bounded(TEST, "GGUF with 500,000 nested arrays", &big, &small);
    assert!(text.contains("test.nested (array[]) = [bool[] [true], bool[] [true], "), "{text}");
    assert!(
        text.contains("gguf.key_order (string[]) = [\"general.architecture\", \"test.nested\"]"),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&json).unwrap();
    let nested = doc["metadata"].as_array().unwrap().iter().find(|r| r["key"] == "test.nested").unwrap();
    assert_eq!(nested["count"], 500_000);
    assert_eq!(nested["value"][0], serde_json::json!({"type": "bool[]", "value": [true]}));
    let order = doc["metadata"].as_array().unwrap().iter().find(|r| r["key"] == "gguf.key_order").unwrap();
    assert!(order["value"].as_array().unwrap().contains(&serde_json::json!("test.nested")), "{order}");
}
