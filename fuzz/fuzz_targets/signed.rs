//! The signed verify path (spec §14) on arbitrary bytes, with test keys 1 and 2 of
//! `tests/support/cases/signature.rs` trusted (Ed25519, seeds SHA-256("tpack test key 1") and "… 2"):
//! `Container::parse`, `authenticate`, `Authenticated::verify` and `verify_entry` never panic, and what they
//! accept is authentic, checked with other code than the core's:
//!
//! - the signed message, recomputed with `sha2` over `bytes[..payloads.offset]` and over the digests, equals
//!   `Container::signed_message`, and is one that a trusted key signed: one of the messages of the signed
//!   vectors in spec/vectors/valid (which ed25519-dalek's `verify_strict` accepts), so no byte the signature
//!   covers differs from a known-authentic file;
//! - ed25519-dalek's `verify_strict` accepts the stored signature over it;
//! - every entry but the signature entry hashes (with `sha2`) to its digest: after `verify` and after each
//!   `verify_entry` that succeeds.
//!
//! Each input runs as it is and again with every checksum recomputed (the header's, each entry's and the
//! trailer's), as an attacker would after editing: without that, almost no edit of the prefix gets past the
//! header checksum to the signature. Each runs under two policies: a signature required (no counter floor, no
//! subject), and not required with a counter floor of 7 and the subject `tpack.test` (so unsigned inputs reach
//! the payload checks too). Seed it with the signed vectors (`.ci/run` copies
//! `spec/vectors/valid/signed-*.tpack`).
#![no_main]

use std::collections::HashSet;
use std::sync::OnceLock;

use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};
use tpack::auth::{Algorithm, Authenticated, Policy, SoftwareCrypto, TrustedKey};
use tpack::checksum::{crc32, header_crc};
use tpack::format::{Descriptor, Header, DESCRIPTOR_LEN, HEADER_CRC_OFFSET};
use tpack::zerocopy::FromBytes;
use tpack::Container;

const DIGEST_LEN: usize = 32;
const SIGNATURE_LEN: usize = 64;
/// The signed message's domain, written out here rather than taken from the crate.
const DOMAIN: &[u8; 16] = b"tpack signed v1\0";

/// The trusted keys (raw Ed25519 public keys) and the messages they signed in the vectors.
struct Trust {
    public_keys: Vec<[u8; 32]>,
    authentic_messages: HashSet<[u8; 80]>,
}

fn test_public_key(n: u32) -> [u8; 32] {
    let seed: [u8; 32] = Sha256::digest(format!("tpack test key {n}").as_bytes()).into();
    SigningKey::from_bytes(&seed).verifying_key().to_bytes()
}

fn trust() -> &'static Trust {
    static TRUST: OnceLock<Trust> = OnceLock::new();
    TRUST.get_or_init(|| {
        let public_keys = vec![test_public_key(1), test_public_key(2)];
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/vectors/valid");
        let mut authentic_messages = HashSet::new();
        for file in std::fs::read_dir(dir).expect("the vectors").flatten() {
            let bytes = std::fs::read(file.path()).unwrap();
            let Ok(container) = Container::parse(&bytes) else { continue };
            if let Some(message) = independent_message(&container) {
                let signature = stored_signature(&container).unwrap();
                if public_keys.iter().any(|k| ed25519_accepts(k, &message, &signature)) {
                    authentic_messages.insert(message);
                }
            }
        }
        assert!(authentic_messages.len() >= 3, "the signed vectors were not found in {dir}");
        Trust { public_keys, authentic_messages }
    })
}

fn ed25519_accepts(public_key: &[u8; 32], message: &[u8; 80], signature: &[u8; SIGNATURE_LEN]) -> bool {
    VerifyingKey::from_bytes(public_key)
        .is_ok_and(|key| key.verify_strict(message, &Signature::from_bytes(signature)).is_ok())
}

/// The signature entry's payload (the last entry's), if the container declares itself signed.
fn signature_payload<'a>(container: &Container<'a>) -> Option<&'a [u8]> {
    container.signed_attributes()?;
    Some(container.entry(container.len().checked_sub(1)?)?.payload())
}

fn digests<'a>(container: &Container<'a>) -> Option<&'a [u8]> {
    signature_payload(container)?.get(..(container.len() - 1) * DIGEST_LEN)
}

fn stored_signature(container: &Container<'_>) -> Option<[u8; SIGNATURE_LEN]> {
    let payload = signature_payload(container)?;
    payload.get((container.len() - 1) * DIGEST_LEN..)?.try_into().ok()
}

/// `M = DOMAIN ‖ SHA-256(bytes[..payloads.offset]) ‖ SHA-256(digests)`, computed here with `sha2`.
fn independent_message(container: &Container<'_>) -> Option<[u8; 80]> {
    let [.., payloads, _] = &container.header().sections;
    let payloads_offset = usize::try_from(payloads.offset.get()).ok()?;
    let prefix = container.as_bytes().get(..payloads_offset)?;
    let mut message = [0u8; 80];
    message[..16].copy_from_slice(DOMAIN);
    message[16..48].copy_from_slice(&Sha256::digest(prefix));
    message[48..].copy_from_slice(&Sha256::digest(digests(container)?));
    Some(message)
}

