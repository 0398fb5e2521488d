//! The golden vectors in spec/vectors/ are rebuilt here from tests/support/cases/ and must equal the
//! checked-in files byte for byte, manifest included. `TPACK_BLESS=1 cargo test --test vectors` rewrites them
//! after an intended change (which must come with a spec change).

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::{cases, cases::signature, json::decode};
use tpack::{Container, Dtype, Error};

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors")
}

fn file_of(case: &cases::Case) -> String {
    let dir = if case.rule.is_some() { "invalid" } else { "valid" };
    format!("{dir}/{}.tpack", case.name)
}

fn validate(bytes: &[u8]) -> Result<Container<'_>, Error> {
    let c = Container::parse(bytes)?;
    c.verify()?;
    Ok(c)
}

fn manifest() -> Value {
    let vectors: Vec<Value> = cases::all()
        .map(|case| match case.rule {
            None => {
                let container = validate(&case.bytes).unwrap_or_else(|e| panic!("{}: {e}", case.name));
                let mut vector = json!({"file": file_of(case), "valid": true, "description": case.description,
                       "decoding": decode(&container)});
                if !case.checks.is_empty() {
                    vector["verifications"] = case.checks.iter().map(check_json).collect();
                }
                vector
            }
            Some(rule) => json!({"file": file_of(case), "valid": false, "rule": rule.id(),
                                 "description": case.description}),
        })
        .collect();
    json!({"format": "tpack", "version": [tpack::format::VERSION_MAJOR, tpack::format::VERSION_MINOR], "vectors": vectors})
}

/// A verification of the manifest (the conformance kit's protocol): the key set, the policy, the verdict.
fn check_json(check: &cases::signature::Check) -> Value {
    let keys: Vec<Value> = check
        .keys
        .iter()
        .map(|k| {
            json!({"algorithm": k.algorithm.code(), "public_key": k.public_key.as_deref().map(support::json::hex),
                   "key_id": support::json::hex(&k.key_id), "subject": k.subject})
        })
        .collect();
    json!({
        "keys": keys,
        "policy": {"require_signature": check.require, "min_counter": check.min_counter, "subject": check.subject},
        "verdict": check.verdict.map_or("ok", |r| r.id()),
    })
}

#[test]
// Byte equality of files does not depend on the host; under Miri (minutes for the JSON manifest alone) the
// reader's side is covered by `manifest_verdicts_hold_for_the_files_on_disk`.
#[cfg_attr(
    miri,
    ignore = "host-independent file comparison; see manifest_verdicts_hold_for_the_files_on_disk"
)]
fn vectors_match_checked_in_files() {
    let dir = vectors_dir();
    let manifest_text = serde_json::to_string_pretty(&manifest()).unwrap() + "\n";
    let bless = std::env::var_os("TPACK_BLESS").is_some();
    if bless {
        for sub in ["valid", "invalid"] {
            let _ = fs::remove_dir_all(dir.join(sub));
            fs::create_dir_all(dir.join(sub)).unwrap();
        }
        fs::write(dir.join("manifest.json"), &manifest_text).unwrap();
    }
    let mut expected_files = Vec::new();
    for case in cases::all() {
        let path = dir.join(file_of(case));
        expected_files.push(path.clone());
        if bless {
            fs::write(&path, &case.bytes).unwrap();
        }
        let on_disk =
            fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (run with TPACK_BLESS=1)", path.display()));
        assert!(on_disk == case.bytes, "{} differs from what the generator builds", path.display());
    }
    let on_disk = fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert_eq!(on_disk, manifest_text, "manifest.json is stale (run with TPACK_BLESS=1)");
    // No stray vector files that the manifest does not list.
    for sub in ["valid", "invalid"] {
        for file in fs::read_dir(dir.join(sub)).unwrap() {
            let path = file.unwrap().path();
            assert!(expected_files.contains(&path), "{} is not in the manifest", path.display());
        }
    }
}

