//! Signing keys and public keys, from and to the PEM files `openssl` reads and writes.

use std::fmt;
use std::string::String;
use std::vec::Vec;

use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use p256::pkcs8::LineEnding;

use crate::auth::{key_id, Algorithm, SoftwareCrypto, TrustedKey};
use crate::format::{DIGEST_LEN, SIGNED_MESSAGE_LEN};

/// Why a key could not be read, made or written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyError {
    /// The text is not a PEM key of a supported algorithm (Ed25519 or P-256, PKCS#8, SEC1 or SPKI).
    Unsupported,
    /// The operating system's random number generator failed.
    Random,
    /// The key could not be encoded.
    Encoding,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyError::Unsupported => {
                "not a PEM key of a supported algorithm (an Ed25519 or P-256 PKCS#8 private key, or its public key)"
            }
            KeyError::Random => "the operating system's random number generator failed",
            KeyError::Encoding => "the key could not be encoded",
        })
    }
}

impl std::error::Error for KeyError {}

/// The DER of an Ed25519 PKCS#8 version 1 `PrivateKeyInfo` (RFC 8410) before its 32-byte seed.
const ED25519_PKCS8_V1_PREFIX: [u8; 16] =
    [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

#[derive(Clone)]
enum Secret {
    Ed25519(ed25519_dalek::SigningKey),
    P256(p256::ecdsa::SigningKey),
}

/// A private key that signs containers: Ed25519 or P-256.
#[derive(Clone)]
pub struct SigningKey {
    secret: Secret,
    public: PublicKey,
}

impl fmt::Debug for SigningKey {
    /// The algorithm and the key id, never the secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey").field("public", &self.public).finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Reads a private key from PEM text: PKCS#8 (`-----BEGIN PRIVATE KEY-----`, what `openssl genpkey`
    /// writes) for Ed25519 or P-256, or SEC1 (`-----BEGIN EC PRIVATE KEY-----`) for P-256.
    ///
    /// # Errors
    /// [`KeyError::Unsupported`] for anything else (an encrypted key, RSA, another curve, a public key).
    pub fn from_pem(pem: &str) -> Result<Self, KeyError> {
        if let Ok(key) = ed25519_dalek::SigningKey::from_pkcs8_pem(pem) {
            return Ok(Self::from_secret(Secret::Ed25519(key)));
        }
        let p256 = p256::ecdsa::SigningKey::from_pkcs8_pem(pem)
            .ok()
            .or_else(|| p256::SecretKey::from_sec1_pem(pem).ok().map(p256::ecdsa::SigningKey::from));
        p256.map(|key| Self::from_secret(Secret::P256(key))).ok_or(KeyError::Unsupported)
    }

    /// A new random key of `algorithm`, from the operating system's random number generator.
    ///
    /// # Errors
    /// [`KeyError::Random`] if the generator fails.
    pub fn generate(algorithm: Algorithm) -> Result<Self, KeyError> {
        loop {
            let mut seed = zeroize::Zeroizing::new([0u8; 32]);
            getrandom::fill(seed.as_mut_slice()).map_err(|_| KeyError::Random)?;
            let secret = match algorithm {
                Algorithm::Ed25519 => Secret::Ed25519(ed25519_dalek::SigningKey::from_bytes(&seed)),
                // A scalar of 0 or at least the group order (probability about 2^-32) is drawn again.
                Algorithm::EcdsaP256 => match p256::ecdsa::SigningKey::from_slice(seed.as_slice()) {
                    Ok(key) => Secret::P256(key),
                    Err(_) => continue,
                },
            };
            return Ok(Self::from_secret(secret));
        }
    }

    /// The key of `algorithm` whose secret is `secret`: an Ed25519 seed (RFC 8032), or a P-256 scalar
    /// (big-endian). For keys derived or stored elsewhere, and for fixed test keys; [`SigningKey::generate`]
    /// makes a new one.
    ///
    /// # Errors
    /// [`KeyError::Unsupported`] for a P-256 scalar that is 0 or not below the group order.
    pub fn from_secret_bytes(algorithm: Algorithm, secret: &[u8; 32]) -> Result<Self, KeyError> {
        let secret = match algorithm {
            Algorithm::Ed25519 => Secret::Ed25519(ed25519_dalek::SigningKey::from_bytes(secret)),
            Algorithm::EcdsaP256 => {
                Secret::P256(p256::ecdsa::SigningKey::from_slice(secret).map_err(|_| KeyError::Unsupported)?)
            }
        };
        Ok(Self::from_secret(secret))
    }

    fn from_secret(secret: Secret) -> Self {
        let public = match &secret {
            Secret::Ed25519(key) => {
                PublicKey::new(Algorithm::Ed25519, key.verifying_key().to_bytes().to_vec())
            }
            Secret::P256(key) => PublicKey::new(
                Algorithm::EcdsaP256,
                key.verifying_key().to_sec1_point(false).as_bytes().to_vec(),
            ),
        };
        SigningKey { secret, public }
    }

    /// The key as PKCS#8 PEM text, which `openssl pkey` reads.
    ///
    /// # Errors
    /// [`KeyError::Encoding`] if encoding fails.
    pub fn to_pem(&self) -> Result<zeroize::Zeroizing<String>, KeyError> {
        match &self.secret {
            // PKCS#8 version 1, the seed alone, as `openssl genpkey` writes it: OpenSSL 3.0 cannot read the
            // version 2 form (with the public key) that ed25519-dalek writes.
            Secret::Ed25519(key) => {
                let mut der = zeroize::Zeroizing::new(ED25519_PKCS8_V1_PREFIX.to_vec());
                der.extend_from_slice(&key.to_bytes());
                p256::pkcs8::der::pem::encode_string("PRIVATE KEY", LineEnding::LF, &der)
                    .map(zeroize::Zeroizing::new)
                    .map_err(|_| KeyError::Encoding)
            }
            Secret::P256(key) => key.to_pkcs8_pem(LineEnding::LF).map_err(|_| KeyError::Encoding),
        }
    }

    /// The algorithm.
    #[must_use]
    pub fn algorithm(&self) -> Algorithm {
        self.public.algorithm
    }

    /// The public half.
    #[must_use]
    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// Signs the signed message of spec §14: pure Ed25519 over it, or ECDSA P-256 over its SHA-256 (RFC 6979
    /// nonces), as `r ‖ s`.
    #[must_use]
    pub fn sign(&self, message: &[u8; SIGNED_MESSAGE_LEN]) -> [u8; 64] {
        match &self.secret {
            Secret::Ed25519(key) => ed25519_dalek::Signer::sign(key, message).to_bytes(),
            Secret::P256(key) => {
                let signature: p256::ecdsa::Signature = p256::ecdsa::signature::Signer::sign(key, message);
                signature.to_bytes().into()
            }
        }
    }
}

/// A public key: its algorithm and its raw bytes (32 for Ed25519, 65 for P-256, an uncompressed SEC1 point).
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    algorithm: Algorithm,
    raw: Vec<u8>,
    id: [u8; DIGEST_LEN],
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({} ", self.algorithm)?;
        self.id.iter().try_for_each(|b| write!(f, "{b:02x}"))?;
        f.write_str(")")
    }
}

