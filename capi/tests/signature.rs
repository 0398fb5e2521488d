//! Signed containers through the C API's `extern "C"` functions only: every verification of every signed
//! vector in `spec/vectors/manifest.json` gives its verdict (whole, and entry by entry); the signed attributes
//! and message equal the manifest's decoding; a caller's `tpack_crypto` gives the same verdicts as the built-in
//! one; arguments are checked and outputs untouched on failure.

use std::cell::RefCell;
use std::ffi::{c_void, CStr};
use std::mem::MaybeUninit;
use std::path::Path;

use serde_json::Value;
use tpack::auth::{Algorithm, Crypto, Sha256, SoftwareCrypto};
use tpack_capi::*;

#[path = "../../tests/support/manifest.rs"]
mod manifest;

const OK: tpack_result = tpack_result::TPACK_RESULT_OK;
/// Under Miri (CI runs these tests there, on s390x, for the C boundary) an Ed25519 verification takes minutes:
/// there, the verifications sampled are those decided before the signature is checked (R58 to R62), and a call
/// that must authenticate a genuine container uses [`built_in`]'s stand-in, a caller verifier that says yes.
const MIRI: bool = cfg!(miri);
const INVALID: tpack_result = tpack_result::TPACK_RESULT_INVALID_CONTAINER;

/// The manifest's vectors this file uses, parsed: natively all; under Miri only [`MIRI_SIGNED`] and
/// the samples of the two tests that step through the list (see manifest.rs); the others hold only their file
/// and validity.
fn manifest() -> &'static [Value] {
    static VECTORS: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    VECTORS.get_or_init(|| {
        let text = manifest::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
        let vectors = manifest::vectors(&text);
        let mut valid_seen = 0usize;
        let mut out = Vec::new();
        for (i, v) in vectors.iter().enumerate() {
            let valid_index = valid_seen;
            valid_seen += usize::from(v.is_valid());
            let used = !MIRI
                || MIRI_SIGNED.contains(&v.file)
                || i.is_multiple_of(MIRI_STEP_ALL)
                || (v.is_valid() && valid_index.is_multiple_of(MIRI_STEP_VALID));
            out.push(if used {
                v.parse()
            } else {
                serde_json::json!({"file": v.file, "valid": v.is_valid()})
            });
        }
        out
    })
}

/// Under Miri: every 16th vector of the whole list, and every 4th valid one, in the tests that sample so.
const MIRI_STEP_ALL: usize = 16;
/// Under Miri, the signed vectors whose records are parsed besides those the steps reach: between them every
/// verdict decided before the signature is checked (R58 to R62), which [`Sample`] takes, and the vectors the
/// tests look up by name. Parsing a vector's manifest record is what costs there (minutes for all the signed
/// ones), not the checks.
const MIRI_SIGNED: &[&str] =
    &["valid/signed-ed25519.tpack", "valid/signed-stripped.tpack", "valid/signed-with-pubkey.tpack"];
const MIRI_STEP_VALID: usize = 4;

fn read(file: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors").join(file)).expect("vector")
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn bytes_of<'a>(b: tpack_bytes) -> Option<&'a [u8]> {
    // SAFETY: bytes the API wrote point into the container, which outlives the tests' use.
    (!b.data.is_null()).then(|| unsafe { std::slice::from_raw_parts(b.data, b.len) })
}

fn str_of(s: tpack_str) -> Option<String> {
    bytes_of(tpack_bytes { data: s.data.cast(), len: s.len })
        .map(|b| String::from_utf8(b.to_vec()).expect("UTF-8"))
}

fn rule_id(rule: u32) -> &'static str {
    let p = tpack_rule_id(rule);
    assert!(!p.is_null(), "rule {rule}");
    // SAFETY: a static NUL-terminated name.
    unsafe { CStr::from_ptr(p) }.to_str().expect("UTF-8")
}

fn parse(bytes: &[u8]) -> tpack_container {
    let mut c = MaybeUninit::<tpack_container>::uninit();
    // SAFETY: `bytes` outlives the container's use; writable outputs.
    let r =
        unsafe { tpack_container_parse(bytes.as_ptr(), bytes.len(), c.as_mut_ptr(), std::ptr::null_mut()) };
    assert_eq!(r, OK);
    // SAFETY: filled by the successful call.
    unsafe { c.assume_init() }
}

/// A key set and a policy of the manifest, kept alive for the `tpack_policy` that points into it.
struct PolicySpec {
    public_keys: Vec<Option<Vec<u8>>>,
    subjects: Vec<Option<String>>,
    key_ids: Vec<[u8; 32]>,
    algorithms: Vec<u64>,
    require: bool,
    min_counter: u64,
    subject: Option<String>,
}

impl PolicySpec {
    fn of(check: &Value) -> Self {
        let keys = check["keys"].as_array().expect("keys");
        let policy = &check["policy"];
        PolicySpec {
            public_keys: keys.iter().map(|k| k["public_key"].as_str().map(unhex)).collect(),
            subjects: keys.iter().map(|k| k["subject"].as_str().map(str::to_owned)).collect(),
            key_ids: keys
                .iter()
                .map(|k| unhex(k["key_id"].as_str().expect("key_id")).try_into().expect("32 bytes"))
                .collect(),
            algorithms: keys.iter().map(|k| k["algorithm"].as_u64().expect("algorithm")).collect(),
            require: policy["require_signature"].as_bool().expect("require"),
            min_counter: policy["min_counter"].as_u64().expect("min_counter"),
            subject: policy["subject"].as_str().map(str::to_owned),
        }
    }

    fn keys(&self) -> Vec<tpack_trusted_key> {
        (0..self.key_ids.len())
            .map(|i| {
                let (public_key, public_key_len) =
                    self.public_keys[i].as_ref().map_or((std::ptr::null(), 0), |k| (k.as_ptr(), k.len()));
                let (subject, subject_len) =
                    self.subjects[i].as_ref().map_or((std::ptr::null(), 0), |s| (s.as_ptr().cast(), s.len()));
                tpack_trusted_key {
                    key_id: self.key_ids[i],
                    algorithm: self.algorithms[i],
                    public_key,
                    public_key_len,
                    subject,
                    subject_len,
                }
            })
            .collect()
    }

    fn policy(&self, keys: &[tpack_trusted_key]) -> tpack_policy {
        let (subject, subject_len) =
            self.subject.as_ref().map_or((std::ptr::null(), 0), |s| (s.as_ptr().cast(), s.len()));
        tpack_policy {
            keys: if keys.is_empty() { std::ptr::null() } else { keys.as_ptr() },
            key_count: keys.len(),
            require_signature: self.require,
            min_counter: self.min_counter,
            subject,
            subject_len,
        }
    }
}

