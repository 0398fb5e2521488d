//! `tpack sign --oms-bundle`: the OpenSSF model-signing bundle is checked by PyPI `model-signing` itself
//! (`model_signing verify key`), which must accept it and refuse it once one payload byte is flipped.
//!
//! The `model_signing` command is `$TPACK_MODEL_SIGNING`, else `model_signing` on the PATH. Without it the
//! live check is skipped with a note, unless `TPACK_REQUIRE_PYTHON=1` (set by CI), which fails the test.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use tpack::write::{Builder, NewEntry};
use tpack::{Container, Dtype};

fn openssl(args: &[&str]) {
    let out = Command::new("openssl").args(args).output().expect("openssl is installed (CI has it)");
    assert!(out.status.success(), "openssl failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// openssl-made (private, public) PEM files for `algorithm` ("ed25519" or "p256").
fn key(dir: &Path, algorithm: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{algorithm}.pem"));
    let public = dir.join(format!("{algorithm}.pub.pem"));
    let p = private.to_str().unwrap();
    if algorithm == "ed25519" {
        openssl(&["genpkey", "-algorithm", "ed25519", "-out", p]);
    } else {
        openssl(&["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p]);
    }
    openssl(&["pkey", "-in", p, "-pubout", "-out", public.to_str().unwrap()]);
    (private, public)
}

fn model(dir: &Path) -> PathBuf {
    let mut b = Builder::new();
    b.push(NewEntry::new("w", Dtype::F32, &[256], &[7; 1024])).unwrap();
    b.push(NewEntry::new("b", Dtype::F32, &[4], &[1; 16])).unwrap();
    let path = dir.join("model.tpack");
    std::fs::write(&path, b.finish().unwrap()).unwrap();
    path
}

/// The `model_signing` command and its public-key flag (`--public_key` in 1.1.1, `--public-key` later), if
/// it is installed.
fn model_signing() -> Option<(PathBuf, &'static str)> {
    let command =
        std::env::var_os("TPACK_MODEL_SIGNING").map(PathBuf::from).unwrap_or_else(|| "model_signing".into());
    let help =
        Command::new(&command).args(["verify", "key", "--help"]).output().ok().filter(|o| o.status.success());
    match help {
        Some(help) => {
            let text = String::from_utf8_lossy(&help.stdout);
            let flag = if text.contains("--public-key") { "--public-key" } else { "--public_key" };
            Some((command, flag))
        }
        None if std::env::var("TPACK_REQUIRE_PYTHON").is_ok_and(|v| v == "1") => {
            panic!(
                "TPACK_REQUIRE_PYTHON=1 but {} does not run (pip install model-signing)",
                command.display()
            )
        }
        None => {
            eprintln!("note: model_signing not found; skipping the live OMS check");
            None
        }
    }
}

fn oms_verify(model: &Path, bundle: &Path, public: &Path) -> Option<Output> {
    let (command, flag) = model_signing()?;
    let mut c = Command::new(command);
    c.args(["verify", "key"]).arg(model).arg("--signature").arg(bundle).arg(flag).arg(public);
    Some(c.output().unwrap())
}

/// Flips one byte of the first entry's payload, in place.
fn flip_payload_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = usize::try_from(Container::parse(&bytes).unwrap().entries().next().unwrap().offset()).unwrap();
    bytes[at] ^= 0x80;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn model_signing_accepts_the_bundle_of_a_p256_key_and_refuses_it_after_a_byte_flip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = model(d);
    let (private, public) = key(d, "p256");
    let signed = d.join("model.signed.tpack");
    let bundle = d.join("model.signed.tpack.sig");
    assert_ok(&run!("sign", input, "-o", signed, "--key", private, "--counter", "2", "--oms-bundle", bundle));
    // The bundle is deterministic too.
    let first = std::fs::read(&bundle).unwrap();
    assert_ok(&run!(
        "sign",
        input,
        "-o",
        signed,
        "--key",
        private,
        "--counter",
        "2",
        "--oms-bundle",
        bundle,
        "--force"
    ));
    assert_eq!(std::fs::read(&bundle).unwrap(), first);
    assert_ok(&run!("verify", signed, "--key", public));
    let Some(ok) = oms_verify(&signed, &bundle, &public) else { return };
    assert!(ok.status.success(), "model_signing refused: {}{}", stdout(&ok), stderr(&ok));
    flip_payload_byte(&signed);
    let bad = oms_verify(&signed, &bundle, &public).unwrap();
    assert!(!bad.status.success(), "model_signing accepted a changed file: {}", stdout(&bad));
}

#[test]
fn an_ed25519_key_needs_an_oms_key_and_then_both_signatures_verify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = model(d);
    let (ed, ed_public) = key(d, "ed25519");
    let (p256, p256_public) = key(d, "p256");
    let signed = d.join("model.signed.tpack");
    let bundle = d.join("bundle.sig");
    let err = assert_fails(
        &run!("sign", input, "-o", signed, "--key", ed, "--oms-bundle", bundle),
        3,
        &["--oms-key"],
    );
    assert!(err.contains("Ed25519") && err.contains("P-256"), "{err}");
    assert!(!signed.exists() && !bundle.exists(), "nothing is written when the bundle cannot be");
    // An Ed25519 --oms-key is refused in words too.
    assert_fails(
        &run!("sign", input, "-o", signed, "--key", ed, "--oms-bundle", bundle, "--oms-key", ed),
        3,
        &["P-256"],
    );
    assert_ok(&run!("sign", input, "-o", signed, "--key", ed, "--oms-bundle", bundle, "--oms-key", p256));
    assert_ok(&run!("verify", signed, "--key", ed_public));
    let Some(ok) = oms_verify(&signed, &bundle, &p256_public) else { return };
    assert!(ok.status.success(), "model_signing refused: {}{}", stdout(&ok), stderr(&ok));
    // Another P-256 key does not verify the bundle.
    let (_, other) = key(
        &{
            let sub = d.join("other");
            std::fs::create_dir(&sub).unwrap();
            sub
        },
        "p256",
    );
    let wrong = oms_verify(&signed, &bundle, &other).unwrap();
    assert!(!wrong.status.success(), "model_signing accepted another key");
    flip_payload_byte(&signed);
    assert!(!oms_verify(&signed, &bundle, &p256_public).unwrap().status.success());
}

#[test]
fn oms_key_without_a_bundle_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = model(d);
    let (p256, _) = key(d, "p256");
    let o = run!("sign", input, "-o", d.join("o.tpack"), "--key", p256, "--oms-key", p256);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