impl PublicKey {
    fn new(algorithm: Algorithm, raw: Vec<u8>) -> Self {
        let id = key_id(&SoftwareCrypto, algorithm, &raw);
        PublicKey { algorithm, raw, id }
    }

    /// Reads a public key from SubjectPublicKeyInfo PEM text (`-----BEGIN PUBLIC KEY-----`, what `openssl pkey
    /// -pubout` writes), or takes the public half of a private key's PEM.
    ///
    /// # Errors
    /// [`KeyError::Unsupported`] for anything but an Ed25519 or P-256 key.
    pub fn from_pem(pem: &str) -> Result<Self, KeyError> {
        if let Ok(key) = ed25519_dalek::VerifyingKey::from_public_key_pem(pem) {
            return Ok(Self::new(Algorithm::Ed25519, key.to_bytes().to_vec()));
        }
        if let Ok(key) = p256::ecdsa::VerifyingKey::from_public_key_pem(pem) {
            return Ok(Self::new(Algorithm::EcdsaP256, key.to_sec1_point(false).as_bytes().to_vec()));
        }
        SigningKey::from_pem(pem).map(|key| key.public)
    }

    /// The public key from its raw bytes, checked: a point on the curve (P-256), a valid encoding (Ed25519).
    ///
    /// # Errors
    /// [`KeyError::Unsupported`] if the bytes are not a valid key of `algorithm`.
    pub fn from_raw(algorithm: Algorithm, raw: &[u8]) -> Result<Self, KeyError> {
        let valid = match algorithm {
            Algorithm::Ed25519 => <[u8; 32]>::try_from(raw)
                .ok()
                .is_some_and(|b| ed25519_dalek::VerifyingKey::from_bytes(&b).is_ok()),
            Algorithm::EcdsaP256 => {
                raw.len() == 65 && p256::ecdsa::VerifyingKey::from_sec1_bytes(raw).is_ok()
            }
        };
        if valid {
            Ok(Self::new(algorithm, raw.to_vec()))
        } else {
            Err(KeyError::Unsupported)
        }
    }

    /// The key as SubjectPublicKeyInfo PEM text.
    ///
    /// # Errors
    /// [`KeyError::Encoding`] if encoding fails.
    pub fn to_pem(&self) -> Result<String, KeyError> {
        let pem = match self.algorithm {
            Algorithm::Ed25519 => <[u8; 32]>::try_from(self.raw.as_slice())
                .ok()
                .and_then(|b| ed25519_dalek::VerifyingKey::from_bytes(&b).ok())
                .and_then(|k| k.to_public_key_pem(LineEnding::LF).ok()),
            Algorithm::EcdsaP256 => p256::ecdsa::VerifyingKey::from_sec1_bytes(&self.raw)
                .ok()
                .and_then(|k| k.to_public_key_pem(LineEnding::LF).ok()),
        };
        pem.ok_or(KeyError::Encoding)
    }

    /// The algorithm.
    #[must_use]
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The raw key bytes.
    #[must_use]
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// The key id (spec §14): SHA-256 of the DER SubjectPublicKeyInfo.
    #[must_use]
    pub fn key_id(&self) -> [u8; DIGEST_LEN] {
        self.id
    }

    /// The key as a [`TrustedKey`] for a [`crate::auth::Policy`].
    #[must_use]
    pub fn trusted(&self) -> TrustedKey<'_> {
        TrustedKey { key_id: self.id, algorithm: self.algorithm, public_key: Some(&self.raw), subject: None }
    }
}
