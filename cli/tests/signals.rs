//! Real signals against the built `tpack`: SIGINT and SIGTERM while an output is being written leave nothing
//! behind and exit 130 / 143; an input truncated while it is mapped (SIGBUS) is an error with exit code 4, not a
//! crash. Inputs are sparse files of a few hundred MiB, cheap to make, that take the tool long enough to read.

#![cfg(target_os = "linux")]

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::sparse::sparse_container;

/// Payload of each input: large enough that writing it takes the tool a good fraction of a second.
const BIG: u64 = 128 << 20;

/// How long to wait for the tool to reach the state a test needs.
const PATIENCE: Duration = Duration::from_secs(20);

/// A safetensors file with one U8 tensor of `len` bytes, all zero and sparse.
fn safetensors(path: &Path, len: u64) {
    let mut header = format!(r#"{{"w":{{"dtype":"U8","shape":[{len}],"data_offsets":[0,{len}]}}}}"#);
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut f = File::create(path).unwrap();
    f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
    f.write_all(header.as_bytes()).unwrap();
    f.set_len(8 + header.len() as u64 + len).unwrap();
}

/// A manifest packing one sparse data file of `len` bytes.
fn manifest(dir: &Path, len: u64) -> PathBuf {
    File::create(dir.join("w.bin")).unwrap().set_len(len).unwrap();
    let path = dir.join("manifest.json");
    fs::write(
        &path,
        format!(r#"{{"tpack_manifest": 1, "entries": [{{"name": "w", "dtype": "U8", "shape": [{len}], "file": "w.bin"}}]}}"#),
    )
    .unwrap();
    path
}

fn spawn(args: &[&std::ffi::OsStr]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tpack"))
        .arg("-q")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The hidden files and directories in `dir`: temporary outputs, ours (`.tpack-…`) or a library's (`.tmp…`).
fn hidden(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

/// Waits until `ready` holds, failing if the tool ends first.
fn wait_for(child: &mut Child, what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("tpack ended ({status}) before {what}: {}", stderr_of(child));
        }
        assert!(start.elapsed() < PATIENCE, "{what} never happened");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut text);
    }
    text
}

fn finish(mut child: Child) -> (ExitStatus, String) {
    let err = stderr_of(&mut child);
    (child.wait().unwrap(), err)
}

fn kill(child: &Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) of our own child, which has not been waited for, so its pid is still its own.
    #[allow(unsafe_code)]
    let r = unsafe { libc::kill(pid, signal) };
    assert_eq!(r, 0);
}

/// What an interrupted command must leave: the status of the signal, one line naming it, no temporary file
/// in `out_dir`, and `destination` as it was (absent, or with the content `before`).
#[track_caller]
fn assert_interrupted(
    (status, err): (ExitStatus, String),
    signal: libc::c_int,
    out_dir: &Path,
    destination: &Path,
    before: Option<&[u8]>,
) {
    let (code, name) = if signal == libc::SIGINT { (130, "SIGINT") } else { (143, "SIGTERM") };
    assert_eq!(status.signal(), None, "killed by a signal; stderr: {err}");
    assert_eq!(status.code(), Some(code), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(&format!("error: interrupted by {name}")), "{err}");
    assert_eq!(hidden(out_dir), Vec::<String>::new(), "temporary files left");
    match before {
        None => assert!(destination.symlink_metadata().is_err(), "{} was left", destination.display()),
        Some(old) => assert_eq!(fs::read(destination).unwrap(), old, "the destination changed"),
    }
}

/// Runs `args`, signals it once a temporary output appears in `out_dir`, and checks what is left.
fn interrupt(args: &[&std::ffi::OsStr], signal: libc::c_int, out_dir: &Path, destination: &Path) {
    interrupt_when(args, signal, out_dir, destination, || !hidden(out_dir).is_empty());
}

/// [`interrupt`], signalling once `ready` holds.
fn interrupt_when(
    args: &[&std::ffi::OsStr],
    signal: libc::c_int,
    out_dir: &Path,
    destination: &Path,
    ready: impl FnMut() -> bool,
) {
    let before = fs::read(destination).ok();
    let mut child = spawn(args);
    wait_for(&mut child, "an output appeared", ready);
    kill(&child, signal);
    assert_interrupted(finish(child), signal, out_dir, destination, before.as_deref());
}