/// The verdict as the kit writes it: "ok" or the rule id.
fn verdict(r: tpack_result, e: &MaybeUninit<tpack_error>) -> String {
    if r == OK {
        return "ok".into();
    }
    assert_eq!(r, INVALID);
    // SAFETY: written on failure.
    let e = unsafe { e.assume_init_ref() };
    assert_eq!(e.result, 1);
    rule_id(e.rule).into()
}

/// `tpack_container_verify_authentic`'s verdict.
fn whole(c: &tpack_container, policy: &tpack_policy, crypto: *const tpack_crypto) -> String {
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: a filled container, a policy whose keys live across the call, writable error.
    let r = unsafe { tpack_container_verify_authentic(c, policy, crypto, e.as_mut_ptr()) };
    verdict(r, &e)
}

/// The lazy path's verdict: authenticate, then every entry with `tpack_authenticated_verify_entry` in table
/// order, then `tpack_authenticated_verify` (which must agree when the entries did).
fn lazy(c: &tpack_container, policy: &tpack_policy, crypto: *const tpack_crypto) -> String {
    let mut a = MaybeUninit::<tpack_authenticated>::uninit();
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: as for `whole`; writable storage.
    let r = unsafe { tpack_container_authenticate(c, policy, crypto, a.as_mut_ptr(), e.as_mut_ptr()) };
    if r != OK {
        return verdict(r, &e);
    }
    // SAFETY: filled by the successful call.
    let a = unsafe { a.assume_init() };
    let mut count = 0usize;
    // SAFETY: a filled container; a writable count.
    assert_eq!(unsafe { tpack_container_entry_count(c, &mut count) }, OK);
    for i in 0..count {
        let mut payload = MaybeUninit::<tpack_bytes>::uninit();
        // SAFETY: a filled handle; writable outputs.
        let r =
            unsafe { tpack_authenticated_verify_entry(&a, crypto, i, payload.as_mut_ptr(), e.as_mut_ptr()) };
        if r != OK {
            let v = verdict(r, &e);
            // SAFETY: written on failure.
            assert_eq!(unsafe { e.assume_init() }.entry, u32::try_from(i).expect("small"));
            return v;
        }
        let mut entry = MaybeUninit::<tpack_entry>::uninit();
        // SAFETY: a filled container; a writable entry.
        assert_eq!(unsafe { tpack_container_entry(c, i, entry.as_mut_ptr()) }, OK);
        // SAFETY: both written on success.
        let (payload, entry) = unsafe { (payload.assume_init(), entry.assume_init()) };
        assert_eq!((payload.data, payload.len), (entry.payload.data, entry.payload.len));
    }
    // SAFETY: a filled handle; a writable error.
    let r = unsafe { tpack_authenticated_verify(&a, crypto, e.as_mut_ptr()) };
    verdict(r, &e)
}

/// Which verifications run: all of them natively. Under Miri (see [`MIRI`]) only those decided before the
/// signature is checked (R58 to R62), and of those the first `per_verdict` of each verdict in manifest order:
/// every verdict still runs on a big-endian host, at a fraction of the cost (each check walks the C boundary
/// and hashes the container).
struct Sample {
    per_verdict: usize,
    taken: std::collections::HashMap<String, usize>,
}

impl Sample {
    fn new(per_verdict: usize) -> Self {
        Self { per_verdict, taken: Default::default() }
    }

    fn take(&mut self, want: &str) -> bool {
        if !MIRI {
            return true;
        }
        if !["R58", "R59", "R60", "R61", "R62"].contains(&want) {
            return false;
        }
        let n = self.taken.entry(want.to_owned()).or_default();
        *n += 1;
        *n <= self.per_verdict
    }
}

unsafe extern "C" fn says_yes(
    _: *mut c_void,
    _: u64,
    _: *const u8,
    _: usize,
    _: *const u8,
    _: *const u8,
    _: usize,
) -> i32 {
    1
}

/// The crypto a call that must succeed passes: the built-in one (NULL), or under Miri a verifier that says yes.
struct BuiltIn(Option<tpack_crypto>);

impl BuiltIn {
    fn ptr(&self) -> *const tpack_crypto {
        self.0.as_ref().map_or(std::ptr::null(), std::ptr::from_ref)
    }
}

fn built_in() -> BuiltIn {
    BuiltIn(MIRI.then_some(tpack_crypto {
        user: std::ptr::null_mut(),
        sha256_begin: None,
        sha256_update: None,
        sha256_finish: None,
        verify: Some(says_yes),
        verify_algorithms: 0b110,
    }))
}

fn signed_vectors() -> impl Iterator<Item = &'static Value> {
    manifest().iter().filter(|v| v.get("verifications").is_some())
}

#[test]
fn every_verification_of_the_manifest_gives_its_verdict_whole_and_entry_by_entry() {
    let mut checked = 0;
    let mut sample = Sample::new(2);
    let mut verdicts = std::collections::BTreeSet::new();
    for v in signed_vectors() {
        let file = v["file"].as_str().expect("file");
        let bytes = read(file);
        let c = parse(&bytes);
        for check in v["verifications"].as_array().expect("verifications") {
            let spec = PolicySpec::of(check);
            let keys = spec.keys();
            let policy = spec.policy(&keys);
            let want = check["verdict"].as_str().expect("verdict");
            if !sample.take(want) {
                continue;
            }
            assert_eq!(whole(&c, &policy, std::ptr::null()), want, "{file}: {check}");
            assert_eq!(lazy(&c, &policy, std::ptr::null()), want, "{file} (entry by entry): {check}");
            verdicts.insert(want.to_owned());
            checked += 1;
        }
    }
    assert!(checked >= if MIRI { 5 } else { 30 }, "only {checked} verifications");
    let all: Vec<&str> = if MIRI {
        ["R58", "R59", "R60", "R61", "R62"].into()
    } else {
        ["R58", "R59", "R60", "R61", "R62", "R63", "R64", "ok"].into()
    };
    assert_eq!(verdicts.iter().map(String::as_str).collect::<Vec<_>>(), all, "verdicts the manifest covers");
}

