//! Spec §14, signed containers: the group *signature* (R54–R57, structural, after *metadata*) and the
//! verification rules (R58–R64), which need a key set and a policy: valid signed containers carry the checks
//! ([`Check`]) a verifier must answer, attacks included.

use tpack::auth::{Algorithm, Sha256, Sha256Software};
use tpack::sign::{sign_container, unsign_container, SignOptions, SigningKey};
use tpack::{Container, Dtype, MetaType, Rule};

use super::super::raw::*;
use super::model::{base, invalid, pattern, valid};
use super::Case;

/// A trusted key of a [`Check`]: `public_key` `None` is a key known by its id only.
#[derive(Clone, Debug)]
pub struct KeySpec {
    pub algorithm: Algorithm,
    pub public_key: Option<Vec<u8>>,
    pub key_id: [u8; 32],
    pub subject: Option<&'static str>,
}

/// A verification of a vector: a key set, a policy, and the verdict (`None`: authentic, or unsigned and
/// allowed).
#[derive(Clone, Debug)]
pub struct Check {
    pub keys: Vec<KeySpec>,
    pub require: bool,
    pub min_counter: u64,
    pub subject: Option<&'static str>,
    pub verdict: Option<Rule>,
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut h = Sha256Software::default();
    h.update(bytes);
    h.finish()
}

/// Test key `n` (Ed25519): its seed is SHA-256 of "tpack test key n". Published test keys, never for real use.
pub fn test_key(n: u32) -> SigningKey {
    SigningKey::from_secret_bytes(Algorithm::Ed25519, &sha256(format!("tpack test key {n}").as_bytes()))
        .unwrap()
}

/// The P-256 test key: its scalar is SHA-256 of "tpack test p256 key 1".
pub fn test_p256_key() -> SigningKey {
    SigningKey::from_secret_bytes(Algorithm::EcdsaP256, &sha256(b"tpack test p256 key 1")).unwrap()
}

pub fn trust(key: &SigningKey) -> KeySpec {
    let public = key.public();
    KeySpec {
        algorithm: public.algorithm(),
        public_key: Some(public.raw().to_vec()),
        key_id: public.key_id(),
        subject: None,
    }
}

fn check(keys: Vec<KeySpec>, min_counter: u64, verdict: Option<Rule>) -> Check {
    Check { keys, require: true, min_counter, subject: None, verdict }
}

fn options(counter: u64, subject: Option<&str>) -> SignOptions {
    SignOptions { counter, subject: subject.map(str::to_owned), embed_public_key: false }
}

/// `bytes` signed by `key`.
pub fn sign(bytes: &[u8], key: &SigningKey, options: &SignOptions) -> Vec<u8> {
    sign_container(bytes, key, options).unwrap()
}

/// The example model signed by test key 1, counter 7, subject `tpack.test`.
pub fn signed_example() -> Vec<u8> {
    sign(&base().encode(), &test_key(1), &options(7, Some("tpack.test")))
}

/// Where entry `entry`'s payload is in `bytes`.
fn payload_range(bytes: &[u8], entry: usize) -> std::ops::Range<usize> {
    let d = descriptor(bytes, entry);
    d.offset.get() as usize..(d.offset.get() + d.length.get()) as usize
}

/// Where the metadata value of `key` is in `bytes`: the inline `value` field, or the pool bytes.
fn meta_value_range(bytes: &[u8], key: &str) -> std::ops::Range<usize> {
    let (meta, _) = section(bytes, 3);
    let m = header(bytes).meta_count.get() as usize;
    let pool = meta + 24 * m;
    for r in 0..m {
        let rec = &bytes[meta + 24 * r..meta + 24 * r + 24];
        let u32_at = |o: usize| u32::from_le_bytes(rec[o..o + 4].try_into().unwrap()) as usize;
        let key_offset = u32_at(0);
        let key_len = u16::from_le_bytes(rec[4..6].try_into().unwrap()) as usize;
        if &bytes[pool + key_offset..pool + key_offset + key_len] == key.as_bytes() {
            let (value_len, value_offset) = (u32_at(8), u32_at(12));
            return if MetaType::from_code(rec[6]).is_inline() {
                meta + 24 * r + 16..meta + 24 * r + 24
            } else {
                pool + value_offset..pool + value_offset + value_len
            };
        }
    }
    panic!("no metadata key {key}")
}

/// The signed example with `edit` applied to its bytes, every checksum recomputed.
fn tampered(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = signed_example();
    edit(&mut bytes);
    fix(&mut bytes);
    bytes
}