#[test]
fn manifest_verdicts_hold_for_the_files_on_disk() {
    if std::env::var_os("TPACK_BLESS").is_some() {
        return; // The files are being rewritten concurrently; the next plain run checks them.
    }
    let dir = vectors_dir();
    let manifest = fs::read_to_string(dir.join("manifest.json")).unwrap();
    for (i, vector) in support::manifest::vectors(&manifest).iter().enumerate() {
        // Under Miri every 8th vector: parsing a vector's manifest record and
        // building its decoding are minutes there for the whole list, and natively and under QEMU on s390x every
        // vector is checked (rules.rs runs every invalid case besides). Only those sampled are parsed.
        if cfg!(miri) && i % 8 != 0 {
            continue;
        }
        let v = vector.parse();
        assert_eq!(v["valid"].as_bool(), Some(vector.is_valid()), "{}", vector.file);
        let bytes = fs::read(dir.join(v["file"].as_str().unwrap())).unwrap();
        if cfg!(miri) && bytes.len() > 16 * 1024 {
            continue; // The 64 KiB alignment vector: minutes under Miri, and natively checked.
        }
        let result = validate(&bytes);
        if v["valid"].as_bool().unwrap() {
            let c = result.unwrap_or_else(|e| panic!("{}: {e}", v["file"]));
            assert_eq!(decode(&c), v["decoding"], "{}", v["file"]);
        } else {
            let err = result.err().unwrap_or_else(|| panic!("{} parsed", v["file"]));
            assert_eq!(err.rule().id(), v["rule"].as_str().unwrap(), "{}", v["file"]);
        }
    }
}

#[test]
// What the case list covers does not depend on the host; under Miri, building the invalid cases alone takes
// over a minute, and no other test of this file needs them.
#[cfg_attr(miri, ignore = "host-independent coverage of the case list")]
fn every_rule_has_a_vector_and_every_dtype_a_valid_one() {
    let all: Vec<_> = cases::all().collect();
    for rule in tpack::Rule::ALL {
        let verified = all.iter().flat_map(|c| &c.checks).any(|check| check.verdict == Some(*rule));
        assert!(all.iter().any(|c| c.rule == Some(*rule)) || verified, "no vector for {rule}");
    }
    let all_dtypes = all.iter().find(|c| c.name == "all-dtypes-1-1").unwrap();
    let c = Container::parse(&all_dtypes.bytes).unwrap();
    // The signature dtype (format 1.2) is in every signed vector; it is written only by the signing writers.
    for dtype in tpack::Dtype::ALL.iter().filter(|d| **d != Dtype::SIGNATURE) {
        assert!(c.entries().any(|e| e.dtype() == *dtype), "{dtype:?}");
    }
    assert!(all.iter().any(|c| Container::parse(&c.bytes).is_ok_and(|c| c.signed_attributes().is_some())));
}

/// Every verification the manifest lists gives its verdict, attacks included (spec §14).
#[test]
// Under Miri the cases carry only the checks decided before the signature's own (R58-R62), and rules.rs runs
// exactly those on the same host.
#[cfg_attr(miri, ignore = "the same checks as rules.rs's R58-R62 tests under Miri")]
fn signature_verdicts_hold() {
    for case in cases::valid_cases() {
        for check in &case.checks {
            assert_eq!(
                cases::signature::verdict(&case.bytes, check),
                check.verdict,
                "{}: {check:?}",
                case.name
            );
        }
    }
}