/// The manifest's `signature` object from the C API: attributes, and the message.
fn signature_json(c: &tpack_container) -> Option<Value> {
    let mut s = MaybeUninit::<tpack_signed_attributes>::uninit();
    // SAFETY: a filled container; writable output.
    let r = unsafe { tpack_container_signed_attributes(c, s.as_mut_ptr()) };
    if r == tpack_result::TPACK_RESULT_NOT_SIGNED {
        let mut message = [0x77u8; 80];
        // SAFETY: as above; 80 writable bytes.
        let r = unsafe { tpack_container_signed_message(c, std::ptr::null(), message.as_mut_ptr()) };
        assert_eq!(r, tpack_result::TPACK_RESULT_NOT_SIGNED);
        assert_eq!(message, [0x77; 80], "untouched when unsigned");
        return None;
    }
    assert_eq!(r, OK);
    // SAFETY: written on success.
    let s = unsafe { s.assume_init() };
    let mut message = [0u8; 80];
    // SAFETY: as above.
    assert_eq!(unsafe { tpack_container_signed_message(c, std::ptr::null(), message.as_mut_ptr()) }, OK);
    let digests = bytes_of(s.digests).expect("digests");
    let signature = bytes_of(s.signature).expect("signature");
    let mut count = 0usize;
    // SAFETY: a filled container.
    assert_eq!(unsafe { tpack_container_entry_count(c, &mut count) }, OK);
    assert_eq!(digests.len(), 32 * (count - 1));
    assert_eq!(signature.len(), 64);
    // Absent: empty (a key never is), and never NULL.
    assert!(!s.public_key.data.is_null());
    let public_key = bytes_of(s.public_key).filter(|k| !k.is_empty()).map(hex);
    Some(serde_json::json!({
        "algorithm": s.algorithm,
        "counter": s.counter,
        "key": hex(&s.key_id),
        "message": hex(&message),
        "public_key": public_key,
        "subject": str_of(s.subject),
    }))
}

/// Walks `c` and its nested containers, comparing each signature object with `want` (the decoding).
fn check_signatures(c: &tpack_container, want: &Value, file: &str) -> usize {
    let got = signature_json(c);
    assert_eq!(got.as_ref(), want.get("signature"), "{file}");
    let mut seen = usize::from(got.is_some());
    for (i, entry) in want["entries"].as_array().expect("entries").iter().enumerate() {
        if let Some(inner) = entry.get("container") {
            let mut nested = MaybeUninit::<tpack_container>::uninit();
            // SAFETY: a filled container; writable storage.
            assert_eq!(unsafe { tpack_container_nested(c, i, nested.as_mut_ptr()) }, OK);
            // SAFETY: filled by the successful call.
            seen += check_signatures(&unsafe { nested.assume_init() }, inner, file);
        }
    }
    seen
}

#[test]
fn signed_attributes_and_message_are_the_manifest_decodings_signature() {
    let mut signed = 0;
    // Under Miri, every 4th valid vector (SHA-256 of each prefix is slow there too).
    for v in manifest().iter().filter(|v| v["valid"] == true).step_by(if MIRI { MIRI_STEP_VALID } else { 1 })
    {
        let file = v["file"].as_str().expect("file");
        let bytes = read(file);
        signed += check_signatures(&parse(&bytes), &v["decoding"], file);
    }
    assert!(signed >= if MIRI { 3 } else { 15 }, "only {signed} signed containers");
}

#[test]
fn the_signer_of_an_authenticated_container_is_its_signed_attributes() {
    let v = signed_vectors().find(|v| v["file"] == "valid/signed-with-pubkey.tpack").expect("vector");
    let bytes = read(v["file"].as_str().expect("file"));
    let c = parse(&bytes);
    let spec = PolicySpec::of(&v["verifications"][0]);
    let keys = spec.keys();
    let policy = spec.policy(&keys);
    let crypto = built_in();
    let mut a = MaybeUninit::<tpack_authenticated>::uninit();
    // SAFETY: as in `lazy`.
    assert_eq!(
        unsafe {
            tpack_container_authenticate(&c, &policy, crypto.ptr(), a.as_mut_ptr(), std::ptr::null_mut())
        },
        OK
    );
    // SAFETY: filled by the successful call.
    let a = unsafe { a.assume_init() };
    let (mut signer, mut claims) =
        (MaybeUninit::<tpack_signed_attributes>::uninit(), MaybeUninit::<tpack_signed_attributes>::uninit());
    // SAFETY: filled handles; writable outputs.
    unsafe {
        assert_eq!(tpack_authenticated_signer(&a, signer.as_mut_ptr()), OK);
        assert_eq!(tpack_container_signed_attributes(&c, claims.as_mut_ptr()), OK);
    }
    // SAFETY: written on success.
    let (signer, claims) = unsafe { (signer.assume_init(), claims.assume_init()) };
    assert_eq!(format!("{signer:?}"), format!("{claims:?}"));
    assert_eq!(bytes_of(signer.public_key).map(<[u8]>::len), Some(32));

    // An unsigned container the policy allows: authenticated, without a signer.
    let bytes = read("valid/example.tpack");
    let c = parse(&bytes);
    let allow = tpack_policy { require_signature: false, ..policy };
    let mut a = MaybeUninit::<tpack_authenticated>::uninit();
    // SAFETY: as above.
    assert_eq!(
        unsafe {
            tpack_container_authenticate(&c, &allow, std::ptr::null(), a.as_mut_ptr(), std::ptr::null_mut())
        },
        OK
    );
    // SAFETY: filled by the successful call.
    let a = unsafe { a.assume_init() };
    let mut out = MaybeUninit::<tpack_signed_attributes>::uninit();
    // SAFETY: as above.
    assert_eq!(
        unsafe { tpack_authenticated_signer(&a, out.as_mut_ptr()) },
        tpack_result::TPACK_RESULT_NOT_SIGNED
    );
}

#[test]
fn key_ids_are_those_of_the_manifest() {
    let mut seen = 0;
    for v in signed_vectors() {
        for check in v["verifications"].as_array().expect("verifications") {
            for k in check["keys"].as_array().expect("keys") {
                let (Some(public), Some(algorithm)) = (k["public_key"].as_str(), k["algorithm"].as_u64())
                else {
                    continue;
                };
                let public = unhex(public);
                let mut id = [0u8; 32];
                // SAFETY: readable key, 32 writable bytes.
                let r = unsafe {
                    tpack_key_id(algorithm, public.as_ptr(), public.len(), std::ptr::null(), id.as_mut_ptr())
                };
                let matches =
                    public.len() == Algorithm::from_code(algorithm).map_or(0, Algorithm::public_key_len);
                if matches {
                    assert_eq!(r, OK);
                    // The manifest pairs a key with another algorithm's id on purpose (R60); only true pairs.
                    if k["key_id"].as_str() == Some(&hex(&id)) {
                        seen += 1;
                    }
                } else {
                    assert_eq!(r, tpack_result::TPACK_RESULT_BAD_ARGUMENT);
                }
            }
        }
    }
    assert!(seen >= if MIRI { 2 } else { 20 }, "{seen} key ids checked");
}

/// A caller's crypto for the tests: SHA-256 and signatures from the core's software, through callbacks that
/// count what they are asked and can lie.
#[derive(Default)]
struct Engine {
    hasher: Option<tpack::auth::Sha256Software>,
    begins: usize,
    open: bool,
    updated: usize,
    verifies: usize,
    /// What `verify` answers instead of the truth.
    answer: Option<i32>,
}

