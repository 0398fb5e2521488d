//! `tpack keygen`, `tpack sign` and `tpack verify --key`: keys that interoperate with openssl both ways,
//! deterministic signing, and the attacks of issue 23 refused with exit code 1 and the rule named.
//!
//! Keys made outside our code come from `openssl genpkey` (CI has openssl; nothing here is skipped).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value;
use tpack::checksum::crc32;
use tpack::write::{Builder, NewEntry};
use tpack::{Container, Dtype, MetaValue};

/// Runs openssl with `args`; its stdout. Panics with its stderr when it fails.
fn openssl<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Vec<u8> {
    let out = Command::new("openssl").args(args).output().expect("openssl is installed (CI has it)");
    assert!(out.status.success(), "openssl failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// An openssl-made private key of `algorithm` ("ed25519" or "p256") in `dir`, and its openssl-made public
/// key: (private, public).
fn openssl_key(dir: &Path, stem: &str, algorithm: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{stem}.pem"));
    let public = dir.join(format!("{stem}.pub.pem"));
    let p = private.to_str().unwrap();
    match algorithm {
        "ed25519" => openssl(&["genpkey", "-algorithm", "ed25519", "-out", p]),
        "p256" => openssl(&["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p]),
        other => panic!("no algorithm {other}"),
    };
    openssl(&["pkey", "-in", p, "-pubout", "-out", public.to_str().unwrap()]);
    (private, public)
}

/// The key id of a public key file as openssl computes it: SHA-256 of the DER SPKI, in hex.
fn openssl_key_id(public: &Path) -> String {
    sha256(&openssl(&["pkey", "-pubin", "-in", public.to_str().unwrap(), "-outform", "DER"]))
}

/// An unsigned container with entries of several sizes (entry 3 is `fc1.weight`).
fn model() -> Vec<u8> {
    let mut b = Builder::new();
    b.push(NewEntry::new("embed", Dtype::F32, &[4, 4], &[1; 64])).unwrap();
    b.push(NewEntry::new("conv.weight", Dtype::I8, &[3, 3], &[2; 9])).unwrap();
    b.push(NewEntry::new("conv.bias", Dtype::F32, &[3], &[3; 12])).unwrap();
    b.push(NewEntry::new("fc1.weight", Dtype::F32, &[64, 16], &[4; 4096])).unwrap();
    b.push(NewEntry::new("fc1.bias", Dtype::F32, &[16], &[5; 64])).unwrap();
    b.metadata("arch", MetaValue::String("kws")).unwrap();
    b.finish().unwrap()
}

/// A temporary directory with `model()` in it as `m.tpack`.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tpack");
    std::fs::write(&path, model()).unwrap();
    (dir, path)
}

/// Signs `input` into `dir/name` with `key` and `extra` arguments; the signed file's path.
fn sign(dir: &Path, input: &Path, name: &str, key: &Path, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut args: Vec<std::ffi::OsString> =
        vec!["sign".into(), input.into(), "-o".into(), (&out).into(), "--key".into(), key.into()];
    args.extend(extra.iter().map(Into::into));
    assert_ok(&tpack(args));
    out
}

/// The attacker's edit: flips a byte of entry `index`'s payload, then recomputes that entry's CRC and the
/// trailer's own checksum, so that every CRC matches again (the header checksum does not cover the trailer).
fn forge_payload(bytes: &mut [u8], index: usize) {
    let c = Container::parse(bytes).unwrap();
    let entry = c.entries().nth(index).unwrap();
    let at = usize::try_from(entry.offset()).unwrap();
    let len = usize::try_from(entry.byte_len()).unwrap();
    let trailer = &c.header().sections[5];
    let (trailer_at, n) = (usize::try_from(trailer.offset.get()).unwrap(), c.len());
    bytes[at] ^= 0x01;
    let crc = crc32(&bytes[at..at + len]);
    bytes[trailer_at + 4 * index..trailer_at + 4 * index + 4].copy_from_slice(&crc.to_le_bytes());
    let all = crc32(&bytes[trailer_at..trailer_at + 4 * n]);
    bytes[trailer_at + 4 * n..trailer_at + 4 * n + 4].copy_from_slice(&all.to_le_bytes());
    Container::parse(bytes).unwrap().verify().expect("every CRC matches after the forgery");
}

#[test]
fn keygen_writes_keys_openssl_reads_and_prints_their_id() {
    let dir = tempfile::tempdir().unwrap();
    for algorithm in ["ed25519", "p256"] {
        let key = dir.path().join(format!("{algorithm}.pem"));
        let printed = assert_ok(&run!("keygen", "--algorithm", algorithm, "-o", key));
        let public = PathBuf::from(format!("{}.pub", key.display()));
        // openssl reads both files, and derives from the private key the very public key we wrote.
        let derived = openssl(&["pkey", "-in", key.to_str().unwrap(), "-pubout"]);
        assert_eq!(derived, std::fs::read(&public).unwrap(), "{algorithm}");
        let text =
            String::from_utf8(openssl(&["pkey", "-in", key.to_str().unwrap(), "-text", "-noout"])).unwrap();
        let want = if algorithm == "ed25519" { "ED25519 Private-Key" } else { "NIST CURVE: P-256" };
        assert!(text.contains(want), "{algorithm}: {text}");
        assert!(std::fs::read_to_string(&key).unwrap().starts_with("-----BEGIN PRIVATE KEY-----\n"));
        // The id printed is openssl's SHA-256 of the DER SPKI.
        assert!(printed.contains(&openssl_key_id(&public)), "{algorithm}: {printed}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{algorithm}: the private key is owner-only");
        }
    }
}

#[test]
fn keygen_refuses_to_overwrite_without_force_and_stays_owner_only_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("k.pem");
    let public = dir.path().join("k.pem.pub");
    assert_ok(&run!("keygen", "-o", key));
    let (old_key, old_public) = (std::fs::read(&key).unwrap(), std::fs::read(&public).unwrap());
    assert_fails(&run!("keygen", "-o", key), 4, &["already exists", "--force"]);
    assert_eq!(std::fs::read(&key).unwrap(), old_key);
    // Only the public key left over: still refused, and nothing is written.
    std::fs::remove_file(&key).unwrap();
    assert_fails(&run!("keygen", "-o", key), 4, &["k.pem.pub already exists"]);
    assert!(!key.exists());
    assert_eq!(std::fs::read(&public).unwrap(), old_public);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&key, b"old").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_ok(&run!("keygen", "-o", key, "--force"));
        assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);
        assert_ne!(std::fs::read(&public).unwrap(), old_public);
    }
}

