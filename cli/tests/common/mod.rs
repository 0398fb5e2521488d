//! Helpers shared by the end-to-end tests: running the built `tpack`, fixtures, hashes, Python.

#![allow(dead_code)]

pub mod sparse;

#[path = "../../../gguf/tests/support/hand_made.rs"]
pub mod hand_made;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The fixtures written by the PyPI `safetensors` and `gguf` packages (see fixtures/README.md).
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// What those libraries read back from each fixture (`fixtures/expected.json`).
pub fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(fixture("expected.json")).unwrap()).unwrap()
}

/// The repository root (for the spec's vectors).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Writes `manifest` as `manifest.json` in `dir`; its path.
pub fn write_manifest(dir: &Path, manifest: &Value) -> PathBuf {
    let path = dir.join("manifest.json");
    std::fs::write(&path, serde_json::to_vec_pretty(manifest).unwrap()).unwrap();
    path
}

/// Runs the `tpack` binary with `args`.
pub fn tpack<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    assert_cmd::Command::cargo_bin("tpack").unwrap().args(args).output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Asserts the command failed with `code` and one plain `error: …` message (no panic, no backtrace, no Debug
/// dump) containing every one of `words`; returns the message.
#[track_caller]
pub fn assert_fails(o: &Output, code: i32, words: &[&str]) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "exit code; stderr: {err}");
    assert!(err.starts_with("error: "), "{err}");
    for bad in ["panicked", "RUST_BACKTRACE", "Os {", "Error {", "kind:"] {
        assert!(!err.contains(bad), "stderr has {bad:?}: {err}");
    }
    for w in words {
        assert!(err.contains(w), "stderr lacks {w:?}: {err}");
    }
    err
}

#[track_caller]
pub fn assert_ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}; stderr: {}", o.status.code(), stderr(o));
    stdout(o)
}

/// The Python with PyPI `safetensors`, `gguf` and `numpy`: `$TPACK_PYTHON`, else `python3` if it has them.
/// With `TPACK_REQUIRE_PYTHON=1` (set by CI) a missing one fails the test instead of skipping the check.
pub fn python() -> Option<PathBuf> {
    let candidate = std::env::var_os("TPACK_PYTHON").map(PathBuf::from).unwrap_or_else(|| "python3".into());
    let ok = std::process::Command::new(&candidate)
        .args(["-c", "import safetensors, gguf, numpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if ok {
        return Some(candidate);
    }
    if std::env::var("TPACK_REQUIRE_PYTHON").is_ok_and(|v| v == "1") {
        panic!("TPACK_REQUIRE_PYTHON=1 but {} lacks safetensors/gguf/numpy", candidate.display());
    }
    eprintln!("note: Python with safetensors/gguf/numpy not found; skipping the live read-back check");
    None
}

/// `readback.py FILE` through the PyPI libraries: what they read from a file this tool wrote.
pub fn python_readback(python: &Path, file: &Path) -> Value {
    let out = std::process::Command::new(python).arg(fixture("readback.py")).arg(file).output().unwrap();
    assert!(
        out.status.success(),
        "readback.py refused {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `run!("convert", &path, "--force")`: runs `tpack` with arguments of mixed string and path types.
#[macro_export]
macro_rules! run {
    ($($arg:expr),* $(,)?) => {
        $crate::common::tpack(vec![$(std::ffi::OsString::from(AsRef::<std::ffi::OsStr>::as_ref(&$arg))),*])
    };
}
