//! NumPy `.npy` and `.npz` files written by numpy itself (`fixtures/numpy/make_numpy.py`): each converts to a
//! container whose every tensor is what `numpy.load` reads (hashed by the script into `expected.json`),
//! `inspect` reads each directly, every hostile file is refused with words that say why, and tpack → `.npz`
//! gives an archive `numpy.load` reads back equal.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;
use tpack::write::{Builder, NewEntry};
use tpack::{Container, Dtype, MetaValue};

fn numpy_fixture(name: &str) -> PathBuf {
    fixture("numpy").join(name)
}

fn expected_numpy() -> Value {
    serde_json::from_slice(&std::fs::read(numpy_fixture("expected.json")).unwrap()).unwrap()
}

/// The numpy `descr` (little-endian) of a tpack dtype, as `make_numpy.py` writes it into `expected.json`.
fn descr(d: Dtype) -> &'static str {
    match d.name().unwrap() {
        "F16" => "<f2",
        "F32" => "<f4",
        "F64" => "<f8",
        "I8" => "|i1",
        "I16" => "<i2",
        "I32" => "<i4",
        "I64" => "<i8",
        "U8" => "|u1",
        "U16" => "<u2",
        "U32" => "<u4",
        "U64" => "<u8",
        "BOOL" => "|b1",
        "C64" => "<c8",
        other => panic!("no numpy dtype for {other}"),
    }
}

/// What a container holds, in the schema of `expected.json`: `{name: {descr, shape, sha256}}`.
fn described(container: &Path) -> Value {
    let bytes = std::fs::read(container).unwrap();
    let c = Container::parse(&bytes).unwrap();
    let map: BTreeMap<String, Value> = c
        .entries()
        .map(|e| {
            let v = serde_json::json!({
                "descr": descr(e.dtype()),
                "shape": e.shape().dims(),
                "sha256": sha256(e.payload()),
            });
            (e.name().to_owned(), v)
        })
        .collect();
    serde_json::to_value(map).unwrap()
}

fn valid_fixtures(expected: &Value) -> Vec<String> {
    expected.as_object().unwrap().keys().filter(|k| *k != "hostile").cloned().collect()
}

#[test]
fn every_fixture_converts_to_what_numpy_load_reads() {
    let expected = expected_numpy();
    let dir = tempfile::tempdir().unwrap();
    let fixtures = valid_fixtures(&expected);
    assert!(fixtures.len() >= 8, "{fixtures:?}");
    for name in fixtures {
        let out = dir.path().join(format!("{name}.tpack"));
        let report = assert_ok(&run!("convert", numpy_fixture(&name), out));
        assert_eq!(described(&out), expected[&name], "{name}");
        // Fortran order and big-endian arrays are converted, and said to be.
        if name.contains("fortran") || name.contains("compressed") {
            assert!(report.contains("Fortran-order"), "{name}: {report}");
        }
        if name.contains("bigendian") || name.contains("compressed") {
            assert!(report.contains("byte-swapped"), "{name}: {report}");
        }
    }
}

#[test]
fn inspect_reads_each_fixture_directly() {
    let expected = expected_numpy();
    for name in valid_fixtures(&expected) {
        let json: Value =
            serde_json::from_str(&tpack_cli::run_inspect(&numpy_fixture(&name), None, true).unwrap())
                .unwrap();
        let listed: BTreeMap<&str, &Value> = json["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["name"].as_str().unwrap(), &e["shape"]))
            .collect();
        let arrays = expected[&name].as_object().unwrap();
        assert_eq!(listed.len(), arrays.len(), "{name}");
        for (array, v) in arrays {
            assert_eq!(listed.get(array.as_str()).copied(), Some(&v["shape"]), "{name}: {array}");
        }
        assert!(json["format"].as_str().unwrap().starts_with("NumPy ."), "{name}");
    }
}

#[test]
fn every_hostile_fixture_is_refused_saying_why() {
    let expected = expected_numpy();
    let hostile = expected["hostile"].as_object().unwrap();
    assert!(hostile.len() >= 11, "{hostile:?}");
    let dir = tempfile::tempdir().unwrap();
    for (name, words) in hostile {
        let words: Vec<&str> = words.as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
        let out = dir.path().join("out.tpack");
        assert_fails(&run!("convert", numpy_fixture(name), out), 3, &words);
        assert!(!out.exists(), "{name}");
        assert_fails(&run!("inspect", numpy_fixture(name)), 3, &words);
    }
}

/// A `.npy` file around `dict` and `data`, its header padded as numpy pads it.
fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut text = dict.to_owned();
    while !(10 + text.len() + 1).is_multiple_of(64) {
        text.push(' ');
    }
    text.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((text.len() as u16).to_le_bytes());
    out.extend(text.as_bytes());
    out.extend(data);
    out
}

#[test]
fn hand_made_hostile_headers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, Vec<u8>, &[&str]); 5] = [
        (
            "overflow",
            npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", &[0; 8]),
            &["more bytes than this machine can address"],
        ),
        (
            "huge",
            npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000), }", &[0; 8]),
            &["8000000000000 bytes", "8 bytes follow"],
        ),
        (
            "longer",
            npy("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", &[0; 4]),
            &["2 bytes", "4 bytes follow"],
        ),
        (
            "bool",
            npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", &[0, 1, 2]),
            &["bool element 2", "byte 2"],
        ),
        (
            "code",
            npy(
                "{'descr': __import__('os').system('touch CANARY'), 'fortran_order': False, 'shape': (1,)}",
                &[0],
            ),
            &["expected a quoted string at character 10"],
        ),
    ];
    for (name, bytes, words) in cases {
        let path = dir.path().join(format!("{name}.npy"));
        std::fs::write(&path, bytes).unwrap();
        assert_fails(&run!("convert", &path, dir.path().join("o.tpack")), 3, words);
    }
    assert!(!Path::new("CANARY").exists() && !dir.path().join("CANARY").exists());
}

