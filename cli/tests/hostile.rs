//! Damaged and hostile inputs to every command, in-process: any result but a panic is acceptable, and a
//! failed conversion leaves no output behind.

mod common;

use std::path::Path;

use common::fixture;
use common::hand_made::HandMadeGguf;
use proptest::prelude::*;
use tpack_cli::{run_convert, run_inspect, run_unpack, run_verify};

fn damaged(original: &[u8], edits: &[(usize, u8)], cut: Option<usize>) -> Vec<u8> {
    let mut bytes = original.to_vec();
    for &(at, value) in edits {
        if !bytes.is_empty() {
            let i = at % bytes.len();
            bytes[i] = value;
        }
    }
    if let Some(cut) = cut {
        bytes.truncate(cut % (original.len() + 1));
    }
    bytes
}

/// Runs every command on `bytes` as file `name`; panics only if a command panics or leaves a partial output.
fn every_command(name: &str, bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(name);
    std::fs::write(&input, bytes).unwrap();
    let _ = run_inspect(&input, None, false);
    let _ = run_inspect(&input, None, true);
    let _ = run_verify(&input, true);
    for out in ["o.tpack", "o.safetensors"] {
        let out = dir.path().join(out);
        if run_convert(&input, &out, None, false, None, true).is_err() {
            assert!(!out.exists(), "a failed conversion left {}", out.display());
        }
    }
    let _ = run_unpack(&input, &dir.path().join("files"), false);
    let stray: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".tpack-") || n.starts_with(".tmp"))
        .collect();
    assert!(stray.is_empty(), "temporary files left: {stray:?}");
}

fn load(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 256 }, ..ProptestConfig::default() })]

    #[test]
    fn damaged_safetensors(edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..6), cut in prop::option::of(any::<usize>())) {
        every_command("m.safetensors", &damaged(&load(&fixture("model.safetensors")), &edits, cut));
    }

    #[test]
    fn damaged_gguf(edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..6), cut in prop::option::of(any::<usize>())) {
        every_command("m.gguf", &damaged(&load(&fixture("model.gguf")), &edits, cut));
    }

    #[test]
    fn damaged_tpack(edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..6), cut in prop::option::of(any::<usize>())) {
        let original = load(&common::repo().join("spec/vectors/valid/example.tpack"));
        every_command("m.tpack", &damaged(&original, &edits, cut));
    }

    #[test]
    fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512), magic in 0usize..4) {
        let mut input = match magic {
            0 => b"GGUF\x03\x00\x00\x00".to_vec(),
            1 => tpack::format::MAGIC.to_vec(),
            2 => { let mut v = (bytes.len() as u64).to_le_bytes().to_vec(); v.push(b'{'); v }
            _ => Vec::new(),
        };
        input.extend(&bytes);
        every_command("r.bin", &input);
    }
}

#[test]
fn the_safetensors_header_size_limit_holds() {
    // A header length of 2^63: refused before any allocation of that size.
    let mut bytes = (1u64 << 63).to_le_bytes().to_vec();
    bytes.extend(b"{}");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("huge.safetensors");
    std::fs::write(&input, &bytes).unwrap();
    let err = run_convert(&input, &dir.path().join("o.tpack"), None, false, None, true).unwrap_err();
    assert!(err.to_string().contains("not a valid safetensors file"), "{err}");
}

#[test]
fn a_gguf_claiming_2_pow_60_tensors_fails_fast() {
    let bytes = HandMadeGguf::v3(1 << 60, 0).bytes;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("huge.gguf");
    std::fs::write(&input, &bytes).unwrap();
    let err = run_convert(&input, &dir.path().join("o.tpack"), None, false, None, true).unwrap_err();
    assert!(err.to_string().contains("not a valid GGUF file"), "{err}");
}