/// The decoding of the example, written out by hand from the model in cases::base(), so that the manifest is
/// not only the reader's own opinion of itself.
#[test]
fn example_decoding_matches_the_model() {
    let bytes = cases::base().encode();
    let c = validate(&bytes).unwrap();
    let names: Vec<_> = c.entries().map(|e| e.name()).collect();
    assert_eq!(
        names,
        ["embed.weight", "layers.0.attn.q", "layers.0.ffn.q8", "boot.code", "norm.eps", "empty"]
    );
    let w = c.get("embed.weight").unwrap();
    assert_eq!(w.shape().dims(), [4, 8]);
    assert_eq!(w.offset() % 64, 0);
    let values: Vec<f32> =
        w.le::<tpack::zerocopy::little_endian::F32>().unwrap().iter().map(|v| v.get()).collect();
    assert_eq!(values[..3], [-3.0, -2.5, -2.0]);
    let code = c.get("boot.code").unwrap();
    assert_eq!(code.target(), Some(0x2000_0000));
    assert_eq!(code.alignment(), 1);
    assert_eq!(c.get("empty").unwrap().byte_len(), 0);
    assert_eq!(c.get("norm.eps").unwrap().shape().rank(), 0);
    assert!(c.get("missing").is_none());
    assert_eq!(c.metadata().get("layers"), Some(tpack::MetaValue::U64(1)));
    assert_eq!(c.metadata().get("bias"), Some(tpack::MetaValue::I64(-3)));
    assert_eq!(c.metadata().get("arch"), Some(tpack::MetaValue::String("toy-mlp")));
    match c.metadata().get("vocab") {
        Some(tpack::MetaValue::StringArray(items)) => {
            assert_eq!(items.collect::<Vec<_>>(), ["<s>", "hello", "wörld"])
        }
        other => panic!("{other:?}"),
    }
    let keys: Vec<_> = c.metadata().iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["arch", "bias", "blob", "eps", "ids", "layers", "trained", "vocab"]);
}

/// Every valid vector of minor version 0 is exactly what the streaming writers produce from its content, so
/// the golden files are the writer's output, not only the test encoder's.
#[test]
fn valid_vectors_are_what_the_writers_produce() {
    /// Valid vectors that no writer produces: a minor-1 header extension of an unknown tag (a writer writes
    /// the lowest minor the content needs, here 0), and empty extension items (a writer writes a geometry
    /// item only with records in it, and no item of another tag).
    const NOT_CANONICAL: &[&str] = &["header-extension", "extension-empty-items"];
    use support::sinks::{MemSink, PipeSink};
    use tpack::write::{EntryDecl, SeekWriter, StreamWriter, VecBookkeeping};

    let mut checked = 0;
    // Under Miri every second unsigned case (what the writers do on a big-endian host; natively and under QEMU
    // every case, signed ones included).
    let valid = if cfg!(miri) { cases::unsigned_valid_cases() } else { cases::valid_cases() };
    for case in valid.iter().step_by(if cfg!(miri) { 2 } else { 1 }) {
        let c = Container::parse(&case.bytes).unwrap();
        if c.version().1 > tpack::format::VERSION_MINOR || NOT_CANONICAL.contains(&case.name.as_str()) {
            continue; // What the writers cannot write: newer minors, and content their minor does not need.
        }
        if cfg!(miri) && c.signed_attributes().is_some() {
            continue; // Signing again: minutes per signature under Miri, and host code (the native run checks it).
        }
        if cfg!(miri) && case.bytes.len() > 16 * 1024 {
            continue; // The 64 KiB alignment vector: minutes under Miri, and nothing new for it to check.
        }
        // A signed vector is written again with its own test key, unless it was tampered with after signing.
        let signer = c.signed_attributes().map(|a| {
            let keys = [signature::test_key(1), signature::test_key(2), signature::test_p256_key()];
            let key = keys.into_iter().find(|k| &k.public().key_id() == a.key_id);
            let options = tpack::sign::SignOptions {
                counter: a.counter,
                subject: a.subject.map(str::to_owned),
                embed_public_key: a.public_key.is_some(),
            };
            (key, options)
        });
        let signer = match signer {
            None => None,
            Some((Some(key), options)) => {
                let check = signature::Check {
                    keys: vec![signature::trust(&key)],
                    require: true,
                    min_counter: 0,
                    subject: None,
                    verdict: None,
                };
                if signature::verdict(&case.bytes, &check).is_some() {
                    continue;
                }
                Some((key, options))
            }
            Some((None, _)) => continue,
        };
        let signed = signer.is_some();
        let mut seek = SeekWriter::new(MemSink::default(), VecBookkeeping);
        let mut pipe = StreamWriter::new(PipeSink::default(), VecBookkeeping);
        let flags = if signed { c.compat_flags() & !tpack::format::COMPAT_SIGNED } else { c.compat_flags() };
        seek.set_compat_flags(flags);
        pipe.set_compat_flags(flags);
        if let Some((key, options)) = &signer {
            seek.sign(key, options).unwrap();
            pipe.sign(key, options).unwrap();
        }
        let shapes: Vec<_> = c.entries().map(|e| e.shape()).collect();
        let own = |e: &tpack::Entry<'_>| !(signed && e.dtype() == Dtype::SIGNATURE);
        for (e, shape) in c.entries().zip(&shapes).filter(|(e, _)| own(e)) {
            let mut d = EntryDecl::new(e.name(), e.dtype(), shape.dims()).with_alignment(e.alignment());
            d.target = e.target();
            seek.declare(d).unwrap();
            pipe.declare(d).unwrap();
        }
        // Values read from one container are written to another as they are: one `MetaValue` type.
        for (k, v) in c.metadata().iter().filter(|(k, _)| !(signed && k.starts_with("tpack.sig."))) {
            seek.metadata(k, v).unwrap();
            pipe.metadata(k, v).unwrap();
        }
        for e in c.entries().filter(own) {
            seek.write_entry(e.payload()).unwrap();
            pipe.write_entry(e.payload()).unwrap();
        }
        assert_eq!(seek.finish().unwrap().bytes, case.bytes, "{}: seekable writer", case.name);
        assert_eq!(pipe.finish().unwrap().0.bytes, case.bytes, "{}: one-pass writer", case.name);
        checked += 1;
    }
    // Under Miri, 9 of the unsigned cases' sample.
    assert!(checked >= if cfg!(miri) { 9 } else { 10 }, "only {checked} vectors checked");
}