#[test]
fn our_keys_sign_what_openssl_verifies_and_openssl_keys_sign_what_we_verify() {
    let (dir, input) = setup();
    let d = dir.path();
    // Keys made by openssl sign with tpack; tpack verifies with openssl's public key.
    for algorithm in ["ed25519", "p256"] {
        let (private, public) = openssl_key(d, &format!("ossl-{algorithm}"), algorithm);
        let signed = sign(
            d,
            &input,
            &format!("{algorithm}.tpack"),
            &private,
            &["--counter", "7", "--subject", "acme.kws"],
        );
        let out = assert_ok(&run!(
            "verify",
            signed,
            "--key",
            public,
            "--min-counter",
            "7",
            "--subject",
            "acme.kws"
        ));
        let name = if algorithm == "ed25519" { "Ed25519" } else { "ECDSA P-256" };
        for want in ["authentic", &openssl_key_id(&public), name, "counter 7", "acme.kws"] {
            assert!(out.contains(want), "{algorithm}: lacks {want:?}: {out}");
        }
    }
    // Keys made by tpack: openssl signs with the private key and verifies with the public one.
    let message = d.join("message");
    std::fs::write(&message, b"interop").unwrap();
    for algorithm in ["ed25519", "p256"] {
        let key = d.join(format!("ours-{algorithm}.pem"));
        assert_ok(&run!("keygen", "--algorithm", algorithm, "-o", key));
        let public = format!("{}.pub", key.display());
        let signature = d.join(format!("{algorithm}.sig"));
        let (k, m, s) = (key.to_str().unwrap(), message.to_str().unwrap(), signature.to_str().unwrap());
        if algorithm == "ed25519" {
            openssl(&["pkeyutl", "-sign", "-rawin", "-inkey", k, "-in", m, "-out", s]);
            openssl(&["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", &public, "-in", m, "-sigfile", s]);
        } else {
            openssl(&["dgst", "-sha256", "-sign", k, "-out", s, m]);
            let ok = openssl(&["dgst", "-sha256", "-verify", &public, "-signature", s, m]);
            assert!(String::from_utf8_lossy(&ok).contains("Verified OK"));
        }
        // And tpack signs with it too.
        let signed = sign(d, &input, &format!("ours-{algorithm}.tpack"), &key, &[]);
        assert_ok(&run!("verify", signed, "--key", public));
    }
}