thread_local! {
    static ENGINE: RefCell<Engine> = RefCell::new(Engine::default());
}

fn engine<T>(f: impl FnOnce(&mut Engine) -> T) -> T {
    ENGINE.with(|e| f(&mut e.borrow_mut()))
}

unsafe extern "C" fn begin(user: *mut c_void) {
    assert_eq!(user as usize, 0x5eed);
    engine(|e| {
        assert!(!e.open, "two hashes at once");
        e.open = true;
        e.begins += 1;
        e.hasher = Some(SoftwareCrypto.hasher());
    });
}

unsafe extern "C" fn update(_: *mut c_void, data: *const u8, len: usize) {
    assert!(!data.is_null());
    // SAFETY: the API's contract: `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(data, len) };
    engine(|e| {
        assert!(e.open);
        e.updated += len;
        e.hasher.as_mut().expect("begun").update(bytes);
    });
}

unsafe extern "C" fn finish(_: *mut c_void, out: *mut u8) {
    let digest = engine(|e| {
        assert!(e.open);
        e.open = false;
        e.hasher.take().expect("begun").finish()
    });
    // SAFETY: the API's contract: 32 writable bytes.
    unsafe { std::ptr::copy_nonoverlapping(digest.as_ptr(), out, 32) };
}

unsafe extern "C" fn verify(
    _: *mut c_void,
    algorithm: u64,
    public_key: *const u8,
    public_key_len: usize,
    message: *const u8,
    signature: *const u8,
    signature_len: usize,
) -> i32 {
    // SAFETY: the API's contract: readable buffers of those lengths (the message is 80 bytes).
    let (key, message, signature) = unsafe {
        (
            std::slice::from_raw_parts(public_key, public_key_len),
            &*message.cast::<[u8; 80]>(),
            std::slice::from_raw_parts(signature, signature_len),
        )
    };
    let answer = engine(|e| {
        e.verifies += 1;
        e.answer
    });
    answer.unwrap_or_else(|| {
        i32::from(SoftwareCrypto.verify(
            Algorithm::from_code(algorithm).expect("known"),
            key,
            message,
            signature,
        ))
    })
}

fn callbacks(algorithms: u32) -> tpack_crypto {
    tpack_crypto {
        user: 0x5eed as *mut c_void,
        sha256_begin: Some(begin),
        sha256_update: Some(update),
        sha256_finish: Some(finish),
        verify: Some(verify),
        verify_algorithms: algorithms,
    }
}

#[test]
fn a_callers_crypto_gives_the_built_in_verdicts_and_is_what_decides() {
    let both = (1 << TPACK_ALGORITHM_ED25519) | (1 << TPACK_ALGORITHM_P256);
    let crypto = callbacks(u32::try_from(both).expect("small"));
    let mut checked = 0;
    let mut sample = Sample::new(1);
    for v in signed_vectors() {
        let file = v["file"].as_str().expect("file");
        let bytes = read(file);
        let c = parse(&bytes);
        for check in v["verifications"].as_array().expect("verifications") {
            let spec = PolicySpec::of(check);
            let keys = spec.keys();
            let policy = spec.policy(&keys);
            let want = check["verdict"].as_str().expect("verdict");
            if !sample.take(want) {
                continue;
            }
            assert_eq!(whole(&c, &policy, &crypto), want, "{file}: {check}");
            assert_eq!(lazy(&c, &policy, &crypto), want, "{file}: {check}");
            checked += 1;
        }
    }
    assert!(checked >= if MIRI { 5 } else { 30 });
    let (begins, updated, verifies) = engine(|e| (e.begins, e.updated, e.verifies));
    if !MIRI {
        assert!(begins > 100 && updated > 1000 && verifies > 20, "{begins} {updated} {verifies}");
    }

    // The callbacks decide: a verifier that says no is R63; one that says yes to a forged key id is believed.
    let v = signed_vectors().find(|v| v["file"] == "valid/signed-ed25519.tpack").expect("vector");
    let bytes = read("valid/signed-ed25519.tpack");
    let c = parse(&bytes);
    let spec = PolicySpec::of(&v["verifications"][0]);
    let keys = spec.keys();
    let policy = spec.policy(&keys);
    engine(|e| e.answer = Some(0));
    assert_eq!(whole(&c, &policy, &crypto), "R63");
    engine(|e| e.answer = Some(2));
    assert_eq!(whole(&c, &policy, &crypto), "R63", "only 1 is valid");
    let forged = read("valid/signed-forged-key-id.tpack");
    engine(|e| e.answer = Some(1));
    assert_eq!(whole(&parse(&forged), &policy, &crypto), "ok", "the caller's verifier is trusted");
    engine(|e| e.answer = None);
    // Without Ed25519 in `verify_algorithms`: R60.
    let p256_only = callbacks(1 << 2);
    assert_eq!(whole(&c, &policy, &p256_only), "R60");
    if MIRI {
        return; // the rest verifies Ed25519 signatures with the built-in verifier
    }
    // A hash engine only (`verify` NULL): the built-in verifiers, with the engine's hashes.
    let hash_only = tpack_crypto { verify: None, verify_algorithms: 0, ..crypto };
    let before = engine(|e| e.begins);
    assert_eq!(whole(&c, &policy, &hash_only), "ok");
    assert!(engine(|e| e.begins) > before);
    let tampered = read("valid/signed-tampered-payload.tpack");
    assert_eq!(whole(&parse(&tampered), &policy, &hash_only), "R64");
}

#[test]
fn the_builtin_algorithms_are_the_features() {
    let mask = tpack_builtin_algorithms();
    assert_eq!(mask & (1 << 1) != 0, cfg!(feature = "ed25519"));
    assert_eq!(mask & (1 << 2) != 0, cfg!(feature = "p256"));
    assert_eq!(mask & !0b110, 0);
}

