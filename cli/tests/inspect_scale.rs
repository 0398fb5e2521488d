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
    assert_eq!(doc["schema"], "tpack-inspect/2");
    assert_eq!(doc["entries"].as_array().unwrap().len(), 12);
    let out = assert_ok(&run!("inspect", fixture("model.safetensors"), "--entry", "layers.0.attn.q.weight"));
    assert!(out.contains("F32") && out.contains("[4, 8] (32 elements)"), "{out}");
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
