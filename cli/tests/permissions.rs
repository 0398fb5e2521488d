//! Every command's output has the permissions of any tool's output: `0o666` less the umask for a new file
//! (`0o777` less it for `unpack`'s new directory), and a file replaced with `--force` keeps its permission bits.
//!
//! The umask is process-wide, so it is set in the child only: `tpack` runs under `sh -c 'umask U; exec …'`.

#![cfg(unix)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::fixture;

/// Runs `tpack args` with the umask `umask`; panics unless it succeeds.
fn tpack_under(umask: u32, args: &[&Path]) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask:03o}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_tpack"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "tpack {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn mode(path: &Path) -> String {
    format!("{:o}", fs::metadata(path).unwrap().permissions().mode() & 0o7777)
}

fn p(s: &str) -> &Path {
    Path::new(s)
}

/// The outputs of convert (both ways), pack and unpack, made under `umask` in `dir`.
fn make_all(umask: u32, dir: &Path, force: bool) -> Vec<std::path::PathBuf> {
    let force: &[&Path] = if force { &[p("--force")] } else { &[] };
    let tpack = dir.join("model.tpack");
    let safetensors = dir.join("back.safetensors");
    let packed = dir.join("packed.tpack");
    let files = dir.join("files");
    let manifest = dir.join("in.json");
    fs::write(
        &manifest,
        r#"{"tpack_manifest": 1, "entries": [{"name": "w", "dtype": "U8", "shape": [3], "hex": "010203"}]}"#,
    )
    .unwrap();
    let source = fixture("model.safetensors");
    tpack_under(umask, &[&[p("convert"), &source, &tpack], force].concat());
    tpack_under(umask, &[&[p("convert"), &tpack, &safetensors], force].concat());
    tpack_under(umask, &[&[p("pack"), &manifest, p("-o"), &packed], force].concat());
    tpack_under(umask, &[&[p("unpack"), &tpack, p("-o"), &files], force].concat());
    let mut outputs = vec![tpack, safetensors, packed];
    let mut unpacked: Vec<_> = fs::read_dir(&files).unwrap().map(|e| e.unwrap().path()).collect();
    unpacked.sort();
    assert!(unpacked.iter().any(|f| f.ends_with("manifest.json")), "{unpacked:?}");
    outputs.extend(unpacked);
    outputs
}

#[test]
fn new_outputs_follow_the_umask() {
    for umask in [0o022, 0o077, 0o002, 0o027] {
        let dir = tempfile::tempdir().unwrap();
        for output in make_all(umask, dir.path(), false) {
            assert_eq!(
                mode(&output),
                format!("{:o}", 0o666 & !umask),
                "umask {umask:03o}: {}",
                output.display()
            );
        }
        let files = dir.path().join("files");
        assert_eq!(mode(&files), format!("{:o}", 0o777 & !umask), "umask {umask:03o}: the directory");
    }
}

#[test]
fn replaced_outputs_keep_their_permission_bits() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = make_all(0o022, dir.path(), false);
    for (i, output) in outputs.iter().enumerate() {
        let old = [0o640, 0o600, 0o604][i % 3];
        fs::set_permissions(output, fs::Permissions::from_mode(old)).unwrap();
    }
    let again = make_all(0o022, dir.path(), true);
    assert_eq!(again, outputs);
    for (i, output) in outputs.iter().enumerate() {
        let old = [0o640, 0o600, 0o604][i % 3];
        assert_eq!(mode(output), format!("{old:o}"), "{}", output.display());
    }
}