/// Typed views accept exactly the dtypes whose elements they are: checked on every entry of every valid
/// vector, with one-byte `i8`/`u8` views available on any host and at any alignment.
#[test]
fn typed_views_match_their_dtypes() {
    use tpack::zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
    let mut one_byte_views = 0;
    // Under Miri the unsigned cases: the signed ones hold the same kinds of entries, and are read from the
    // manifest there (a minute and a half).
    let valid = if cfg!(miri) { cases::unsigned_valid_cases() } else { cases::valid_cases() };
    for case in valid {
        let c = Container::parse(&case.bytes).unwrap();
        for e in c.entries() {
            let d = e.dtype();
            assert_eq!(e.le::<F32>().is_some(), d == Dtype::F32);
            assert_eq!(e.le::<F64>().is_some(), d == Dtype::F64);
            assert_eq!(e.le::<I64>().is_some(), d == Dtype::I64);
            assert_eq!(e.le::<I32>().is_some(), d == Dtype::I32);
            assert_eq!(e.le::<I16>().is_some(), d == Dtype::I16);
            assert_eq!(e.le::<U64>().is_some(), d == Dtype::U64);
            assert_eq!(e.le::<U32>().is_some(), d == Dtype::U32);
            assert_eq!(e.le::<U16>().is_some(), matches!(d, Dtype::U16 | Dtype::F16 | Dtype::BF16));
            let i8s = e.le::<i8>();
            assert_eq!(i8s.is_some(), d == Dtype::I8);
            if let Some(v) = i8s {
                assert_eq!(v.len() as u64, e.byte_len());
                one_byte_views += 1;
            }
            let bytes_view = e.le::<u8>();
            let bytewise = matches!(
                d.packing(),
                Some(tpack::Packing::Element(1) | tpack::Packing::Block { .. } | tpack::Packing::Bytes)
            );
            assert_eq!(bytes_view.is_some(), bytewise, "{d}");
            if let Some(v) = bytes_view {
                assert_eq!(v, e.payload());
                one_byte_views += 1;
            }
        }
    }
    assert!(one_byte_views >= 4, "{one_byte_views}");
}
