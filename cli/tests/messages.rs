//! Inputs users get wrong, each answered with one sentence that says what the file is and what to do: an
//! empty file, a PyTorch checkpoint, a truncated download, an output directory that does not exist, a
//! corrupt entry in `unpack`.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use tpack::write::{Builder, NewEntry};
use tpack::{Container, Dtype};

/// Asserts `message` is one sentence: one line, no trailing period needed, and no crate or OS jargon.
#[track_caller]
fn one_sentence(message: &str) {
    let text = message.trim_end();
    assert_eq!(text.lines().count(), 1, "{text}");
    for jargon in ["os error", "Error(", "MetadataIncompleteBuffer", "InvalidHeaderLength", "Custom {"] {
        assert!(!text.contains(jargon), "{jargon:?} in {text}");
    }
}

#[test]
fn an_empty_file_is_called_empty() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("model.safetensors");
    std::fs::write(&input, b"").unwrap();
    let err = assert_fails(
        &run!("convert", input, dir.path().join("m.tpack")),
        3,
        &["model.safetensors is empty (0 bytes)", "make it again"],
    );
    one_sentence(&err);
}

/// Writes `script` (Python, with `out` bound to the output path) and returns the file it wrote.
fn python_file(dir: &Path, name: &str, script: &str) -> Option<PathBuf> {
    let py = python()?;
    let out = dir.join(name);
    let status = std::process::Command::new(py)
        .args(["-c", &format!("import sys\nout = sys.argv[1]\n{script}"), out.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
    Some(out)
}

/// Pickles and zip archives that are not PyTorch checkpoints, written by Python's own `zipfile` and `pickle`:
/// a zip whose first record is not `<name>/data.pkl` and bare pickles without PyTorch's magic number are
/// named as what they are, with what tpack reads (checkpoints themselves: tests/pytorch.rs).
#[test]
fn a_pickle_or_zip_that_is_no_pytorch_checkpoint_is_named_with_what_tpack_reads() {
    let dir = tempfile::tempdir().unwrap();
    let zip = python_file(
        dir.path(),
        "model.pt",
        "import pickle, zipfile\n\
         with zipfile.ZipFile(out, 'w') as z:\n    \
             z.writestr('version', '3\\n')\n    \
             z.writestr('archive/data.pkl', pickle.dumps({'w': [1.0, 2.0]}, protocol=2))\n",
    );
    let Some(zip) = zip else { return };
    let err = assert_fails(
        &run!("convert", zip, dir.path().join("m.tpack")),
        3,
        &[
            "model.pt is a zip archive but not a PyTorch checkpoint",
            "<name>/data.pkl",
            "never runs any other pickle",
        ],
    );
    one_sentence(&err);
    for protocol in 2..=5 {
        let name = format!("old-{protocol}.bin");
        let pickle = python_file(
            dir.path(),
            &name,
            &format!(
                "import pickle\nopen(out, 'wb').write(pickle.dumps({{'w': [1.0]}}, protocol={protocol}))\n"
            ),
        )
        .unwrap();
        let err = assert_fails(
            &run!("convert", pickle, dir.path().join("m.tpack")),
            3,
            &[
                &format!("{name} is a Python pickle (protocol {protocol}) but not a PyTorch checkpoint"),
                "legacy stream starting with PyTorch's magic number",
            ],
        );
        one_sentence(&err);
    }
}

/// The fixture cut short in its tensor data and in its header: called truncated, with the sizes.
#[test]
fn a_truncated_safetensors_file_is_called_truncated() {
    let whole = std::fs::read(fixture("model.safetensors")).unwrap();
    let header_len = u64::from_le_bytes(whole[..8].try_into().unwrap()) as usize;
    let dir = tempfile::tempdir().unwrap();
    for (cut, words) in [
        (whole.len() - 1, "bytes of data, but only"),
        (8 + header_len + 3, "bytes of data, but only 3 bytes follow its header"),
        (8 + header_len, "bytes of data, but only 0 bytes follow its header"),
        (
            8 + header_len / 2,
            &*format!("its header is {header_len} bytes long, but only {} bytes", header_len / 2),
        ),
        (9, &*format!("its header is {header_len} bytes long, but only 1 bytes")),
    ] {
        let input = dir.path().join("cut.safetensors");
        std::fs::write(&input, &whole[..cut]).unwrap();
        let err = assert_fails(
            &run!("convert", input, dir.path().join("m.tpack")),
            3,
            &["cut.safetensors is a truncated safetensors file", words, "make it again"],
        );
        one_sentence(&err);
    }
}

#[test]
fn a_missing_output_directory_reads_the_same_for_pack_and_convert() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("m.json");
    std::fs::write(
        &manifest,
        r#"{"tpack_manifest": 1, "entries": [{"name": "w", "dtype": "RAW", "hex": "01"}]}"#,
    )
    .unwrap();
    let out = dir.path().join("missing/m.tpack");
    let want = format!(
        "error: cannot create {}: the directory {} does not exist; create it first (`mkdir -p {}`) or choose another path\n",
        out.display(),
        out.parent().unwrap().display(),
        out.parent().unwrap().display()
    );
    let packed = assert_fails(&run!("pack", manifest, "-o", out), 4, &[]);
    assert_eq!(packed, want);
    let converted = assert_fails(&run!("convert", fixture("model.safetensors"), out), 4, &[]);
    assert_eq!(converted, want);
}

/// `unpack` of a corrupt container names the entry, as `verify` and `convert` do.
#[test]
fn unpack_names_the_corrupt_entry() {
    let mut b = Builder::new();
    b.push(NewEntry::new("layers.0.w", Dtype::U8, &[4], &[1, 2, 3, 4])).unwrap();
    b.push(NewEntry::new("layers.1.w", Dtype::U8, &[4], &[5, 6, 7, 8])).unwrap();
    let mut bytes = b.finish().unwrap();
    let at = Container::parse(&bytes).unwrap().get("layers.1.w").unwrap().offset() as usize;
    bytes[at] ^= 0x40;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.tpack");
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.path().join("files");
    let err = assert_fails(
        &run!("unpack", input, "-o", out),
        1,
        &["m.tpack is corrupt, so it is not unpacked", "entry 1 \"layers.1.w\"", "R50", "tpack verify"],
    );
    one_sentence(&err);
    assert!(!out.exists());
}

#[test]
fn inspect_entry_with_a_near_miss_name_suggests_the_closest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tpack");
    let mut b = Builder::new();
    b.push(NewEntry::new("layers.0.weight", Dtype::U8, &[1], &[1])).unwrap();
    b.push(NewEntry::new("output.bias", Dtype::U8, &[1], &[2])).unwrap();
    std::fs::write(&path, b.finish().unwrap()).unwrap();
    let err = assert_fails(
        &run!("inspect", &path, "--entry", "layers.0.wieght"),
        3,
        &["has no entry named \"layers.0.wieght\"; did you mean \"layers.0.weight\"?"],
    );
    one_sentence(&err);
}