/// The Python of `$TPACK_PYTHON` (else `python3`) if it has numpy.
fn numpy_python() -> Option<PathBuf> {
    let candidate = std::env::var_os("TPACK_PYTHON").map(PathBuf::from).unwrap_or_else(|| "python3".into());
    let ok = std::process::Command::new(&candidate)
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var("TPACK_REQUIRE_PYTHON").is_ok_and(|v| v == "1") {
        panic!("TPACK_REQUIRE_PYTHON=1 but {} lacks numpy", candidate.display());
    }
    ok.then_some(candidate)
}

/// What `numpy.load` reads from `file` (through `make_numpy.py FILE`), in the schema of `expected.json`.
fn numpy_load(python: &Path, file: &Path) -> Value {
    let out =
        std::process::Command::new(python).arg(numpy_fixture("make_numpy.py")).arg(file).output().unwrap();
    assert!(
        out.status.success(),
        "numpy.load refused {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    all[file.file_name().unwrap().to_str().unwrap()].clone()
}

#[test]
fn tpack_to_npz_is_read_back_equal_by_numpy_and_by_tpack() {
    let expected = expected_numpy();
    let dir = tempfile::tempdir().unwrap();
    for name in ["dtypes.npz", "compressed.npz", "fortran.npy", "scalar.npy"] {
        let mid = dir.path().join(format!("{name}.tpack"));
        let back = dir.path().join(format!("{name}.back.npz"));
        assert_ok(&run!("convert", numpy_fixture(name), &mid));
        assert_ok(&run!("convert", &mid, &back));
        // tpack reads its own .npz back to the same tensors.
        let again = dir.path().join(format!("{name}.again.tpack"));
        assert_ok(&run!("convert", &back, &again));
        assert_eq!(described(&again), expected[name], "{name}");
        if let Some(py) = numpy_python() {
            assert_eq!(numpy_load(&py, &back), expected[name], "{name}");
        }
    }
    // The same container gives the same bytes.
    let (a, b) = (dir.path().join("a.npz"), dir.path().join("b.npz"));
    assert_ok(&run!("convert", dir.path().join("dtypes.npz.tpack"), &a));
    assert_ok(&run!("convert", dir.path().join("dtypes.npz.tpack"), &b));
    assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
}

#[test]
fn what_npz_cannot_hold_is_refused_or_noted() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bf16.tpack");
    let mut b = Builder::new();
    b.push(NewEntry::new("w", Dtype::F32, &[2], &[0; 8])).unwrap();
    b.push(NewEntry::new("h", Dtype::BF16, &[2], &[0; 4])).unwrap();
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let out = dir.path().join("x.npz");
    assert_fails(
        &run!("convert", &input, &out),
        3,
        &["entry \"h\"", "BF16", "numpy has no type", "safetensors or GGUF"],
    );
    assert!(!out.exists());
    let mut b = Builder::new();
    b.push(NewEntry::new("q", Dtype::Q8_0, &[32], &[0; 34])).unwrap();
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    assert_fails(&run!("convert", &input, &out), 3, &["entry \"q\"", "Q8_0"]);
    let mut b = Builder::new();
    b.push(NewEntry::new("w", Dtype::F32, &[2], &[0; 8])).unwrap();
    b.metadata("author", MetaValue::String("me")).unwrap();
    std::fs::write(&input, b.finish().unwrap()).unwrap();
    let report = assert_ok(&run!("convert", &input, &out));
    assert!(report.contains("an .npz has no metadata; the 1 metadata value(s) were dropped"), "{report}");
}

/// Each member of an `.npz` tpack writes is, byte for byte, what `numpy.save` writes for that array.
#[test]
fn npz_members_are_numpy_save_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["matrix", "scalar", "v3"] {
        let mid = dir.path().join(format!("{name}.tpack"));
        let out = dir.path().join(format!("{name}.npz"));
        assert_ok(&run!("convert", numpy_fixture(&format!("{name}.npy")), &mid));
        assert_ok(&run!("convert", &mid, &out));
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
        assert_eq!(zip.len(), 1);
        let mut member = zip.by_name(&format!("{name}.npy")).unwrap();
        assert_eq!(member.compression(), zip::CompressionMethod::Stored, "numpy.savez stores");
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut member, &mut bytes).unwrap();
        let saved = std::fs::read(numpy_fixture(&format!("{name}.npy"))).unwrap();
        if name == "v3" {
            // Written as version 3.0 by the fixture script; numpy.save itself writes 1.0 for it.
            assert_eq!((saved[6], bytes[6]), (3, 1));
            // Both pad to 128 bytes; the dict is the same text and the elements the same bytes.
            assert_eq!((bytes.len(), bytes[128..].to_vec()), (saved.len(), saved[128..].to_vec()));
            let text = |b: &[u8], from: usize| {
                String::from_utf8(b[from..128].to_vec()).unwrap().trim_end().to_owned()
            };
            assert_eq!(text(&bytes, 10), text(&saved, 12));
        } else {
            assert_eq!(bytes, saved, "{name}");
        }
    }
}
