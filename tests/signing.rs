//! Signing (spec §14, feature `sign`): keys that `openssl` made, both writer modes, re-signing and unsigning,
//! determinism, and what the writers refuse. Natively only: it runs `openssl`, and signing (host code) takes
//! minutes per signature under Miri, where the verification side is sampled instead.
#![cfg(not(miri))]

mod support;

use std::process::Command;

use support::cases::signature::{test_key, test_p256_key};
use support::sinks::{MemSink, PipeSink};
use tpack::auth::{Algorithm, Policy, SoftwareCrypto};
use tpack::sign::{sign_container, unsign_container, PublicKey, SignOptions, SigningKey};
use tpack::write::{Builder, EntryDecl, NewEntry, SeekWriter, StreamWriter, VecBookkeeping, WriteError};
use tpack::{Container, Dtype, MetaValue, Rule};

fn openssl(args: &[&str], input: Option<&[u8]>) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new("openssl")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("openssl is installed");
    child.stdin.take().unwrap().write_all(input.unwrap_or(&[])).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "openssl {args:?}");
    out.stdout
}

fn model() -> Vec<u8> {
    support::cases::base().encode()
}

fn authenticate(bytes: &[u8], key: &PublicKey, min_counter: u64) -> Result<u64, Rule> {
    let trusted = [key.trusted()];
    let policy = Policy { min_counter, ..Policy::require(&trusted) };
    let c = Container::parse(bytes).map_err(|e| e.rule())?;
    let checked = c.authenticate(&policy, &SoftwareCrypto).map_err(|e| e.rule())?;
    checked.verify(&SoftwareCrypto).map_err(|e| e.rule())?;
    Ok(checked.signer().unwrap().counter)
}

/// Keys made by `openssl genpkey` sign; their public halves from `openssl pkey -pubout` verify; the key id is
/// what `openssl pkey -pubin -outform DER | sha256sum` prints.
#[test]
#[cfg_attr(
    windows,
    ignore = "runs the openssl command line, which the Windows run (wine) lacks; the Linux run has it"
)]
fn openssl_keys_sign_and_verify() {
    for (algorithm, args) in [
        (Algorithm::Ed25519, &["genpkey", "-algorithm", "ed25519"][..]),
        (Algorithm::EcdsaP256, &["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"][..]),
    ] {
        let private = openssl(args, None);
        let public = openssl(&["pkey", "-pubout"], Some(&private));
        let der = openssl(&["pkey", "-pubin", "-outform", "DER"], Some(&public));
        let key = SigningKey::from_pem(std::str::from_utf8(&private).unwrap()).unwrap();
        assert_eq!(key.algorithm(), algorithm);
        let verifying = PublicKey::from_pem(std::str::from_utf8(&public).unwrap()).unwrap();
        assert_eq!(&verifying, key.public());
        let mut hasher = <tpack::auth::Sha256Software as Default>::default();
        tpack::auth::Sha256::update(&mut hasher, &der);
        assert_eq!(verifying.key_id(), tpack::auth::Sha256::finish(hasher), "{algorithm}");
        let signed =
            sign_container(&model(), &key, &SignOptions { counter: 3, ..SignOptions::default() }).unwrap();
        assert_eq!(authenticate(&signed, &verifying, 3), Ok(3));
        assert_eq!(authenticate(&signed, &verifying, 4), Err(Rule::Rollback));
        // Our PEM goes back through openssl unchanged in meaning.
        let ours = key.to_pem().unwrap();
        let again = openssl(&["pkey", "-pubout"], Some(ours.as_bytes()));
        assert_eq!(PublicKey::from_pem(std::str::from_utf8(&again).unwrap()).unwrap(), verifying);
        assert_eq!(PublicKey::from_pem(&verifying.to_pem().unwrap()).unwrap(), verifying);
    }
}

/// The key id the structural vectors use without deriving the key is test key 1's.
#[test]
fn the_written_out_key_id_is_test_key_1s() {
    assert_eq!(support::cases::signature::TEST_KEY_1_ID, test_key(1).public().key_id());
}

/// The same content signed twice gives the same bytes, for both algorithms.
#[test]
fn signing_is_deterministic() {
    for key in [test_key(1), test_p256_key()] {
        let options = SignOptions { counter: 9, subject: Some("acme.kws".into()), embed_public_key: true };
        let a = sign_container(&model(), &key, &options).unwrap();
        let b = sign_container(&model(), &key, &options).unwrap();
        assert_eq!(a, b, "{}", key.algorithm());
        assert_eq!(authenticate(&a, key.public(), 9), Ok(9));
    }
}

/// Unsigning a signed canonical container gives it back byte for byte; re-signing replaces the signature.
#[test]
fn unsign_inverts_sign_and_resigning_replaces() {
    let original = model();
    let once = sign_container(&original, &test_key(1), &SignOptions::default()).unwrap();
    assert_eq!(unsign_container(&once).unwrap(), original);
    let twice =
        sign_container(&once, &test_key(2), &SignOptions { counter: 5, ..SignOptions::default() }).unwrap();
    assert_eq!(authenticate(&twice, test_key(2).public(), 5), Ok(5));
    assert_eq!(authenticate(&twice, test_key(1).public(), 0), Err(Rule::UnknownKey));
    assert_eq!(unsign_container(&twice).unwrap(), original);
    // A damaged input is never signed.
    let mut damaged = original.clone();
    let last = damaged.len() - 30;
    damaged[last] ^= 1;
    assert!(sign_container(&damaged, &test_key(1), &SignOptions::default()).is_err());
}