#[test]
fn signing_twice_gives_the_same_bytes() {
    let (dir, input) = setup();
    let d = dir.path();
    for algorithm in ["ed25519", "p256"] {
        let (private, _) = openssl_key(d, algorithm, algorithm);
        let args = ["--counter", "3", "--subject", "acme.kws", "--embed-public-key"];
        let a = std::fs::read(sign(d, &input, &format!("{algorithm}-a.tpack"), &private, &args)).unwrap();
        let b = std::fs::read(sign(d, &input, &format!("{algorithm}-b.tpack"), &private, &args)).unwrap();
        assert_eq!(a, b, "{algorithm}");
        assert_ne!(a, std::fs::read(&input).unwrap());
        // Re-signing a signed file replaces its signature: the same bytes again.
        let again = sign(
            d,
            &d.join(format!("{algorithm}-a.tpack")),
            &format!("{algorithm}-c.tpack"),
            &private,
            &args,
        );
        assert_eq!(std::fs::read(again).unwrap(), a, "{algorithm}: re-signed");
    }
}

#[test]
fn sign_refuses_an_existing_output_a_corrupt_input_and_a_bad_key() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "ed25519");
    let out = sign(d, &input, "s.tpack", &private, &[]);
    assert_fails(&run!("sign", input, "-o", out, "--key", private), 4, &["already exists", "--force"]);
    assert_ok(&run!("sign", input, "-o", out, "--key", private, "--force"));
    // A corrupt input is not blessed with a signature.
    let mut bytes = model();
    let at = usize::try_from(Container::parse(&bytes).unwrap().entries().nth(3).unwrap().offset()).unwrap();
    bytes[at] ^= 1;
    let corrupt = d.join("corrupt.tpack");
    std::fs::write(&corrupt, &bytes).unwrap();
    assert_fails(
        &run!("sign", corrupt, "-o", d.join("x.tpack"), "--key", private),
        1,
        &["corrupt", "fc1.weight"],
    );
    assert!(!d.join("x.tpack").exists());
    // A public key is not a private key.
    assert_fails(&run!("sign", input, "-o", d.join("y.tpack"), "--key", public), 3, &["private key"]);
    // An empty subject, or one over 255 bytes, is refused before anything is written.
    let long = "s".repeat(256);
    for subject in ["", long.as_str()] {
        assert_fails(
            &run!("sign", input, "-o", d.join("z.tpack"), "--key", private, "--subject", subject),
            3,
            &["subject"],
        );
    }
    assert!(!d.join("z.tpack").exists());
}

#[test]
fn a_payload_byte_changed_with_every_crc_recomputed_is_refused_naming_r64() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "ed25519");
    let signed = sign(d, &input, "s.tpack", &private, &["--counter", "5"]);
    let mut bytes = std::fs::read(&signed).unwrap();
    forge_payload(&mut bytes, 3);
    let forged = d.join("forged.tpack");
    std::fs::write(&forged, &bytes).unwrap();
    // CRCs alone cannot tell: without a key the forged file is intact, and only said to be unchecked.
    let unchecked = assert_ok(&run!("verify", forged));
    assert!(unchecked.contains("not checked") && !unchecked.contains("authentic"), "{unchecked}");
    for threads in ["1", "4"] {
        let err = assert_fails(&run!("verify", forged, "--key", public, "--threads", threads), 1, &["R64"]);
        assert!(err.contains("entry 3") && err.contains("fc1.weight"), "{err}");
        assert!(err.contains("not authentic"), "{err}");
    }
}