/// The example model as a signed file's model: the signed attributes of test key 1 (counter 7) and a
/// signature entry of the right length but zero bytes, then `edit`. For the structural rules, which never
/// look at the signature's bytes.
fn raw_signed(edit: impl FnOnce(&mut Raw)) -> Vec<u8> {
    let mut raw = base();
    let n = raw.entries.len();
    raw.meta.push(RawMeta::inline("tpack.sig.alg", MetaType::U64, 1));
    raw.meta.push(RawMeta::pooled("tpack.sig.key", MetaType::BYTES, TEST_KEY_1_ID.to_vec()));
    raw.meta.push(RawMeta::inline("tpack.sig.counter", MetaType::U64, 7));
    raw.entries.push(
        RawEntry::new("tpack.signature", Dtype::SIGNATURE, &[32 * n as u64 + 64], vec![0; 32 * n + 64])
            .align(8),
    );
    raw = raw.canonical();
    raw.compat = 1;
    edit(&mut raw);
    raw.encode()
}

fn signature_entry(raw: &mut Raw) -> &mut RawEntry {
    raw.entries.iter_mut().find(|e| e.dtype == Dtype::SIGNATURE.code()).unwrap()
}

/// Test key 1's id, written out so that the structural cases need no key derivation (minutes under Miri); a
/// test holds it to the key's.
pub const TEST_KEY_1_ID: [u8; 32] = [
    0x61, 0x87, 0x3f, 0x2b, 0x1b, 0x2e, 0x3a, 0x96, 0x54, 0xe0, 0x2d, 0x67, 0x16, 0xfa, 0xc8, 0x71, 0x4c,
    0xa1, 0x8a, 0xb9, 0x7b, 0x32, 0x75, 0xa6, 0x52, 0xbd, 0x86, 0xfe, 0x27, 0x37, 0xa8, 0x3f,
];

/// The signed valid cases. Under Miri, where one Ed25519 signature takes minutes, they are read from the
/// checked-in vectors and manifest (which the native run proves equal to what `signed_cases` builds), with the
/// checks decided before the signature's own check (R58–R62): the policy and the attributes on a big-endian
/// host, without signature arithmetic. One real Ed25519 verification runs under Miri in the core's unit tests.
pub fn valid_cases() -> Vec<Case> {
    if cfg!(miri) {
        from_vectors()
    } else {
        signed_cases()
    }
}

fn from_vectors() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors");
    let manifest = crate::support::manifest::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    let unhex = |s: &str| {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect::<Vec<u8>>()
    };
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let mut cases = Vec::new();
    // Only the signed vectors are parsed (see support::manifest).
    for vector in crate::support::manifest::vectors(&manifest) {
        let file = vector.file;
        let Some(name) = file.strip_prefix("valid/").and_then(|f| f.strip_suffix(".tpack")) else { continue };
        if !(name.starts_with("signed-") || name == "unsigned-holding-signed") {
            continue;
        }
        let v = vector.parse();
        let checks = v["verifications"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let verdict = match c["verdict"].as_str().unwrap() {
                    "ok" => None,
                    id => Some(*Rule::ALL.iter().find(|r| r.id() == id).unwrap()),
                };
                // Only what the prefix decides: no signature arithmetic.
                let prefix_only = verdict.is_some_and(|r| (58..=62).contains(&r.number()));
                prefix_only.then(|| Check {
                    keys: c["keys"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|k| KeySpec {
                            algorithm: Algorithm::from_code(k["algorithm"].as_u64().unwrap()).unwrap(),
                            public_key: k["public_key"].as_str().map(unhex),
                            key_id: unhex(k["key_id"].as_str().unwrap()).try_into().unwrap(),
                            subject: k["subject"].as_str().map(leak),
                        })
                        .collect(),
                    require: c["policy"]["require_signature"].as_bool().unwrap(),
                    min_counter: c["policy"]["min_counter"].as_u64().unwrap(),
                    subject: c["policy"]["subject"].as_str().map(leak),
                    verdict,
                })
            })
            .collect();
        let bytes = std::fs::read(dir.join(file)).unwrap();
        cases.push(Case { checks, ..valid(name, leak(v["description"].as_str().unwrap()), bytes) });
    }
    assert!(cases.len() >= 15, "the signed vectors were not found");
    cases
}