/// Both writer modes sign as they write, an open-ended entry included, and give the same bytes.
#[test]
fn both_writer_modes_sign_while_writing() {
    let key = test_key(1);
    let options = SignOptions { counter: 1, subject: Some("model.line".into()), embed_public_key: false };
    let weights: Vec<u8> = (0..64u8).collect();
    let mut seek = SeekWriter::new(MemSink::default(), VecBookkeeping);
    seek.sign(&key, &options).unwrap();
    seek.declare(EntryDecl::new("w", Dtype::U8, &[64])).unwrap();
    seek.declare(EntryDecl::open_ended("code", Dtype::RAW)).unwrap();
    seek.metadata("note", MetaValue::String("hi")).unwrap();
    seek.write(&weights[..10]).unwrap();
    seek.write(&weights[10..]).unwrap();
    seek.end_entry().unwrap();
    seek.write(b"open-ended code").unwrap();
    seek.end_entry().unwrap();
    let seeked = seek.finish().unwrap().bytes;
    assert_eq!(authenticate(&seeked, key.public(), 1), Ok(1));

    let mut pipe = StreamWriter::new(PipeSink::default(), VecBookkeeping);
    pipe.declare(EntryDecl::new("w", Dtype::U8, &[64])).unwrap();
    pipe.declare(EntryDecl::new("code", Dtype::RAW, &[15])).unwrap();
    pipe.metadata("note", MetaValue::String("hi")).unwrap();
    pipe.sign(&key, &options).unwrap();
    pipe.write_entry(&weights).unwrap();
    pipe.write_entry(b"open-ended code").unwrap();
    assert_eq!(pipe.finish().unwrap().0.bytes, seeked);

    let mut builder = Builder::new();
    builder.push(NewEntry::new("w", Dtype::U8, &[64], &weights)).unwrap();
    builder.push(NewEntry::new("code", Dtype::RAW, &[15], b"open-ended code")).unwrap();
    builder.metadata("note", MetaValue::String("hi")).unwrap();
    builder.sign(&key, &options).unwrap();
    assert_eq!(builder.finish().unwrap(), seeked);
}

/// What only the signing writer may write is refused to everyone else, with the rule it would break.
#[test]
fn the_writers_refuse_what_signing_owns() {
    let format = |e: WriteError<std::convert::Infallible>| match e {
        WriteError::Format(e) => e.rule(),
        other => panic!("{other:?}"),
    };
    let mut b = Builder::new();
    assert_eq!(
        format(b.push(NewEntry::new("tpack.signature", Dtype::RAW, &[1], &[0])).unwrap_err()),
        Rule::SignatureEntry
    );
    let mut b = Builder::new();
    assert_eq!(
        format(b.push(NewEntry::new("sig", Dtype::SIGNATURE, &[1], &[0])).unwrap_err()),
        Rule::SignatureEntry
    );
    let mut b = Builder::new();
    assert_eq!(format(b.metadata("tpack.sig.counter", MetaValue::U64(1)).unwrap_err()), Rule::SignedFlag);
    // Bit 0 without signing: an unsigned file is of minor 0 or 1, where the bit means nothing; it is kept.
    let mut b = Builder::new();
    b.compat_flags(1);
    b.push(NewEntry::new("w", Dtype::U8, &[1], &[0])).unwrap();
    let plain = b.finish().unwrap();
    let c = Container::parse(&plain).unwrap();
    assert_eq!((c.compat_flags(), c.version().1, c.signed_attributes()), (1, 0, None));
    // Subjects of 0 and 256 bytes are refused when signing starts.
    for subject in ["", &"a".repeat(256)] {
        let mut b = Builder::new();
        let options = SignOptions { subject: Some(subject.into()), ..SignOptions::default() };
        assert_eq!(format(b.sign(&test_key(1), &options).unwrap_err()), Rule::SignatureMeta);
    }
    // A payload call for the signature entry, which the writer writes itself.
    let mut w = StreamWriter::new(PipeSink::default(), VecBookkeeping);
    w.sign(&test_key(1), &SignOptions::default()).unwrap();
    w.declare(EntryDecl::new("w", Dtype::U8, &[1])).unwrap();
    w.write_entry(&[7]).unwrap();
    assert!(matches!(w.write(&[0]), Err(WriteError::TooManyEntries)));
}

/// A signed container's signature checks only the prefix and the digests; each entry is then checked on its
/// own, so a damaged entry is found when it is used, and the others stay usable.
#[test]
fn entries_are_checked_lazily_and_independently() {
    let key = test_key(1);
    let signed = sign_container(&model(), &key, &SignOptions::default()).unwrap();
    let c = Container::parse(&signed).unwrap();
    let mut bytes = signed.clone();
    let at = c.entry(2).unwrap().range().start as usize;
    bytes[at] ^= 0x40;
    let c = Container::parse(&bytes).unwrap();
    let trusted = [key.public().trusted()];
    let checked = c.authenticate(&Policy::require(&trusted), &SoftwareCrypto).unwrap();
    assert!(checked.verify_entry(0, &SoftwareCrypto).is_ok());
    assert_eq!(checked.verify_entry(2, &SoftwareCrypto).unwrap_err().rule(), Rule::EntryDigest);
    assert!(checked.verify_entry(3, &SoftwareCrypto).is_ok());
    assert_eq!(checked.verify_entry(99, &SoftwareCrypto).unwrap_err().rule(), Rule::EntryDigest);
    // An unsigned container the policy allows: entries are checked against their CRCs.
    let unsigned = model();
    let c = Container::parse(&unsigned).unwrap();
    let checked = c
        .authenticate(&Policy { require_signature: false, ..Policy::require(&trusted) }, &SoftwareCrypto)
        .unwrap();
    assert!(checked.signer().is_none());
    assert!(checked.verify_entry(1, &SoftwareCrypto).is_ok());
}
