//! Files: atomic replacement, and memory-mapped opening that reads no payload pages.

// Memory maps, /proc and gigabyte files are outside what Miri interprets.
#![cfg(not(miri))]

use std::fs;
use std::io::{Seek, SeekFrom, Write};

use tpack::{AtomicFile, Container, Dtype, MappedFile};

use tpack::write::{EntryDecl, SeekWriter, VecBookkeeping, WriteError};

fn write(path: &std::path::Path, name: &str, payload: &[u8]) {
    let mut file = AtomicFile::create(path).unwrap();
    let mut w = SeekWriter::new(file.sink(), VecBookkeeping);
    w.declare(EntryDecl::open_ended(name, Dtype::RAW)).unwrap();
    for chunk in payload.chunks(1 << 20) {
        w.write(chunk).unwrap();
    }
    w.end_entry().unwrap();
    drop(w.finish().unwrap());
    file.commit().unwrap();
}

fn temp_files(dir: &std::path::Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tpack-"))
        .collect()
}

#[test]
fn commit_replaces_the_destination_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tpack");
    write(&path, "old", b"old content");
    write(&path, "new", b"new content, longer");
    let bytes = fs::read(&path).unwrap();
    let c = Container::parse(&bytes).unwrap();
    assert_eq!(c.get("new").unwrap().payload(), b"new content, longer");
    assert!(c.get("old").is_none());
    assert!(temp_files(dir.path()).is_empty());
}

#[test]
fn an_abandoned_write_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tpack");
    write(&path, "old", b"old content");
    let before = fs::read(&path).unwrap();
    {
        let mut file = AtomicFile::create(&path).unwrap();
        let mut w = SeekWriter::new(file.sink(), VecBookkeeping);
        w.declare(EntryDecl::new("x", Dtype::U8, &[4])).unwrap();
        w.write(&[1, 2]).unwrap();
        // A payload that is too long fails the writer; the file is never committed.
        assert!(matches!(w.write(&[3, 4, 5]), Err(WriteError::PayloadTooLong { .. })));
        assert_eq!(temp_files(dir.path()).len(), 1, "the temporary sits next to the destination");
    }
    assert_eq!(fs::read(&path).unwrap(), before);
    assert!(temp_files(dir.path()).is_empty());
}

#[test]
fn a_mapped_file_opens_validates_and_prefetches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tpack");
    write(&path, "seg", &[7; 100_000]);
    let mapped = MappedFile::open(&path).unwrap();
    let c = mapped.container().unwrap();
    let e = c.get("seg").unwrap();
    mapped.prefetch(&e).unwrap();
    assert!(e.payload().iter().all(|&b| b == 7));
    c.verify().unwrap();

    let junk = dir.path().join("junk");
    fs::write(
        &junk,
        b"not a container at all, just some text that is long enough to hold a header, really it is; \
        padding padding padding padding padding padding padding padding padding padding padding padding",
    )
    .unwrap();
    let err = MappedFile::open(&junk).unwrap_err();
    assert!(err.to_string().contains("R2"), "{err}");
}

/// A directory is refused as one: mapping it would fail with ENODEV ("No such device"), which names no cause.
#[test]
fn a_directory_is_refused_as_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    match MappedFile::open(dir.path()) {
        Err(tpack::OpenError::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::IsADirectory, "{e}"),
        other => panic!("{other:?}"),
    }
}

/// `container()` views the layout `open` validated again (the same container as a fresh parse), and a file
/// rewritten underneath the map so that its sections no longer fit is parsed again to name the rule.
#[test]
fn a_mapped_file_gives_its_container_without_parsing_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested.tpack");
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors/valid/nested.tpack");
    fs::copy(&source, &path).unwrap();
    let mapped = MappedFile::open(&path).unwrap();
    let bytes = fs::read(&path).unwrap();
    let parsed = Container::parse(&bytes).unwrap();
    let viewed = mapped.container().unwrap();
    assert_eq!(viewed.len(), parsed.len());
    for (a, b) in viewed.entries().zip(parsed.entries()) {
        assert_eq!(
            (a.name(), a.range(), a.checksum(), a.payload()),
            (b.name(), b.range(), b.checksum(), b.payload())
        );
    }
    assert_eq!(viewed.metadata().iter().count(), parsed.metadata().iter().count());
    viewed.verify().unwrap();
    // Rewrite the header's trailer offset in place (the map sees it): the view no longer fits, and the error
    // names a rule. Written without truncating: Windows refuses to truncate a mapped file.
    let mut file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.seek(SeekFrom::Start(136)).unwrap();
    file.write_all(&u64::MAX.to_le_bytes()).unwrap();
    drop(file);
    assert!(mapped.container().is_err());
}