fn signed_cases() -> Vec<Case> {
    let key1 = test_key(1);
    let key2 = test_key(2);
    let p256 = test_p256_key();
    let k1 = trust(&key1);
    let k2 = trust(&key2);
    let ok = None;
    let example = base().encode();
    let with = |case: Case, checks: Vec<Check>| Case { checks, ..case };
    let hash_only = |k: &KeySpec| KeySpec { public_key: None, ..k.clone() };

    let mut nested_inner = base();
    nested_inner.entries.truncate(2);
    let inner = sign(&nested_inner.encode(), &key2, &options(3, Some("vendor.npu")));
    let nest = |inner: &[u8]| {
        let mut outer = base();
        outer.entries.push(RawEntry::new(
            "npu.blob",
            Dtype::CONTAINER,
            &[inner.len() as u64],
            inner.to_vec(),
        ));
        outer.canonical().encode()
    };

    vec![
        with(
            valid("signed-ed25519", "the example model signed with Ed25519 by test key 1, counter 7, subject `tpack.test`", signed_example()),
            vec![
                check(vec![k1.clone()], 7, ok),
                check(vec![k1.clone()], 8, Some(Rule::Rollback)),
                check(vec![k2.clone()], 0, Some(Rule::UnknownKey)),
                check(vec![hash_only(&k1)], 0, Some(Rule::UnknownKey)),
                check(vec![KeySpec { algorithm: Algorithm::EcdsaP256, ..k1.clone() }], 0, Some(Rule::AlgorithmMismatch)),
                Check { subject: Some("tpack.test"), ..check(vec![k1.clone()], 7, ok) },
                Check { subject: Some("other.model"), ..check(vec![k1.clone()], 0, Some(Rule::SubjectMismatch)) },
                check(vec![KeySpec { subject: Some("other.model"), ..k1.clone() }], 0, Some(Rule::SubjectMismatch)),
                Check { require: false, ..check(vec![], 0, Some(Rule::UnknownKey)) },
            ],
        ),
        with(
            valid("signed-p256", "the example model signed with ECDSA P-256 (RFC 6979 nonce) by the P-256 test key, counter 7", sign(&example, &p256, &options(7, None))),
            vec![check(vec![trust(&p256)], 7, ok), check(vec![k1.clone()], 0, Some(Rule::UnknownKey))],
        ),
        with(
            valid("signed-with-pubkey", "signed by test key 1, carrying its public key: a verifier that keeps only the key id uses it", sign(&example, &key1, &SignOptions { embed_public_key: true, ..options(7, None) })),
            vec![check(vec![hash_only(&k1)], 0, ok), check(vec![k1.clone()], 0, ok)],
        ),
        with(
            valid("signed-pubkey-mismatch", "signed by test key 1, carrying test key 2's public key in place of its own (checksums recomputed)", {
                let mut bytes = sign(&example, &key1, &SignOptions { embed_public_key: true, ..options(7, None) });
                let at = meta_value_range(&bytes, "tpack.sig.pubkey");
                bytes[at].copy_from_slice(key2.public().raw());
                fix(&mut bytes);
                bytes
            }),
            vec![check(vec![hash_only(&k1)], 0, Some(Rule::UnknownKey)), check(vec![k1.clone()], 0, Some(Rule::UnknownKey))],
        ),
        with(
            valid("signed-key2", "the example model signed by test key 2", sign(&example, &key2, &options(7, None))),
            vec![check(vec![k1.clone()], 0, Some(Rule::UnknownKey)), check(vec![k2.clone(), k1.clone()], 0, ok)],
        ),
        with(
            valid("signed-forged-key-id", "signed by test key 2, with test key 1's id written over its own (checksums recomputed)", {
                let mut bytes = sign(&example, &key2, &options(7, None));
                let at = meta_value_range(&bytes, "tpack.sig.key");
                bytes[at].copy_from_slice(&key1.public().key_id());
                fix(&mut bytes);
                bytes
            }),
            vec![check(vec![k1.clone()], 0, Some(Rule::BadSignature))],
        ),
        with(
            valid("signed-tampered-payload", "the signed example with one bit of `embed.weight` flipped and every CRC recomputed: intact for CRCs, not authentic", tampered(|b| {
                let at = payload_range(b, 0).start + 5;
                b[at] ^= 0x10;
            })),
            vec![check(vec![k1.clone()], 0, Some(Rule::EntryDigest))],
        ),
        with(
            valid("signed-tampered-digest", "a payload bit flipped and its digest in the signature entry recomputed to match: the signature no longer verifies", tampered(|b| {
                let at = payload_range(b, 0).start + 5;
                b[at] ^= 0x10;
                let digest = sha256(&b[payload_range(b, 0)]);
                let sig = payload_range(b, header(b).entry_count.get() as usize - 1);
                b[sig.start..sig.start + 32].copy_from_slice(&digest);
            })),
            vec![check(vec![k1.clone()], 0, Some(Rule::BadSignature))],
        ),
        with(
            valid("signed-tampered-counter", "the signed counter raised from 7 to 100 (header checksum recomputed): the counter is signed", tampered(|b| {
                let at = meta_value_range(b, "tpack.sig.counter");
                b[at].copy_from_slice(&100u64.to_le_bytes());
            })),
            vec![check(vec![k1.clone()], 0, Some(Rule::BadSignature))],
        ),
        with(
            valid("signed-algorithm-swapped", "an Ed25519 signature whose `tpack.sig.alg` says 2 (ECDSA P-256)", tampered(|b| {
                let at = meta_value_range(b, "tpack.sig.alg");
                b[at].copy_from_slice(&2u64.to_le_bytes());
            })),
            vec![check(vec![k1.clone()], 0, Some(Rule::AlgorithmMismatch))],
        ),
        with(
            valid("signed-s-plus-l", "the Ed25519 signature with S replaced by S + L, which a lax verifier accepts: S must be below L", tampered(|b| {
                let sig = payload_range(b, header(b).entry_count.get() as usize - 1);
                let s = sig.end - 32..sig.end;
                const L: [u8; 32] = [0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10];
                let mut carry = 0u16;
                for (byte, l) in b[s].iter_mut().zip(L) {
                    let sum = u16::from(*byte) + u16::from(l) + carry;
                    *byte = sum as u8;
                    carry = sum >> 8;
                }
            })),
            vec![check(vec![k1.clone()], 0, Some(Rule::BadSignature))],
        ),
        with(
            valid("signed-renamed-entry", "the signed example with entry `norm.eps` renamed `norm.ept` (same length and order; header checksum recomputed)", tampered(|b| {
                let (names, len) = section(b, 2);
                let pool = &mut b[names..names + len];
                let at = pool.windows(8).position(|w| w == b"norm.eps").unwrap();
                pool[at + 7] = b't';
            })),
            vec![check(vec![k1.clone()], 0, Some(Rule::BadSignature))],
        ),
        with(
            valid("signed-metadata-changed", "the signed example with metadata `arch` changed from `toy-mlp` to `toy-mlq` (header checksum recomputed)", tampered(|b| {
                let at = meta_value_range(b, "arch");
                b[at.end - 1] = b'q';
            })),
            vec![check(vec![k1.clone()], 0, Some(Rule::BadSignature))],
        ),
        with(
            valid("signed-subject-other", "signed by test key 1 with subject `other.model`", sign(&example, &key1, &options(7, Some("other.model")))),
            vec![Check { subject: Some("tpack.test"), ..check(vec![k1.clone()], 0, Some(Rule::SubjectMismatch)) }],
        ),
        with(
            valid("signed-reordered", "the signed example's first two entries swapped, its signature entry and attributes kept", {
                let signed = signed_example();
                let c = Container::parse(&signed).unwrap();
                let sig = c.entry(c.len() - 1).unwrap().payload().to_vec();
                raw_signed(|r| {
                    r.entries.swap(0, 1);
                    signature_entry(r).data = sig;
                    r.meta.push(RawMeta::pooled("tpack.sig.subject", MetaType::STRING, b"tpack.test".to_vec()));
                })
            }),
            vec![check(vec![k1.clone()], 0, Some(Rule::BadSignature))],
        ),
        with(
            valid("signed-stripped", "the signed example with its signature taken away (`unsign`): a valid unsigned file, identical to the example", unsign_container(&signed_example()).unwrap()),
            vec![check(vec![k1.clone()], 0, Some(Rule::SignatureRequired)), Check { require: false, ..check(vec![k1.clone()], 0, ok) }],
        ),
        with(
            valid("signed-nested", "signed by test key 1, holding a container signed by test key 2 (subject `vendor.npu`, counter 3): the outer signature covers the inner one", sign(&nest(&inner), &key1, &options(7, None))),
            vec![check(vec![k1.clone()], 0, ok), check(vec![k2.clone()], 0, Some(Rule::UnknownKey))],
        ),
        with(
            valid("unsigned-holding-signed", "an unsigned container holding a container signed by test key 2: the outer one is not signed", nest(&inner)),
            vec![check(vec![k2.clone()], 0, Some(Rule::SignatureRequired))],
        ),
        with(
            valid("signed-newer-minor-algorithm", "a minor-3 file signed with algorithm 99, unknown to a 1.2 reader: valid, and refused at verification", tampered(|b| {
                header_mut(b).version_minor = tpack::zerocopy::little_endian::U16::new(3);
                let at = meta_value_range(b, "tpack.sig.alg");
                b[at].copy_from_slice(&99u64.to_le_bytes());
            })),
            vec![check(vec![k1.clone()], 0, Some(Rule::AlgorithmMismatch))],
        ),
        valid("signed-minimal", "a signed container with no other entry: the signature entry holds the signature alone", sign(&Raw::default().encode(), &key1, &options(0, None))),
        valid("signed-unknown-attribute-newer-minor", "a minor-3 signed file with an attribute `tpack.sig.extra` unknown to a 1.2 reader: kept and skipped", raw_signed(|r| {
            r.minor = 3;
            r.meta.push(RawMeta::inline("tpack.sig.extra", MetaType::U64, 1));
        })),
    ]
}