fn os(s: &(impl AsRef<std::ffi::OsStr> + ?Sized)) -> &std::ffi::OsStr {
    s.as_ref()
}

/// An empty directory `out` in `dir` and the path of `name` in it: the tool's output, alone in its directory, so
/// that what an interrupted run leaves there can be seen.
fn output_in(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).unwrap();
    let output = out_dir.join(name);
    (out_dir, output)
}

/// Interrupts `args` twice: with `first` while it writes a new `output`, then with `second` while it replaces an
/// existing one (`args` plus `--force`).
fn interrupt_new_then_replaced(
    args: &[&std::ffi::OsStr],
    first: i32,
    second: i32,
    out_dir: &Path,
    output: &Path,
) {
    interrupt(args, first, out_dir, output);
    fs::write(output, b"the old model").unwrap();
    let forced: Vec<&std::ffi::OsStr> = args.iter().copied().chain([os("--force")]).collect();
    interrupt(&forced, second, out_dir, output);
}

/// `tpack convert` from `input` to `output_name` in `dir`, interrupted as a new output and as a replacement.
fn convert_interrupted(dir: &Path, input: &Path, output_name: &str) {
    let (out_dir, output) = output_in(dir, output_name);
    let args = [os("convert"), os(input), os(&output)];
    interrupt_new_then_replaced(&args, libc::SIGINT, libc::SIGTERM, &out_dir, &output);
}

#[test]
fn convert_to_tpack_interrupted_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    safetensors(&input, BIG);
    convert_interrupted(dir.path(), &input, "model.tpack");
}

#[test]
fn pack_interrupted_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path(), BIG);
    let (out_dir, output) = output_in(dir.path(), "model.tpack");
    let args = [os("pack"), os(&manifest), os("-o"), os(&output)];
    interrupt_new_then_replaced(&args, libc::SIGTERM, libc::SIGINT, &out_dir, &output);
}

#[test]
fn convert_to_safetensors_interrupted_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.tpack");
    sparse_container(&input, 4, BIG);
    convert_interrupted(dir.path(), &input, "model.safetensors");
}

#[test]
fn unpack_interrupted_leaves_nothing_and_a_rerun_works() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.tpack");
    sparse_container(&input, 8, BIG);
    let output = dir.path().join("files");
    let args = [os("unpack"), os(&input), os("-o"), os(&output)];
    // Signalled once the output exists, under a temporary name or its own.
    let ready = || !hidden(dir.path()).is_empty() || output.exists();
    interrupt_when(&args, libc::SIGTERM, dir.path(), &output, ready);
    // Into an existing directory: what it holds stays as it was.
    fs::create_dir(&output).unwrap();
    let notes = output.join("notes.txt");
    fs::write(&notes, b"mine").unwrap();
    let ready = || !hidden(dir.path()).is_empty() || fs::read_dir(&output).unwrap().count() > 1;
    interrupt_when(&args, libc::SIGINT, dir.path(), &notes, ready);
    assert_eq!(fs::read_dir(&output).unwrap().count(), 1, "unpacked files were left in {}", output.display());
    let small = dir.path().join("small.tpack");
    sparse_container(&small, 2, 4096);
    let o = Command::new(env!("CARGO_BIN_EXE_tpack"))
        .args([os("unpack"), os(&small), os("-o"), os(&output)])
        .output();
    assert!(o.unwrap().status.success(), "a rerun after the interrupt failed");
}

/// Waits until `child` has `input` mapped (it has started reading it), then truncates `input` to `keep` bytes.
fn truncate_when_mapped(child: &mut Child, input: &Path, keep: u64) {
    let maps = format!("/proc/{}/maps", child.id());
    let name = input.to_str().unwrap().to_owned();
    wait_for(child, "the input was mapped", || fs::read_to_string(&maps).is_ok_and(|m| m.contains(&name)));
    File::options().write(true).open(input).unwrap().set_len(keep).unwrap();
}