#[test]
fn the_first_bad_entry_in_table_order_is_reported_whatever_thread_finds_it() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "p256");
    let signed = sign(d, &input, "s.tpack", &private, &[]);
    let mut bytes = std::fs::read(&signed).unwrap();
    // The big entry 3 takes longest to hash; entry 1 is the first in table order.
    forge_payload(&mut bytes, 3);
    forge_payload(&mut bytes, 1);
    let forged = d.join("forged.tpack");
    std::fs::write(&forged, &bytes).unwrap();
    for threads in ["1", "2", "8"] {
        for _ in 0..5 {
            let err =
                assert_fails(&run!("verify", forged, "--key", public, "--threads", threads), 1, &["R64"]);
            let first = err.find("entry 1").unwrap_or_else(|| panic!("{err}"));
            assert!(err.contains("conv.weight"), "{err}");
            assert!(err.find("entry 3").is_none_or(|later| later > first), "{err}");
        }
    }
}

#[test]
fn a_stripped_signature_is_refused_naming_r58_unless_unsigned_files_are_allowed() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "ed25519");
    let signed = sign(d, &input, "s.tpack", &private, &[]);
    // The attacker's stripped copy: the same content, unsigned (tpack's own unsigned form of it).
    let stripped = d.join("stripped.tpack");
    std::fs::write(&stripped, tpack::sign::unsign_container(&std::fs::read(&signed).unwrap()).unwrap())
        .unwrap();
    let err = assert_fails(&run!("verify", stripped, "--key", public), 1, &["R58", "not signed"]);
    assert!(err.contains("--allow-unsigned"), "{err}");
    let allowed = assert_ok(&run!("verify", stripped, "--key", public, "--allow-unsigned"));
    assert!(allowed.contains("unsigned") && !allowed.contains("authentic"), "{allowed}");
    // --allow-unsigned accepts no bad signature.
    let mut bytes = std::fs::read(&signed).unwrap();
    forge_payload(&mut bytes, 0);
    std::fs::write(&stripped, &bytes).unwrap();
    assert_fails(
        &run!("verify", stripped, "--key", public, "--allow-unsigned"),
        1,
        &["R64", "entry 0", "embed"],
    );
}

#[test]
fn a_lower_counter_is_refused_naming_r62() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "ed25519");
    let old = sign(d, &input, "old.tpack", &private, &["--counter", "2"]);
    assert_ok(&run!("verify", old, "--key", public, "--min-counter", "2"));
    let err = assert_fails(&run!("verify", old, "--key", public, "--min-counter", "3"), 1, &["R62"]);
    assert!(err.contains("counter 2") && err.contains('3'), "{err}");
    // With several files, each gets its line and the error counts the refused ones.
    let new = sign(d, &input, "new.tpack", &private, &["--counter", "3"]);
    let o = run!("verify", new, old, "--key", public, "--min-counter", "3");
    assert_fails(&o, 1, &["1 of 2 files are not intact and authentic", "old.tpack"]);
    let out = stdout(&o);
    assert!(out.contains("new.tpack: intact and authentic") && out.contains("(R62)"), "{out}");
}

#[test]
fn another_key_is_refused_naming_r59() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, signer) = openssl_key(d, "signer", "ed25519");
    let (_, other) = openssl_key(d, "other", "ed25519");
    let (_, other_p256) = openssl_key(d, "other-p256", "p256");
    let signed = sign(d, &input, "s.tpack", &private, &[]);
    let err = assert_fails(&run!("verify", signed, "--key", other, "--key", other_p256), 1, &["R59"]);
    assert!(err.contains(&openssl_key_id(&signer)), "the signer's key id is named: {err}");
    // Among several keys, the right one is found.
    assert_ok(&run!("verify", signed, "--key", other, "--key", signer));
}