/// Regression: `prefetch` advised the pages at an entry's offset, which a nested container counts from its
/// own start, so a nested entry's advice fell on the wrong pages. It now locates the payload in the map, and
/// refuses an entry of another file instead of advising pages of this one.
#[test]
fn prefetch_finds_nested_entries_in_the_map_and_refuses_foreign_ones() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors/valid/nested.tpack");
    let mapped = MappedFile::open(&path).unwrap();
    let container = mapped.container().unwrap();
    let mut nested_entries = 0;
    for entry in container.entries() {
        mapped.prefetch(&entry).unwrap();
        if let Some(inner) = entry.nested() {
            for e in inner.entries() {
                mapped.prefetch(&e).unwrap();
                nested_entries += 1;
            }
        }
    }
    assert!(nested_entries > 0);
    let other = fs::read(&path).unwrap();
    let other = Container::parse(&other).unwrap();
    let foreign = other.entries().find(|e| !e.payload().is_empty()).unwrap();
    let err = mapped.prefetch(&foreign).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}

/// `private_payload` maps an entry's payload copy-on-write: it reads as the payload, takes writes, and neither
/// the file, the shared map nor another private mapping of the same entry sees them; nested entries are found
/// in the map (as for `prefetch`) and an entry of another file is refused.
#[test]
fn private_payloads_take_writes_that_never_reach_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tpack");
    let payload: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    write(&path, "seg", &payload);
    let before = fs::read(&path).unwrap();
    let mapped = MappedFile::open(&path).unwrap();
    let c = mapped.container().unwrap();
    let e = c.get("seg").unwrap();
    let mut first = mapped.private_payload(&e).unwrap();
    let second = mapped.private_payload(&e).unwrap();
    assert_eq!(first.as_bytes(), &payload[..]);
    first.as_bytes_mut().fill(0xEE);
    assert!(first.as_bytes().iter().all(|&b| b == 0xEE));
    assert_eq!(second.as_bytes(), &payload[..], "each mapping is private");
    assert_eq!(e.payload(), &payload[..], "the shared map is untouched");
    drop((first, second));
    assert_eq!(fs::read(&path).unwrap(), before, "the file is untouched");

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors/valid/nested.tpack");
    let mapped = MappedFile::open(&path).unwrap();
    let container = mapped.container().unwrap();
    let mut nested_entries = 0;
    for entry in container.entries() {
        assert_eq!(mapped.private_payload(&entry).unwrap().as_bytes(), entry.payload());
        for e in entry.nested().iter().flat_map(|inner| inner.entries()) {
            assert_eq!(mapped.private_payload(&e).unwrap().as_bytes(), e.payload());
            nested_entries += 1;
        }
    }
    assert!(nested_entries > 0);
    let other = fs::read(&path).unwrap();
    let other = Container::parse(&other).unwrap();
    let foreign = other.entries().find(|e| !e.payload().is_empty()).unwrap();
    assert_eq!(mapped.private_payload(&foreign).unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
}

mod through_files {
    use proptest::prelude::*;
    use tpack::write::{Builder, EntryDecl, SeekWriter, VecBookkeeping};
    use tpack::{AtomicFile, Dtype, MappedFile};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Random entries written to a real file through `AtomicFile` and read back through `MappedFile` give
        /// the builder's bytes and payloads.
        #[test]
        fn random_containers_round_trip_through_files(
            entries in proptest::collection::vec((proptest::collection::vec(any::<u8>(), 0..300), 0u32..10), 0..6),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("m.tpack");
            let names: Vec<String> = (0..entries.len()).map(|i| format!("e{i}")).collect();
            let shapes: Vec<[u64; 1]> = entries.iter().map(|(d, _)| [d.len() as u64]).collect();
            let mut file = AtomicFile::create(&path).unwrap();
            let mut w = SeekWriter::new(file.sink(), VecBookkeeping);
            let mut b = Builder::new();
            for ((name, shape), (data, align)) in names.iter().zip(&shapes).zip(&entries) {
                w.declare(EntryDecl::new(name, Dtype::U8, shape).with_alignment(1 << align)).unwrap();
                b.push(EntryDecl::new(name, Dtype::U8, shape).with_alignment(1 << align).with_data(data)).unwrap();
            }
            for (data, _) in &entries {
                w.write_entry(data).unwrap();
            }
            drop(w.finish().unwrap());
            file.commit().unwrap();
            let mapped = MappedFile::open(&path).unwrap();
            prop_assert_eq!(mapped.as_bytes(), &b.finish().unwrap()[..]);
            let c = mapped.container().unwrap();
            c.verify().unwrap();
            for (e, (data, _)) in c.entries().zip(&entries) {
                prop_assert_eq!(e.payload(), &data[..]);
            }
        }
    }
}
