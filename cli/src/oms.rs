//! OpenSSF model signing (OMS): a detached sigstore bundle for a signed container, which PyPI `model-signing`'s
//! `model_signing verify key FILE --signature BUNDLE --public_key PUB.pem` accepts (design memo §3.10).
//!
//! The bundle covers the file exactly as written, its tpack signature and trailer included, as a single-file
//! model in OMS's "files" serialization: one resource named `.` (a single file is its own root, so its path
//! relative to itself is `.`) whose digest is the SHA-256 of the whole file. The in-toto statement naming that
//! digest is signed through DSSE's pre-authentication encoding with ECDSA P-256 / SHA-256, DER-encoded, and the
//! bundle names its key by `verificationMaterial.publicKey.hint`: the SHA-256 of the key's SPKI PEM text, as
//! `model_signing` computes it. OMS accepts only NIST curves, so an Ed25519 key cannot sign a bundle.
//!
//! Rejected: the "shards" serialization, which model-signing 1.1.1's `verify key` command cannot check (it
//! always rehashes with "files"); and making the tpack signature the OMS signature, which would have to cover a
//! statement naming the digest of the file that holds it.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use p256::ecdsa::signature::Signer as _;
use p256::pkcs8::{DecodePrivateKey as _, EncodePublicKey as _, LineEnding};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

/// DSSE payload type of an in-toto statement.
const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The sigstore bundle version `model_signing` writes and reads.
const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// in-toto statement type.
const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// `model_signing`'s predicate type.
const PREDICATE_TYPE: &str = "https://model_signing/signature/v1.0";
/// The name of the one resource of a single-file model.
const RESOURCE_NAME: &str = ".";

/// An ECDSA P-256 private key that signs OMS bundles.
pub(crate) struct OmsKey(p256::ecdsa::SigningKey);

impl OmsKey {
    /// Reads a PKCS#8 PEM private key (as `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`
    /// writes it), or a SEC1 one (`-----BEGIN EC PRIVATE KEY-----`).
    ///
    /// # Errors
    /// A sentence saying why `pem` is not an unencrypted PKCS#8 P-256 key.
    pub(crate) fn from_pkcs8_pem(pem: &str) -> Result<Self, String> {
        let key = p256::ecdsa::SigningKey::from_pkcs8_pem(pem)
            .ok()
            .or_else(|| p256::SecretKey::from_sec1_pem(pem).ok().map(p256::ecdsa::SigningKey::from));
        key.map(Self).ok_or_else(|| {
            "it is not an unencrypted PKCS#8 ECDSA P-256 private key in PEM form (OMS bundles are signed with \
             P-256 only)"
                .to_owned()
        })
    }

    /// The public key as SPKI PEM text, as OpenSSL and pyca/cryptography write it (64-column base64, LF).
    ///
    /// # Errors
    /// Never in practice: encoding a valid key cannot fail; the error is the encoder's, in words.
    pub(crate) fn public_key_pem(&self) -> Result<String, String> {
        self.0
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .map_err(|e| format!("cannot encode the OMS public key: {e}"))
    }

    /// `verificationMaterial.publicKey.hint`: the SHA-256 of the SPKI PEM text, in hex.
    ///
    /// # Errors
    /// As [`OmsKey::public_key_pem`].
    pub(crate) fn hint(&self) -> Result<String, String> {
        Ok(hex::encode(Sha256::digest(self.public_key_pem()?.as_bytes())))
    }
}

/// The in-toto statement: field order as in `model_signing`'s output (the signature covers the exact bytes,
/// so any order would verify; a fixed one makes the bundle reproducible).
#[derive(Serialize)]
struct Statement<'a> {
    #[serde(rename = "_type")]
    kind: &'static str,
    subject: [Subject<'a>; 1],
    #[serde(rename = "predicateType")]
    predicate_type: &'static str,
    predicate: Predicate,
}

#[derive(Serialize)]
struct Subject<'a> {
    name: &'a str,
    digest: Sha256Digest,
}

#[derive(Serialize)]
struct Sha256Digest {
    sha256: String,
}

#[derive(Serialize)]
struct Predicate {
    serialization: Serialization,
    resources: [Resource; 1],
}

#[derive(Serialize)]
struct Serialization {
    method: &'static str,
    hash_type: &'static str,
    allow_symlinks: bool,
}

#[derive(Serialize)]
struct Resource {
    name: &'static str,
    algorithm: &'static str,
    digest: String,
}

/// The DSSE statement for a file named `model_name` whose SHA-256 is `file_digest`. The subject's digest is
/// the SHA-256 of the resources' digests concatenated in name order: here, of the one digest.
fn statement(model_name: &str, file_digest: &[u8; 32]) -> Vec<u8> {
    let statement = Statement {
        kind: STATEMENT_TYPE,
        subject: [Subject {
            name: model_name,
            digest: Sha256Digest { sha256: hex::encode(Sha256::digest(file_digest)) },
        }],
        predicate_type: PREDICATE_TYPE,
        predicate: Predicate {
            serialization: Serialization { method: "files", hash_type: "sha256", allow_symlinks: false },
            resources: [Resource {
                name: RESOURCE_NAME,
                algorithm: "sha256",
                digest: hex::encode(file_digest),
            }],
        },
    };
    // Serializing plain strings and booleans cannot fail.
    serde_json::to_vec(&statement).unwrap_or_default()
}