/// What a command whose input shrank must do: exit 4 with the message, not die of SIGBUS; leave no temporary
/// output in `out_dir`.
#[track_caller]
fn assert_shrank((status, err): (ExitStatus, String), input: &Path, out_dir: &Path) {
    assert_eq!(status.signal(), None, "killed by a signal; stderr: {err}");
    assert_eq!(status.code(), Some(4), "stderr: {err}");
    assert!(
        err.starts_with(&format!("error: {} was cut short while it was being read", input.display())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(hidden(out_dir), Vec::<String>::new(), "temporary files left");
}

#[test]
fn verify_of_an_input_that_shrinks_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.tpack");
    sparse_container(&input, 4, 2 * BIG);
    let mut child = spawn(&[os("verify"), os(&input)]);
    truncate_when_mapped(&mut child, &input, 4096);
    assert_shrank(finish(child), &input, dir.path());
}

#[test]
fn unpack_of_an_input_that_shrinks_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.tpack");
    sparse_container(&input, 4, 2 * BIG);
    let output = dir.path().join("files");
    let mut child = spawn(&[os("unpack"), os(&input), os("-o"), os(&output)]);
    truncate_when_mapped(&mut child, &input, 4096);
    assert_shrank(finish(child), &input, dir.path());
    assert!(!output.exists());
}

#[test]
fn convert_of_an_input_that_shrinks_is_an_error_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    safetensors(&input, BIG);
    let (out_dir, output) = output_in(dir.path(), "model.tpack");
    let mut child = spawn(&[os("convert"), os(&input), os(&output)]);
    // Once the output is being written, the payload is being read.
    wait_for(&mut child, "a temporary output appeared", || !hidden(&out_dir).is_empty());
    File::options().write(true).open(&input).unwrap().set_len(4096).unwrap();
    assert_shrank(finish(child), &input, &out_dir);
    assert!(!output.exists());
}

#[test]
fn convert_to_sharded_safetensors_interrupted_leaves_no_shard_and_no_index() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.tpack");
    sparse_container(&input, 8, BIG);
    let (out_dir, output) = output_in(dir.path(), "model.safetensors");
    let index = out_dir.join("model.safetensors.index.json");
    for signal in [libc::SIGINT, libc::SIGTERM] {
        interrupt(
            &[os("convert"), os(&input), os(&output), os("--max-shard-size"), os("20MiB")],
            signal,
            &out_dir,
            &index,
        );
        assert_eq!(fs::read_dir(&out_dir).unwrap().count(), 0, "a shard was left");
    }
}

#[test]
fn convert_of_a_shard_that_shrinks_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("model");
    fs::create_dir(&set).unwrap();
    let shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"];
    let mut weight_map = String::new();
    for (i, name) in shards.iter().enumerate() {
        let path = set.join(name);
        safetensors(&path, BIG);
        // Each shard's one tensor needs its own name: rename "w" in the header (same length).
        let mut bytes = fs::read(&path).unwrap();
        let at = bytes.windows(3).position(|w| w == b"\"w\"").unwrap();
        bytes[at + 1] = b'a' + i as u8;
        File::options().write(true).open(&path).unwrap().write_all(&bytes[..at + 2]).unwrap();
        weight_map.push_str(&format!(
            "{}\"{}\": \"{name}\"",
            if i > 0 { ", " } else { "" },
            (b'a' + i as u8) as char
        ));
    }
    fs::write(set.join("model.safetensors.index.json"), format!("{{\"weight_map\": {{{weight_map}}}}}"))
        .unwrap();
    let (out_dir, output) = output_in(dir.path(), "model.tpack");
    let second = set.join(shards[1]);
    let mut child = spawn(&[os("convert"), os(&set), os(&output)]);
    // Once the output is being written, the first shard's payload is being read; the second's comes next.
    wait_for(&mut child, "a temporary output appeared", || !hidden(&out_dir).is_empty());
    File::options().write(true).open(&second).unwrap().set_len(4096).unwrap();
    assert_shrank(finish(child), &second, &out_dir);
    assert!(!output.exists());
}