pub fn invalid_cases() -> Vec<Case> {
    let n = base().entries.len() as u64;
    vec![
        invalid(
            Rule::SignedFlag,
            "flag-without-entry",
            "the SIGNED flag and signed attributes, but no signature entry",
            raw_signed(|r| {
                r.entries.pop();
            }),
        ),
        invalid(
            Rule::SignedFlag,
            "entry-without-flag",
            "a signature entry and signed attributes, but no SIGNED flag",
            raw_signed(|r| r.compat = 0),
        ),
        invalid(
            Rule::SignedFlag,
            "attribute-without-flag",
            "an unsigned minor-2 file with a `tpack.sig.counter` key",
            {
                let mut raw = base();
                raw.minor = 2;
                raw.extension = geometry(&block_records(&raw.entries));
                raw.meta.push(RawMeta::inline("tpack.sig.counter", MetaType::U64, 1));
                raw.encode()
            },
        ),
        invalid(
            Rule::SignatureEntry,
            "not-last",
            "the signature entry first in the table",
            raw_signed(|r| r.entries.rotate_right(1)),
        ),
        invalid(
            Rule::SignatureEntry,
            "two",
            "two signature entries",
            raw_signed(|r| {
                let mut second = signature_entry(r).clone();
                second.name = b"tpack.signature2".to_vec();
                let last = r.entries.len() - 1;
                r.entries.insert(last, second);
            }),
        ),
        invalid(
            Rule::SignatureEntry,
            "align-64",
            "the signature entry aligned to 64",
            raw_signed(|r| signature_entry(r).alignment = 64),
        ),
        invalid(
            Rule::SignatureEntry,
            "name",
            "the signature entry named `signature`",
            raw_signed(|r| signature_entry(r).name = b"zz.signature".to_vec()),
        ),
        invalid(
            Rule::SignatureEntry,
            "target",
            "the signature entry with a load address",
            raw_signed(|r| {
                let e = signature_entry(r);
                e.flags = 1;
                e.target = 0x1000;
            }),
        ),
        invalid(
            Rule::SignatureEntry,
            "name-taken",
            "an unsigned minor-2 file with a RAW entry named `tpack.signature`",
            {
                let mut raw = base();
                raw.entries.push(RawEntry::new("tpack.signature", Dtype::RAW, &[4], pattern(4, 1)));
                raw.minor = 2;
                raw.extension = geometry(&block_records(&raw.entries));
                raw.encode()
            },
        ),
        invalid(
            Rule::SignatureMeta,
            "no-algorithm",
            "no `tpack.sig.alg`",
            raw_signed(|r| r.meta.retain(|m| m.key != b"tpack.sig.alg")),
        ),
        invalid(
            Rule::SignatureMeta,
            "algorithm-3",
            "`tpack.sig.alg` 3, not defined in 1.2",
            raw_signed(|r| {
                r.meta.iter_mut().find(|m| m.key == b"tpack.sig.alg").unwrap().value = 3;
            }),
        ),
        invalid(
            Rule::SignatureMeta,
            "algorithm-string",
            "`tpack.sig.alg` a string",
            raw_signed(|r| {
                r.meta.retain(|m| m.key != b"tpack.sig.alg");
                r.meta.push(RawMeta::pooled("tpack.sig.alg", MetaType::STRING, b"ed25519".to_vec()));
            }),
        ),
        invalid(
            Rule::SignatureMeta,
            "key-31-bytes",
            "`tpack.sig.key` of 31 bytes",
            raw_signed(|r| {
                r.meta.iter_mut().find(|m| m.key == b"tpack.sig.key").unwrap().bytes.pop();
            }),
        ),
        invalid(
            Rule::SignatureMeta,
            "no-counter",
            "no `tpack.sig.counter`",
            raw_signed(|r| r.meta.retain(|m| m.key != b"tpack.sig.counter")),
        ),
        invalid(
            Rule::SignatureMeta,
            "subject-empty",
            "an empty `tpack.sig.subject`",
            raw_signed(|r| {
                r.meta.push(RawMeta::pooled("tpack.sig.subject", MetaType::STRING, Vec::new()));
            }),
        ),
        invalid(
            Rule::SignatureMeta,
            "subject-256",
            "a `tpack.sig.subject` of 256 bytes",
            raw_signed(|r| {
                r.meta.push(RawMeta::pooled("tpack.sig.subject", MetaType::STRING, vec![b'a'; 256]));
            }),
        ),
        invalid(
            Rule::SignatureMeta,
            "pubkey-33",
            "an Ed25519 `tpack.sig.pubkey` of 33 bytes",
            raw_signed(|r| {
                r.meta.push(RawMeta::pooled("tpack.sig.pubkey", MetaType::BYTES, vec![9; 33]));
            }),
        ),
        invalid(
            Rule::SignatureMeta,
            "unknown-attribute",
            "a `tpack.sig.extra` key, not defined in 1.2",
            raw_signed(|r| {
                r.meta.push(RawMeta::inline("tpack.sig.extra", MetaType::U64, 1));
            }),
        ),
        invalid(
            Rule::SignatureLength,
            "63",
            "a 63-byte signature after the digests",
            raw_signed(|r| {
                let e = signature_entry(r);
                e.data.pop();
                e.dims[0] -= 1;
            }),
        ),
        invalid(
            Rule::SignatureLength,
            "digests-missing",
            "a signature entry of 64 bytes: the digests are missing",
            raw_signed(|r| {
                let e = signature_entry(r);
                e.data.truncate(64);
                e.dims[0] = 64;
            }),
        ),
        invalid(
            Rule::SignatureLength,
            "truncated",
            "a signature entry one digest short",
            raw_signed(|r| {
                let e = signature_entry(r);
                e.data.truncate(32 * (n as usize - 1) + 64);
                e.dims[0] = 32 * (n - 1) + 64;
            }),
        ),
    ]
}