#[test]
fn arguments_are_checked_and_outputs_untouched_on_failure() {
    let v = signed_vectors().find(|v| v["file"] == "valid/signed-ed25519.tpack").expect("vector");
    let bytes = read("valid/signed-ed25519.tpack");
    let c = parse(&bytes);
    let spec = PolicySpec::of(&v["verifications"][0]);
    let keys = spec.keys();
    let policy = spec.policy(&keys);
    let null = std::ptr::null_mut::<tpack_error>();
    // SAFETY: all-zero bits are valid for these plain C types (integers and NULL pointers).
    let zeroed: tpack_container = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let zeroed_auth: tpack_authenticated = unsafe { std::mem::zeroed() };

    // Each call with one bad argument, the output prefilled: the code, and the output untouched.
    let mut attrs = MaybeUninit::<tpack_signed_attributes>::new(
        // SAFETY: as above.
        unsafe { std::mem::zeroed() },
    );
    let sentinel = |a: &MaybeUninit<tpack_signed_attributes>| {
        // SAFETY: initialized above, and only ever written whole by the API.
        let a = unsafe { a.assume_init_ref() };
        a.counter == 0 && a.algorithm == 0 && a.key_id == [0; 32]
    };
    // SAFETY: each pointer is valid but for the one under test.
    unsafe {
        assert_eq!(
            tpack_container_signed_attributes(std::ptr::null(), attrs.as_mut_ptr()),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
        assert_eq!(
            tpack_container_signed_attributes(&c, std::ptr::null_mut()),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
        assert_eq!(
            tpack_container_signed_attributes(&zeroed, attrs.as_mut_ptr()),
            tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE
        );
    }
    assert!(sentinel(&attrs));
    let unsigned_bytes = read("valid/example.tpack");
    let unsigned = parse(&unsigned_bytes);
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { tpack_container_signed_attributes(&unsigned, attrs.as_mut_ptr()) },
        tpack_result::TPACK_RESULT_NOT_SIGNED
    );
    assert!(sentinel(&attrs));

    let mut message = [0x77u8; 80];
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            tpack_container_signed_message(std::ptr::null(), std::ptr::null(), message.as_mut_ptr()),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
        assert_eq!(
            tpack_container_signed_message(&c, std::ptr::null(), std::ptr::null_mut()),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
    }
    // Only some SHA-256 callbacks: refused, whatever the call.
    let partial = tpack_crypto { sha256_finish: None, ..callbacks(0) };
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            tpack_container_signed_message(&c, &partial, message.as_mut_ptr()),
            tpack_result::TPACK_RESULT_BAD_ARGUMENT
        );
    }
    assert_eq!(message, [0x77; 80]);

    let mut auth = MaybeUninit::<tpack_authenticated>::uninit();
    let mut e = MaybeUninit::<tpack_error>::uninit();
    let authenticate = |c: *const tpack_container, p: *const tpack_policy, crypto: *const tpack_crypto| {
        let mut raw = [0x5au64; TPACK_AUTHENTICATED_SIZE / 8];
        let mut e = MaybeUninit::<tpack_error>::uninit();
        // SAFETY: valid pointers but for the one under test; `raw` is writable authenticated storage.
        let r =
            unsafe { tpack_container_authenticate(c, p, crypto, raw.as_mut_ptr().cast(), e.as_mut_ptr()) };
        if r != OK {
            assert!(raw.iter().all(|&w| w == 0x5a), "storage written on failure");
            // SAFETY: written on failure.
            assert_eq!(unsafe { e.assume_init() }.result, tpack_capi_code(r));
        }
        r
    };
    assert_eq!(
        authenticate(std::ptr::null(), &policy, std::ptr::null()),
        tpack_result::TPACK_RESULT_NULL_ARGUMENT
    );
    assert_eq!(
        authenticate(&c, std::ptr::null(), std::ptr::null()),
        tpack_result::TPACK_RESULT_NULL_ARGUMENT
    );
    assert_eq!(
        authenticate(&zeroed, &policy, std::ptr::null()),
        tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE
    );
    assert_eq!(authenticate(&c, &policy, &partial), tpack_result::TPACK_RESULT_BAD_ARGUMENT);
    let trusted = built_in();
    assert_eq!(authenticate(&c, &policy, trusted.ptr()), OK);
    // SAFETY: NULL storage is what is checked.
    assert_eq!(
        unsafe { tpack_container_authenticate(&c, &policy, std::ptr::null(), std::ptr::null_mut(), null) },
        tpack_result::TPACK_RESULT_NULL_ARGUMENT
    );
    // Keys: NULL with a count, an unknown algorithm, a public key of the wrong length, a subject not UTF-8.
    let bad = |k: tpack_trusted_key| {
        let keys = [keys[0], k];
        authenticate(&c, &spec.policy(&keys), trusted.ptr())
    };
    let no_keys = tpack_policy { keys: std::ptr::null(), key_count: 1, ..policy };
    assert_eq!(authenticate(&c, &no_keys, std::ptr::null()), tpack_result::TPACK_RESULT_NULL_ARGUMENT);
    assert_eq!(bad(tpack_trusted_key { algorithm: 3, ..keys[0] }), tpack_result::TPACK_RESULT_BAD_ARGUMENT);
    assert_eq!(
        bad(tpack_trusted_key { algorithm: u64::MAX, ..keys[0] }),
        tpack_result::TPACK_RESULT_BAD_ARGUMENT
    );
    // A public key of the wrong length is no argument error: it verifies nothing.
    let short = [tpack_trusted_key { public_key_len: 31, ..keys[0] }];
    if !MIRI {
        assert_eq!(whole(&c, &spec.policy(&short), std::ptr::null()), "R63");
    }
    let latin1 = [0xe9u8];
    assert_eq!(
        bad(tpack_trusted_key { subject: latin1.as_ptr().cast(), subject_len: 1, ..keys[0] }),
        tpack_result::TPACK_RESULT_BAD_ARGUMENT
    );
    let bad_subject = tpack_policy { subject: latin1.as_ptr().cast(), subject_len: 1, ..policy };
    assert_eq!(authenticate(&c, &bad_subject, std::ptr::null()), tpack_result::TPACK_RESULT_BAD_ARGUMENT);
    // A key id only (public key NULL, length ignored) is an argument like any other: R59 here.
    assert_eq!(
        bad(tpack_trusted_key { public_key: std::ptr::null(), public_key_len: 99, ..keys[0] }),
        OK,
        "the first key matches"
    );

    // The handle: zeroed storage, a NULL payload output, an index past the end.
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe {
            tpack_container_authenticate(&c, &policy, trusted.ptr(), auth.as_mut_ptr(), e.as_mut_ptr())
        },
        OK
    );
    // SAFETY: filled by the successful call.
    let auth = unsafe { auth.assume_init() };
    let mut payload = tpack_bytes { data: std::ptr::null(), len: 12345 };
    let mut count = 0usize;
    // SAFETY: valid pointers but for the one under test.
    unsafe {
        assert_eq!(tpack_container_entry_count(&c, &mut count), OK);
        assert_eq!(
            tpack_authenticated_verify_entry(&zeroed_auth, std::ptr::null(), 0, &mut payload, null),
            tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE
        );
        assert_eq!(
            tpack_authenticated_verify_entry(&auth, std::ptr::null(), 0, std::ptr::null_mut(), null),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
        assert_eq!(
            tpack_authenticated_verify_entry(&auth, std::ptr::null(), count, &mut payload, null),
            tpack_result::TPACK_RESULT_NOT_FOUND
        );
        assert_eq!(
            tpack_authenticated_verify_entry(&auth, std::ptr::null(), usize::MAX, &mut payload, null),
            tpack_result::TPACK_RESULT_NOT_FOUND
        );
        assert_eq!(
            tpack_authenticated_verify_entry(&auth, &partial, 0, &mut payload, null),
            tpack_result::TPACK_RESULT_BAD_ARGUMENT
        );
        assert_eq!((payload.data, payload.len), (std::ptr::null(), 12345));
        assert_eq!(
            tpack_authenticated_verify(std::ptr::null(), std::ptr::null(), null),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
        assert_eq!(
            tpack_authenticated_verify(&zeroed_auth, std::ptr::null(), null),
            tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE
        );
        assert_eq!(
            tpack_authenticated_signer(&auth, std::ptr::null_mut()),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
        assert_eq!(tpack_authenticated_verify(&auth, std::ptr::null(), null), OK);
        // A container handle is not an authenticated one.
        assert_eq!(
            tpack_authenticated_verify(std::ptr::from_ref(&c).cast(), std::ptr::null(), null),
            tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE
        );
        assert_eq!(
            tpack_container_verify_authentic(&c, std::ptr::null(), std::ptr::null(), null),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
    }

    // tpack_key_id: an unknown algorithm, a wrong length, NULLs.
    let key = spec.public_keys[0].clone().expect("public key");
    let mut id = [0x11u8; 32];
    // SAFETY: valid pointers but for the one under test.
    unsafe {
        assert_eq!(
            tpack_key_id(9, key.as_ptr(), key.len(), std::ptr::null(), id.as_mut_ptr()),
            tpack_result::TPACK_RESULT_BAD_ARGUMENT
        );
        assert_eq!(
            tpack_key_id(1, key.as_ptr(), 31, std::ptr::null(), id.as_mut_ptr()),
            tpack_result::TPACK_RESULT_BAD_ARGUMENT
        );
        assert_eq!(
            tpack_key_id(1, std::ptr::null(), 32, std::ptr::null(), id.as_mut_ptr()),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
        assert_eq!(
            tpack_key_id(1, key.as_ptr(), key.len(), std::ptr::null(), std::ptr::null_mut()),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
    }
    assert_eq!(id, [0x11; 32]);

    // The result code's message, and the rule names of R54..R64.
    // SAFETY: a static NUL-terminated message.
    let m = unsafe { CStr::from_ptr(tpack_result_message(16)) };
    assert_eq!(m.to_str(), Ok("the container is not signed"));
    for (n, name) in (54..=64).zip([
        "SignedFlag",
        "SignatureEntry",
        "SignatureMeta",
        "SignatureLength",
        "SignatureRequired",
        "UnknownKey",
        "AlgorithmMismatch",
        "SubjectMismatch",
        "Rollback",
        "BadSignature",
        "EntryDigest",
    ]) {
        assert_eq!(rule_id(n), format!("R{n}"));
        // SAFETY: a static NUL-terminated name.
        assert_eq!(unsafe { CStr::from_ptr(tpack_rule_name(n)) }.to_str(), Ok(name));
    }
}

/// The code of `r`, as `tpack_error.result` holds it.
fn tpack_capi_code(r: tpack_result) -> u32 {
    r as u32
}

/// What a signed decoder made of a stream: the verdict, and what it released.
#[derive(Debug, Default)]
struct Streamed {
    verdict: String,
    prefix_events: usize,
    payload_events: usize,
    /// Bytes consumed when `tpack_signed_decoder_is_doomed` first said yes (checked after every call).
    doomed_at: Option<usize>,
    signer: Option<tpack_signer>,
}

/// Feeds `bytes` to a signed decoder with `policy` in `chunk`-byte chunks.
fn stream(bytes: &[u8], policy: &tpack_policy, crypto: *const tpack_crypto, chunk: usize) -> Streamed {
    let mut buffer = vec![0u8; 1 << 16];
    let mut digests = vec![0u8; 32 * 64];
    let mut d = Box::new(MaybeUninit::<tpack_signed_decoder>::uninit());
    // One raw pointer for the decoder's whole life: it refers to itself (its policy borrows the keys stored
    // beside it), and a fresh `&mut` to the storage for each call (`as_mut_ptr`) would invalidate that
    // borrow under Stacked Borrows. A C caller has only the pointer.
    let dp: *mut tpack_signed_decoder = d.as_mut_ptr();
    // SAFETY: writable storage and buffers that outlive the decoder; a policy whose keys outlive it.
    let r = unsafe {
        tpack_signed_decoder_init(
            dp,
            buffer.as_mut_ptr(),
            buffer.len(),
            digests.as_mut_ptr(),
            digests.len(),
            policy,
            crypto,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, OK);
    let mut out = Streamed::default();
    let mut consumed = 0usize;
    for piece in bytes.chunks(chunk) {
        let mut rest = piece;
        loop {
            let (mut used, mut event) = (0usize, MaybeUninit::<tpack_event>::uninit());
            let mut e = MaybeUninit::<tpack_error>::uninit();
            // SAFETY: a filled decoder used by this thread only; readable chunk; writable outputs.
            let r = unsafe {
                tpack_signed_decoder_decode(
                    dp,
                    rest.as_ptr(),
                    rest.len(),
                    &mut used,
                    event.as_mut_ptr(),
                    e.as_mut_ptr(),
                )
            };
            if r != OK {
                out.verdict = verdict(r, &e);
                return out;
            }
            // SAFETY: written on success.
            let event = unsafe { event.assume_init() };
            consumed += used;
            rest = &rest[used..];
            let mut doomed = false;
            // SAFETY: a filled decoder; a writable bool.
            assert_eq!(unsafe { tpack_signed_decoder_is_doomed(dp.cast_const(), &mut doomed) }, OK);
            if doomed && out.doomed_at.is_none() {
                out.doomed_at = Some(consumed);
            }
            match event.kind {
                tpack_event_kind::TPACK_EVENT_NONE => break,
                tpack_event_kind::TPACK_EVENT_PREFIX => out.prefix_events += 1,
                tpack_event_kind::TPACK_EVENT_PAYLOAD => out.payload_events += 1,
                _ => {}
            }
        }
    }
    let mut position = 0u64;
    // SAFETY: a filled decoder; a writable position.
    assert_eq!(unsafe { tpack_signed_decoder_position(dp.cast_const(), &mut position) }, OK);
    assert_eq!(position, bytes.len() as u64);
    let mut signer = MaybeUninit::<tpack_signer>::uninit();
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: a filled decoder; writable outputs.
    let r = unsafe { tpack_signed_decoder_finish(dp, signer.as_mut_ptr(), e.as_mut_ptr()) };
    out.verdict = verdict(r, &e);
    if r == OK {
        // SAFETY: written on success.
        out.signer = Some(unsafe { signer.assume_init() });
    }
    out
}

/// The first payload byte's offset in `bytes` (a valid container).
fn first_payload(bytes: &[u8]) -> usize {
    let c = parse(bytes);
    let mut entry = MaybeUninit::<tpack_entry>::uninit();
    // SAFETY: a filled container; a writable entry.
    assert_eq!(unsafe { tpack_container_entry(&c, 0, entry.as_mut_ptr()) }, OK);
    // SAFETY: written on success.
    usize::try_from(unsafe { entry.assume_init() }.offset).expect("small")
}

#[test]
fn the_signed_decoder_gives_every_verdict_and_releases_nothing_after_a_refused_prefix() {
    let mut refused_early = 0;
    let mut sample = Sample::new(1);
    for v in signed_vectors() {
        let file = v["file"].as_str().expect("file");
        let bytes = read(file);
        for check in v["verifications"].as_array().expect("verifications") {
            let spec = PolicySpec::of(check);
            let keys = spec.keys();
            let policy = spec.policy(&keys);
            let want = check["verdict"].as_str().expect("verdict");
            if !sample.take(want) {
                continue;
            }
            for chunk in [13, 4096] {
                let got = stream(&bytes, &policy, std::ptr::null(), chunk);
                assert_eq!(got.verdict, want, "{file} in {chunk}-byte chunks: {check}");
                if ["R58", "R59", "R60", "R61", "R62"].contains(&want) {
                    // Refused from the prefix: not one event, doomed before the first payload byte.
                    assert_eq!((got.prefix_events, got.payload_events), (0, 0), "{file}: {check}");
                    // In small chunks, doomed within a chunk of the first payload byte (the refusal swallows
                    // the rest of the call's input, so a large chunk says nothing finer).
                    let bound = if chunk == 13 { first_payload(&bytes) + chunk } else { bytes.len() };
                    assert!(
                        got.doomed_at.is_some_and(|at| at <= bound),
                        "{file}: doomed at {:?}",
                        got.doomed_at
                    );
                    refused_early += 1;
                } else {
                    assert_eq!(got.prefix_events, 1, "{file}");
                    assert!(got.payload_events > 0, "{file}");
                }
                if want == "ok" {
                    let signer = got.signer.expect("signer");
                    let c = parse(&bytes);
                    let mut claims = MaybeUninit::<tpack_signed_attributes>::uninit();
                    // SAFETY: a filled container; a writable output.
                    let signed = unsafe { tpack_container_signed_attributes(&c, claims.as_mut_ptr()) } == OK;
                    assert_eq!(signer.is_signed, signed, "{file}");
                    if signed {
                        // SAFETY: written on success.
                        let claims = unsafe { claims.assume_init() };
                        assert_eq!(
                            (signer.algorithm, signer.counter, signer.key_id),
                            (claims.algorithm, claims.counter, claims.key_id)
                        );
                    }
                }
            }
        }
    }
    assert!(refused_early >= if MIRI { 2 * 5 } else { 2 * 15 }, "{refused_early}");
}

#[test]
fn the_signed_decoder_agrees_with_the_reader_on_every_vector_when_signatures_are_optional() {
    let open = tpack_policy {
        keys: std::ptr::null(),
        key_count: 0,
        require_signature: false,
        min_counter: 0,
        subject: std::ptr::null(),
        subject_len: 0,
    };
    // Under Miri every 16th vector, as `tests/vectors.rs` samples them.
    for v in manifest().iter().step_by(if MIRI { MIRI_STEP_ALL } else { 1 }) {
        let file = v["file"].as_str().expect("file");
        let bytes = read(file);
        let got = stream(&bytes, &open, std::ptr::null(), 13);
        // The reader: parse, then the authenticated verification with the same policy.
        let mut c = MaybeUninit::<tpack_container>::uninit();
        let mut e = MaybeUninit::<tpack_error>::uninit();
        // SAFETY: readable bytes; writable outputs.
        let r = unsafe { tpack_container_parse(bytes.as_ptr(), bytes.len(), c.as_mut_ptr(), e.as_mut_ptr()) };
        let want = if r == OK {
            // SAFETY: filled by the successful call.
            whole(&unsafe { c.assume_init() }, &open, std::ptr::null())
        } else {
            verdict(r, &e)
        };
        assert_eq!(got.verdict, want, "{file}");
        // A signed container with no key trusted is R59 (and not released); an unsigned one is just verified.
        if v["valid"] == true && v["decoding"].get("signature").is_none() {
            assert_eq!(got.verdict, "ok", "{file}");
            assert!(!got.signer.expect("signer").is_signed);
        }
    }
}

#[test]
fn the_signed_decoder_shows_the_prefix_and_its_claims_and_checks_its_arguments() {
    let v = signed_vectors().find(|v| v["file"] == "valid/signed-ed25519.tpack").expect("vector");
    let bytes = read("valid/signed-ed25519.tpack");
    let spec = PolicySpec::of(&v["verifications"][1]); // min_counter 8: R62
    let keys = spec.keys();
    let policy = spec.policy(&keys);
    let mut buffer = vec![0u8; 1 << 16];
    let mut digests = vec![0u8; 32 * 8];
    let mut d = Box::new(MaybeUninit::<tpack_signed_decoder>::uninit());
    // One raw pointer for the decoder's whole life: it refers to itself (its policy borrows the keys stored
    // beside it), and a fresh `&mut` to the storage for each call (`as_mut_ptr`) would invalidate that
    // borrow under Stacked Borrows. A C caller has only the pointer.
    let dp: *mut tpack_signed_decoder = d.as_mut_ptr();
    let init =
        |d: *mut tpack_signed_decoder, policy: *const tpack_policy, digests: &mut [u8], buffer: &mut [u8]| {
            // SAFETY: valid pointers but for the one under test.
            unsafe {
                tpack_signed_decoder_init(
                    d,
                    buffer.as_mut_ptr(),
                    buffer.len(),
                    digests.as_mut_ptr(),
                    digests.len(),
                    policy,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                )
            }
        };
    // Argument checks: NULL storage, NULL policy, too many keys, a short buffer, zeroed storage.
    assert_eq!(
        init(std::ptr::null_mut(), &policy, &mut digests, &mut buffer),
        tpack_result::TPACK_RESULT_NULL_ARGUMENT
    );
    assert_eq!(
        init(dp, std::ptr::null(), &mut digests, &mut buffer),
        tpack_result::TPACK_RESULT_NULL_ARGUMENT
    );
    let many = vec![keys[0]; TPACK_SIGNED_DECODER_MAX_KEYS + 1];
    assert_eq!(
        init(dp, &spec.policy(&many), &mut digests, &mut buffer),
        tpack_result::TPACK_RESULT_SHORT_STORAGE
    );
    let max = vec![keys[0]; TPACK_SIGNED_DECODER_MAX_KEYS];
    assert_eq!(
        init(dp, &spec.policy(&max), &mut digests, &mut buffer[..159]),
        tpack_result::TPACK_RESULT_SHORT_STORAGE
    );
    let bad_key = [tpack_trusted_key { algorithm: 7, ..keys[0] }];
    assert_eq!(
        init(dp, &spec.policy(&bad_key), &mut digests, &mut buffer),
        tpack_result::TPACK_RESULT_BAD_ARGUMENT
    );
    // SAFETY: all-zero bits are valid for this plain C type.
    let zeroed: tpack_signed_decoder = unsafe { std::mem::zeroed() };
    let mut doomed = false;
    // SAFETY: valid pointers but for the one under test.
    unsafe {
        assert_eq!(
            tpack_signed_decoder_is_doomed(&zeroed, &mut doomed),
            tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE
        );
        assert_eq!(
            tpack_signed_decoder_is_doomed(std::ptr::null(), &mut doomed),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
        assert_eq!(
            tpack_signed_decoder_finish(
                std::ptr::from_ref(&zeroed).cast_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut()
            ),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
        // A plain decoder is not a signed one.
        let mut plain = MaybeUninit::<tpack_decoder>::uninit();
        assert_eq!(
            tpack_decoder_init(plain.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), std::ptr::null_mut()),
            OK
        );
        assert_eq!(
            tpack_signed_decoder_is_doomed(plain.as_ptr().cast(), &mut doomed),
            tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE
        );
    }

    // The policy struct itself may go after init (only its keys are kept): build it in a scope.
    {
        let policy = spec.policy(&keys);
        assert_eq!(init(dp, &policy, &mut digests, &mut buffer), OK);
    }
    let mut attrs = MaybeUninit::<tpack_signed_attributes>::uninit();
    // SAFETY: a filled decoder; a writable output.
    assert_eq!(
        unsafe { tpack_signed_decoder_prefix_signed_attributes(dp.cast_const(), attrs.as_mut_ptr()) },
        tpack_result::TPACK_RESULT_NOT_FOUND,
        "no prefix yet"
    );
    // Feed the prefix and a little more: refused (R62) from the prefix, and the prefix still readable.
    let prefix_end = first_payload(&bytes);
    let (mut used, mut event) = (0usize, MaybeUninit::<tpack_event>::uninit());
    // SAFETY: a filled decoder; readable bytes; writable outputs.
    let r = unsafe {
        tpack_signed_decoder_decode(
            dp,
            bytes.as_ptr(),
            prefix_end,
            &mut used,
            event.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, OK);
    assert_eq!(used, prefix_end);
    // SAFETY: written on success.
    assert_eq!(unsafe { event.assume_init() }.kind, tpack_event_kind::TPACK_EVENT_NONE);
    // SAFETY: a filled decoder; writable outputs.
    unsafe {
        assert_eq!(tpack_signed_decoder_is_doomed(dp.cast_const(), &mut doomed), OK);
        assert!(doomed);
        assert_eq!(tpack_signed_decoder_prefix_signed_attributes(dp.cast_const(), attrs.as_mut_ptr()), OK);
        let attrs = attrs.assume_init();
        assert_eq!((attrs.algorithm, attrs.counter), (1, 7));
        // Not arrived: empty, and never NULL.
        assert!(!attrs.digests.data.is_null() && !attrs.signature.data.is_null());
        assert_eq!((attrs.digests.len, attrs.signature.len), (0, 0));
        assert_eq!(str_of(attrs.subject).as_deref(), Some("tpack.test"));
        let mut count = 0usize;
        assert_eq!(tpack_signed_decoder_prefix_entry_count(dp.cast_const(), &mut count), OK);
        assert_eq!(count, 7);
        let mut entry = MaybeUninit::<tpack_entry>::uninit();
        assert_eq!(
            tpack_signed_decoder_prefix_find(
                dp.cast_const(),
                c"embed.weight".as_ptr(),
                12,
                entry.as_mut_ptr()
            ),
            OK
        );
        assert_eq!(tpack_signed_decoder_prefix_entry(dp.cast_const(), 6, entry.as_mut_ptr()), OK);
        assert_eq!(str_of(entry.assume_init().name).as_deref(), Some("tpack.signature"));
        let mut value = MaybeUninit::<tpack_meta_value>::uninit();
        assert_eq!(
            tpack_signed_decoder_prefix_metadata_get(
                dp.cast_const(),
                c"tpack.sig.counter".as_ptr(),
                17,
                value.as_mut_ptr()
            ),
            OK
        );
        let mut counter = 0u64;
        assert_eq!(tpack_meta_u64(value.as_ptr(), &mut counter), OK);
        assert_eq!(counter, 7);
    }
    // The rest is swallowed; finish names R62 with the counter; a second finish is DECODER_FINISHED.
    let rest = &bytes[prefix_end..];
    // SAFETY: as above.
    let r = unsafe {
        tpack_signed_decoder_decode(
            dp,
            rest.as_ptr(),
            rest.len(),
            &mut used,
            event.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!((r, used), (OK, rest.len()));
    // SAFETY: written on success.
    assert_eq!(unsafe { event.assume_init() }.kind, tpack_event_kind::TPACK_EVENT_NONE);
    let mut signer = tpack_signer { is_signed: true, algorithm: 99, counter: 99, key_id: [9; 32] };
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: a filled decoder; writable outputs.
    let r = unsafe { tpack_signed_decoder_finish(dp, &mut signer, e.as_mut_ptr()) };
    assert_eq!(r, INVALID);
    // SAFETY: written on failure.
    let e = unsafe { e.assume_init() };
    assert_eq!((e.rule, e.value), (62, 7));
    assert_eq!((signer.algorithm, signer.counter), (99, 99), "untouched on failure");

    // Digests too short for the stream's entries: BUFFER_TOO_SMALL with what it needs.
    let accept = PolicySpec::of(&v["verifications"][0]);
    let accept_keys = accept.keys();
    let mut short_digests = vec![0u8; 32 * 5];
    assert_eq!(init(dp, &accept.policy(&accept_keys), &mut short_digests, &mut buffer), OK);
    // SAFETY: as above.
    let r = unsafe {
        tpack_signed_decoder_decode(
            dp,
            bytes.as_ptr(),
            bytes.len(),
            &mut used,
            event.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, OK);
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: as above.
    let r = unsafe { tpack_signed_decoder_finish(dp, &mut signer, e.as_mut_ptr()) };
    assert_eq!(r, tpack_result::TPACK_RESULT_BUFFER_TOO_SMALL);
    // SAFETY: written on failure.
    assert_eq!(unsafe { e.assume_init() }.value, 32 * 6);
}