#[test]
fn another_subject_is_refused_naming_r61() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "p256");
    let signed = sign(d, &input, "s.tpack", &private, &["--subject", "acme.kws"]);
    assert_fails(
        &run!("verify", signed, "--key", public, "--subject", "acme.asr"),
        1,
        &["R61", "acme.kws", "acme.asr"],
    );
    let unnamed = sign(d, &input, "u.tpack", &private, &[]);
    assert_fails(&run!("verify", unnamed, "--key", public, "--subject", "acme.kws"), 1, &["R61"]);
}

#[test]
fn text_from_the_file_never_reaches_the_terminal_raw() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "ed25519");
    let hostile = "acme\u{1b}[31m\u{202e}evil";
    let signed = sign(d, &input, "s.tpack", &private, &["--subject", hostile]);
    for out in [
        assert_ok(&run!("verify", signed, "--key", public)),
        assert_ok(&run!("verify", signed)),
        assert_ok(&run!("inspect", signed)),
    ] {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{202e}'), "{out:?}");
        assert!(out.contains("evil"), "{out}");
    }
    let err = assert_fails(&run!("verify", signed, "--key", public, "--subject", "acme"), 1, &["R61"]);
    assert!(!err.contains('\u{1b}') && !err.contains('\u{202e}'), "{err:?}");
}

#[test]
fn verify_without_a_key_checks_crcs_and_says_the_signature_was_not_checked() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "ed25519");
    let signed = sign(d, &input, "s.tpack", &private, &["--counter", "9"]);
    let out = assert_ok(&run!("verify", signed));
    assert!(out.contains("signed") && out.contains("not checked"), "{out}");
    assert!(out.contains(&openssl_key_id(&public)) && out.contains("counter 9"), "{out}");
    assert!(!out.contains("authentic"), "{out}");
    // A damaged (not forged) signed file still fails its CRCs.
    let mut bytes = std::fs::read(&signed).unwrap();
    let at = usize::try_from(Container::parse(&bytes).unwrap().entries().nth(2).unwrap().offset()).unwrap();
    bytes[at] ^= 1;
    std::fs::write(&signed, &bytes).unwrap();
    assert_fails(&run!("verify", signed), 1, &["conv.bias", "R50"]);
    // JSON says the same.
    let unsigned_json = run!("verify", input, "--json");
    let doc: Value = serde_json::from_slice(&unsigned_json.stdout).unwrap();
    assert_eq!(doc["files"][0]["signature"], Value::Null);
}

#[test]
fn verify_json_reports_the_signer_and_the_rule() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "p256");
    let signed = sign(d, &input, "s.tpack", &private, &["--counter", "4", "--subject", "acme.kws"]);
    let o = run!("verify", signed, "--key", public, "--json");
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &doc["files"][0]["signature"];
    assert_eq!(s["checked"], true);
    assert_eq!(s["authentic"], true);
    assert_eq!(s["algorithm"], "ECDSA P-256");
    assert_eq!(s["key_id"], openssl_key_id(&public));
    assert_eq!(s["counter"], 4);
    assert_eq!(s["subject"], "acme.kws");
    let o = run!("verify", signed, "--key", public, "--json", "--min-counter", "5");
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["intact"], false);
    assert_eq!(doc["files"][0]["rule"], "R62");
}