/// DSSE's pre-authentication encoding: `"DSSEv1" SP len(type) SP type SP len(payload) SP payload`.
fn pae(payload: &[u8]) -> Vec<u8> {
    let mut out = format!("DSSEv1 {} {PAYLOAD_TYPE} {} ", PAYLOAD_TYPE.len(), payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out
}

/// The sigstore bundle (JSON text, with a final newline) of the file `file`, named `model_name` (its file
/// name), signed with `key`. Deterministic: ECDSA nonces are derived as RFC 6979 says.
///
/// # Errors
/// As [`OmsKey::hint`].
pub(crate) fn bundle(model_name: &str, file: &[u8], key: &OmsKey) -> Result<Vec<u8>, String> {
    let digest: [u8; 32] = Sha256::digest(file).into();
    let payload = statement(model_name, &digest);
    let signature: p256::ecdsa::Signature = key.0.sign(&pae(&payload));
    let bundle = serde_json::json!({
        "mediaType": BUNDLE_MEDIA_TYPE,
        "verificationMaterial": {"publicKey": {"hint": key.hint()?}, "tlogEntries": []},
        "dsseEnvelope": {
            "payload": BASE64.encode(&payload),
            "payloadType": PAYLOAD_TYPE,
            "signatures": [{"sig": BASE64.encode(signature.to_der().as_bytes()), "keyid": ""}],
        },
    });
    let mut text = serde_json::to_vec_pretty(&bundle).unwrap_or_default();
    text.push(b'\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier as _;

    /// A fixed P-256 key (PKCS#8 PEM of scalar 1..=32 bytes), so the tests need no random source.
    fn key() -> OmsKey {
        let secret =
            p256::SecretKey::from_slice(&core::array::from_fn::<u8, 32, _>(|i| i as u8 + 1)).unwrap();
        let pem = p256::pkcs8::EncodePrivateKey::to_pkcs8_pem(&secret, LineEnding::LF).unwrap();
        OmsKey::from_pkcs8_pem(&pem).unwrap()
    }

    fn parse(bundle: &[u8]) -> serde_json::Value {
        serde_json::from_slice(bundle).unwrap()
    }

    #[test]
    fn pae_is_dsse_v1() {
        assert_eq!(pae(b"{}"), b"DSSEv1 28 application/vnd.in-toto+json 2 {}".to_vec());
    }

    #[test]
    fn the_statement_names_the_file_digest_and_the_digest_of_digests() {
        let file = b"model bytes";
        let digest: [u8; 32] = Sha256::digest(file).into();
        let s: serde_json::Value = serde_json::from_slice(&statement("m.tpack", &digest)).unwrap();
        assert_eq!(s["_type"], STATEMENT_TYPE);
        assert_eq!(s["predicateType"], PREDICATE_TYPE);
        assert_eq!(s["subject"][0]["name"], "m.tpack");
        assert_eq!(s["subject"][0]["digest"]["sha256"], hex::encode(Sha256::digest(digest)));
        let resource = &s["predicate"]["resources"][0];
        assert_eq!(resource["name"], ".");
        assert_eq!(resource["algorithm"], "sha256");
        assert_eq!(resource["digest"], hex::encode(digest));
        assert_eq!(s["predicate"]["serialization"]["method"], "files");
    }

    #[test]
    fn the_signature_verifies_over_the_pae_and_fails_for_another_file() {
        let key = key();
        let b = parse(&bundle("m.tpack", b"abc", &key).unwrap());
        let envelope = &b["dsseEnvelope"];
        let payload = BASE64.decode(envelope["payload"].as_str().unwrap()).unwrap();
        let der = BASE64.decode(envelope["signatures"][0]["sig"].as_str().unwrap()).unwrap();
        let signature = p256::ecdsa::DerSignature::from_bytes(&der).unwrap();
        let verifying = key.0.verifying_key();
        verifying.verify(&pae(&payload), &signature).unwrap();
        let other = parse(&bundle("m.tpack", b"abd", &key).unwrap());
        assert_ne!(other["dsseEnvelope"]["payload"], envelope["payload"]);
        assert!(verifying.verify(&pae(b"{}"), &signature).is_err());
    }

    #[test]
    fn the_hint_is_the_sha256_of_the_pem_text() {
        let key = key();
        let pem = key.public_key_pem().unwrap();
        assert!(
            pem.starts_with("-----BEGIN PUBLIC KEY-----\n") && pem.ends_with("-----END PUBLIC KEY-----\n")
        );
        let b = parse(&bundle("m", b"", &key).unwrap());
        assert_eq!(
            b["verificationMaterial"]["publicKey"]["hint"],
            hex::encode(Sha256::digest(pem.as_bytes()))
        );
        assert_eq!(b["mediaType"], BUNDLE_MEDIA_TYPE);
    }

    #[test]
    fn the_same_input_gives_the_same_bundle() {
        let key = key();
        assert_eq!(bundle("m", b"x", &key).unwrap(), bundle("m", b"x", &key).unwrap());
    }

    #[test]
    fn an_ed25519_key_is_refused_in_words() {
        // RFC 8410's example Ed25519 private key.
        let ed = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n-----END PRIVATE KEY-----\n";
        let err = OmsKey::from_pkcs8_pem(ed).err().unwrap();
        assert!(err.contains("P-256"), "{err}");
    }
}
