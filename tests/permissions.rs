//! AtomicFile's permissions: a new file follows the umask like any tool's output; a replaced file keeps the
//! permission bits of the file it replaces.
//!
//! The umask is process-wide, so these tests never change it: they read the mode a plain `File::create`
//! gets in the same directory (0o666 less the umask) and expect the same of `AtomicFile`.

#![cfg(all(unix, not(miri)))]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tpack::{AtomicFile, Dtype};

use tpack::write::{EntryDecl, SeekWriter, VecBookkeeping};

fn write(path: &Path) {
    let mut file = AtomicFile::create(path).unwrap();
    let mut w = SeekWriter::new(file.sink(), VecBookkeeping);
    w.declare(EntryDecl::new("w", Dtype::U8, &[3])).unwrap();
    w.write_entry(&[1, 2, 3]).unwrap();
    drop(w.finish().unwrap());
    file.commit().unwrap();
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn a_new_file_gets_the_mode_of_any_new_file_under_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    fs::File::create(&plain).unwrap();
    let path = dir.path().join("new.tpack");
    write(&path);
    assert_eq!(format!("{:o}", mode(&path)), format!("{:o}", mode(&plain)));
}

#[test]
fn a_replaced_file_keeps_its_permission_bits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.tpack");
    for old in [0o640, 0o604, 0o600, 0o755] {
        fs::write(&path, b"old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(old)).unwrap();
        write(&path);
        assert_eq!(format!("{:o}", mode(&path)), format!("{old:o}"));
        assert_ne!(fs::read(&path).unwrap(), b"old");
    }
}

#[test]
fn the_temporary_file_of_a_replacement_is_private_while_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.tpack");
    fs::write(&path, b"old").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let file = AtomicFile::create(&path).unwrap();
    let temps: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(".tpack-"))
        .collect();
    assert_eq!(temps.len(), 1);
    assert_eq!(mode(&temps[0]) & 0o077, 0, "{:o}", mode(&temps[0]));
    drop(file);
}