#[test]
fn verify_options_need_a_key() {
    let (_dir, input) = setup();
    for extra in [["--min-counter", "1"], ["--subject", "x"]] {
        let o = run!("verify", input, extra[0], extra[1]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    }
    assert_eq!(run!("verify", input, "--allow-unsigned").status.code(), Some(2));
}

#[test]
fn a_key_file_that_is_no_public_key_is_named() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, _) = openssl_key(d, "k", "ed25519");
    assert_fails(&run!("verify", input, "--key", private), 3, &["private key", "-pubout"]);
    let junk = d.join("junk.pem");
    std::fs::write(&junk, b"hello").unwrap();
    assert_fails(&run!("verify", input, "--key", junk), 3, &["junk.pem", "public key"]);
    assert_fails(&run!("verify", input, "--key", d.join("missing.pem")), 4, &["missing.pem"]);
    // A directory, and a huge file given by mistake (it is not read whole).
    assert_fails(&run!("verify", input, "--key", d), 4, &["cannot read"]);
    let huge = d.join("huge.pem");
    std::fs::File::create(&huge).unwrap().set_len(1 << 40).unwrap();
    assert_fails(&run!("verify", input, "--key", huge), 3, &["huge.pem", "larger than 64 KiB"]);
    assert_fails(&run!("sign", input, "-o", d.join("o.tpack"), "--key", huge), 3, &["larger than 64 KiB"]);
    // An RSA key is a public key of an algorithm tpack does not sign with.
    let rsa = d.join("rsa.pem");
    openssl(&[
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:1024",
        "-out",
        rsa.to_str().unwrap(),
    ]);
    let rsa_pub = d.join("rsa.pub.pem");
    openssl(&["pkey", "-in", rsa.to_str().unwrap(), "-pubout", "-out", rsa_pub.to_str().unwrap()]);
    assert_fails(&run!("verify", input, "--key", rsa_pub), 3, &["Ed25519", "P-256"]);
}

#[test]
fn inspect_shows_the_signed_attributes() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, public) = openssl_key(d, "k", "ed25519");
    let signed = sign(
        d,
        &input,
        "s.tpack",
        &private,
        &["--counter", "12", "--subject", "acme.kws", "--embed-public-key"],
    );
    let text = assert_ok(&run!("inspect", signed));
    let id = openssl_key_id(&public);
    for want in [
        "tpack 1.2",
        "flags: 0x1 (SIGNED)",
        "signed: Ed25519",
        &id,
        "counter 12",
        "acme.kws",
        "public key embedded",
        "tpack.signature",
    ] {
        assert!(text.contains(want), "inspect lacks {want:?}:\n{text}");
    }
    let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", signed, "--json"))).unwrap();
    assert_eq!(doc["version"], serde_json::json!([1, 2]));
    let s = &doc["signature"];
    assert_eq!(s["algorithm"], 1);
    assert_eq!(s["algorithm_name"], "Ed25519");
    assert_eq!(s["key"], id);
    assert_eq!(s["counter"], 12);
    assert_eq!(s["subject"], "acme.kws");
    assert!(s["public_key"].as_str().is_some_and(|k| k.len() == 64), "{s}");
    let last = doc["entries"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["name"], "tpack.signature");
    assert_eq!(last["dtype"], "SIGNATURE");
    // An unsigned file has no signature object.
    let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", input, "--json"))).unwrap();
    assert_eq!(doc["signature"], Value::Null);
}

#[test]
fn inspect_shows_a_signed_nested_container() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, _) = openssl_key(d, "k", "p256");
    let inner =
        std::fs::read(sign(d, &input, "inner.tpack", &private, &["--counter", "6", "--subject", "npu.blob"]))
            .unwrap();
    let mut b = Builder::new();
    b.push(NewEntry::new("npu", Dtype::CONTAINER, &[inner.len() as u64], &inner)).unwrap();
    b.push(NewEntry::new("w", Dtype::F32, &[1], &[0; 4])).unwrap();
    let outer = d.join("outer.tpack");
    std::fs::write(&outer, b.finish().unwrap()).unwrap();
    let text = assert_ok(&run!("inspect", outer, "--entry", "npu"));
    // The line wraps: compare words.
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("signed: ECDSA P-256") && text.contains("npu.blob") && text.contains("counter 6"),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", outer, "--json"))).unwrap();
    assert_eq!(doc["signature"], Value::Null);
    let nested = &doc["entries"][0]["container"];
    assert_eq!(nested["signature"]["algorithm"], 2);
    assert_eq!(nested["signature"]["subject"], "npu.blob");
    // verify names the signed nested container without checking it.
    let out = assert_ok(&run!("verify", outer));
    assert!(out.contains("intact"), "{out}");
}