/// What `authenticate` accepted with a signer is authentic.
fn assert_authentic(checked: &Authenticated<'_>) {
    let container = checked.container();
    let message = independent_message(&container).expect("a signed container has a message");
    assert_eq!(container.signed_message(&SoftwareCrypto), Some(message), "the signed message");
    assert!(trust().authentic_messages.contains(&message), "accepted a message no trusted key signed");
    let signature = stored_signature(&container).expect("a signature");
    let signed_by_trusted = trust().public_keys.iter().any(|k| ed25519_accepts(k, &message, &signature));
    assert!(signed_by_trusted, "ed25519-dalek refuses the signature that was accepted");
}

/// Entry `index` of a signed container hashes to its digest.
fn assert_digest(container: &Container<'_>, index: usize) {
    let digests = digests(container).unwrap();
    let expected = &digests[index * DIGEST_LEN..(index + 1) * DIGEST_LEN];
    let payload = container.entry(index).unwrap().payload();
    assert_eq!(Sha256::digest(payload).as_slice(), expected, "entry {index} accepted with another digest");
}

/// `data` with its checksums recomputed, as `tests/support/raw.rs`'s `fix` does: each entry's payload CRC and
/// the trailer's own CRC (when the trailer has the length the entry count gives), then the header CRC. `None`
/// when the header does not even locate the sections.
fn with_checksums_recomputed(data: &[u8]) -> Option<Vec<u8>> {
    let (header, _) = Header::read_from_prefix(data).ok()?;
    let entries = usize::try_from(header.entry_count.get()).ok()?;
    let [table, _, _, metadata, _, trailer_section] = header.sections;
    let position = |offset: tpack::zerocopy::little_endian::U64| usize::try_from(offset.get()).ok();
    let (table, trailer) = (position(table.offset)?, position(trailer_section.offset)?);
    let mut bytes = data.to_vec();
    let slots = entries.checked_mul(4)?;
    if position(trailer_section.length)? == slots.checked_add(4)?
        && trailer.checked_add(slots + 4)? <= bytes.len()
    {
        for i in 0..entries {
            let at = table.checked_add(i.checked_mul(DESCRIPTOR_LEN as usize)?)?;
            let Some((descriptor, _)) = bytes.get(at..).and_then(|b| Descriptor::read_from_prefix(b).ok())
            else {
                continue;
            };
            let start = position(descriptor.offset)?;
            let Some(payload) =
                start.checked_add(position(descriptor.length)?).and_then(|end| bytes.get(start..end))
            else {
                continue;
            };
            let crc = crc32(payload);
            bytes[trailer + 4 * i..trailer + 4 * i + 4].copy_from_slice(&crc.to_le_bytes());
        }
        let crc = crc32(&bytes[trailer..trailer + slots]);
        bytes[trailer + slots..trailer + slots + 4].copy_from_slice(&crc.to_le_bytes());
    }
    let end = position(metadata.offset)?.checked_add(position(metadata.length)?)?;
    let crc = header_crc(bytes.get(..end)?);
    bytes.get_mut(HEADER_CRC_OFFSET..HEADER_CRC_OFFSET + 4)?.copy_from_slice(&crc.to_le_bytes());
    Some(bytes)
}

fuzz_target!(|data: &[u8]| {
    check(data);
    if let Some(fixed) = with_checksums_recomputed(data).filter(|fixed| fixed != data) {
        check(&fixed);
    }
});

/// Parses `data` and, if it parses, checks what each policy accepts.
fn check(data: &[u8]) {
    let Ok(container) = Container::parse(data) else { return };
    let trust = trust();
    let keys: Vec<TrustedKey<'_>> =
        trust.public_keys.iter().map(|k| TrustedKey::new(&SoftwareCrypto, Algorithm::Ed25519, k)).collect();
    let policies = [
        Policy::require(&keys),
        Policy { keys: &keys, require_signature: false, min_counter: 7, subject: Some("tpack.test") },
    ];
    for policy in &policies {
        let Ok(checked) = container.authenticate(policy, &SoftwareCrypto) else { continue };
        let signed = checked.signer().is_some();
        assert_eq!(signed, container.signed_attributes().is_some());
        if signed {
            assert_authentic(&checked);
        }
        let entries = container.len();
        let verified = checked.verify(&SoftwareCrypto).is_ok();
        for index in 0..=entries {
            let lazy = checked.verify_entry(index, &SoftwareCrypto);
            assert!(lazy.is_err() || index < entries, "verify_entry past the last entry");
            if signed && lazy.is_ok() && index + 1 < entries {
                assert_digest(&container, index);
            }
            // `verify` checks everything `verify_entry` does, and more.
            assert!(
                !verified || index >= entries || lazy.is_ok(),
                "verify passed, verify_entry({index}) failed"
            );
        }
        if signed && verified {
            (0..entries - 1).for_each(|index| assert_digest(&container, index));
        }
    }
}