/// A nested container breaking R55 (its parent reports R39), for the nesting group's cases.
pub fn nested_signature_entry_misaligned() -> Vec<u8> {
    let inner = raw_signed(|r| signature_entry(r).alignment = 16);
    let mut outer = base();
    outer.entries.push(RawEntry::new("inner", Dtype::CONTAINER, &[inner.len() as u64], inner));
    outer.canonical().encode()
}

impl Check {
    /// The check's key set, as the core takes it.
    pub fn trusted_keys(&self) -> Vec<tpack::auth::TrustedKey<'_>> {
        self.keys
            .iter()
            .map(|k| tpack::auth::TrustedKey {
                key_id: k.key_id,
                algorithm: k.algorithm,
                public_key: k.public_key.as_deref(),
                subject: k.subject,
            })
            .collect()
    }

    /// The check's policy over `keys` (its [`Check::trusted_keys`]).
    pub fn policy<'k>(&self, keys: &'k [tpack::auth::TrustedKey<'k>]) -> tpack::auth::Policy<'k> {
        let subject = self.subject;
        tpack::auth::Policy { keys, require_signature: self.require, min_counter: self.min_counter, subject }
    }
}

/// What the core answers for `check` on `bytes`: `None` when authentic (or unsigned and allowed), else the
/// rule — the structural and integrity rules included, in the spec's order.
pub fn verdict(bytes: &[u8], check: &Check) -> Option<Rule> {
    use tpack::auth::SoftwareCrypto;
    let keys = check.trusted_keys();
    let policy = check.policy(&keys);
    let result = Container::parse(bytes)
        .and_then(|c| c.authenticate(&policy, &SoftwareCrypto))
        .and_then(|a| a.verify(&SoftwareCrypto));
    result.err().map(|e| e.rule())
}