#[test]
fn convert_and_unpack_drop_the_signature_with_a_note() {
    let (dir, input) = setup();
    let d = dir.path();
    let (private, _) = openssl_key(d, "k", "ed25519");
    let signed = sign(d, &input, "s.tpack", &private, &["--counter", "1", "--subject", "acme.kws"]);
    for (out, format) in [("m.safetensors", "safetensors"), ("m.gguf", "GGUF")] {
        let o = run!("convert", signed, d.join(out));
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let report = stdout(&o);
        assert!(report.contains("note: the signature") && report.contains("dropped"), "{format}: {report}");
        let back = d.join(format!("{out}.tpack"));
        assert_ok(&run!("convert", d.join(out), back));
        let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", back, "--json"))).unwrap();
        let names: Vec<&str> =
            doc["entries"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert!(!names.contains(&"tpack.signature"), "{format}: {names:?}");
        let keys: Vec<&str> =
            doc["metadata"].as_array().unwrap().iter().map(|m| m["key"].as_str().unwrap()).collect();
        assert!(keys.iter().all(|k| !k.starts_with("tpack.sig.")), "{format}: {keys:?}");
    }
    let files = d.join("files");
    let o = run!("unpack", signed, "-o", files);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(said.contains("signature") && said.contains("tpack sign"), "{said}");
    let repacked = d.join("repacked.tpack");
    assert_ok(&run!("pack", files.join("manifest.json"), "-o", repacked));
    assert_eq!(
        std::fs::read(&repacked).unwrap(),
        std::fs::read(&input).unwrap(),
        "the unsigned original comes back"
    );
}

/// Every verification case of the golden vectors (spec/vectors/manifest.json) that the command line can
/// express (at least one trusted key, each given whole, no per-key subject) gives the vector's verdict: exit 0, or exit 1 with
/// the rule named.
#[test]
fn verify_gives_the_verdict_of_every_vector_verification() {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(repo().join("spec/vectors/manifest.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut rules = std::collections::BTreeSet::new();
    for vector in manifest["vectors"].as_array().unwrap() {
        let Some(cases) = vector["verifications"].as_array() else { continue };
        let file = repo().join("spec/vectors").join(vector["file"].as_str().unwrap());
        for case in cases {
            let keys = case["keys"].as_array().unwrap();
            if keys.is_empty() || keys.iter().any(|k| k["public_key"].is_null() || !k["subject"].is_null()) {
                continue;
            }
            // A key that is no valid point of its algorithm has no PEM form.
            let Some(pems): Option<Vec<tpack::sign::PublicKey>> = keys
                .iter()
                .map(|k| {
                    let algorithm = tpack::auth::Algorithm::from_code(k["algorithm"].as_u64()?)?;
                    let raw = hex::decode(k["public_key"].as_str()?).ok()?;
                    tpack::sign::PublicKey::from_raw(algorithm, &raw).ok()
                })
                .collect()
            else {
                continue;
            };
            let mut args: Vec<std::ffi::OsString> = vec!["verify".into(), (&file).into()];
            for (i, (k, key)) in keys.iter().zip(pems).enumerate() {
                assert_eq!(hex::encode(key.key_id()), k["key_id"].as_str().unwrap());
                let pem = dir.path().join(format!("{checked}-{i}.pem"));
                std::fs::write(&pem, key.to_pem().unwrap()).unwrap();
                args.extend(["--key".into(), pem.into()]);
            }
            let policy = &case["policy"];
            args.extend(["--min-counter".into(), policy["min_counter"].as_u64().unwrap().to_string().into()]);
            if let Some(subject) = policy["subject"].as_str() {
                args.extend(["--subject".into(), subject.into()]);
            }
            if policy["require_signature"] == false {
                args.push("--allow-unsigned".into());
            }
            let o = tpack(&args);
            let verdict = case["verdict"].as_str().unwrap();
            if verdict == "ok" {
                assert_ok(&o);
            } else {
                assert_fails(&o, 1, &[verdict, "not authentic"]);
                rules.insert(verdict.to_owned());
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} cases");
    for rule in ["R58", "R59", "R60", "R61", "R62", "R63", "R64"] {
        assert!(rules.contains(rule), "no vector case for {rule}: {rules:?}");
    }
}
