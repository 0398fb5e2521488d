//! Authenticity (spec §14): who signed a container, and whether its bytes are the ones they signed.
//!
//! A CRC catches accidents, not attacks: anyone who changes a payload can recompute every checksum, and
//! [`Container::verify`](crate::Container::verify) will still say the container is intact. A signed container
//! (format 1.2) carries, as its last entry, a SHA-256 digest of every other entry and a signature over its
//! prefix and those digests; its prefix names the algorithm, the key, a security counter and a subject. A
//! verifier with a [`Policy`] — the keys it trusts, whether a signature is required, the lowest counter it
//! accepts, the subject it expects — checks, in the spec's order:
//!
//! 1. [`Container::authenticate`](crate::Container::authenticate): R58 to R62 from the prefix alone (signature
//!    required, key trusted, algorithm, subject, counter), then R63, the signature, which hashes only the prefix
//!    and the digests: cheap, whatever the size of the payloads;
//! 2. [`Authenticated::verify_entry`] for each entry when it is first touched (R64: its payload matches its
//!    signed digest), or [`Authenticated::verify`] for all of them and the rest of the payload checks.
//!
//! Nothing here depends on a cryptography crate: hashing and signature checks go through [`Crypto`], which
//! [`SoftwareCrypto`] implements with RustCrypto's `sha2` (feature `sha256`), `salty` (feature `ed25519`) and
//! `p256` (feature `p256`), and which a device implements with its hash engine or secure element.
//!
//! The push decoder makes the same checks as a stream arrives ([`crate::stream::Decoder`]).

mod attributes;
mod message;
mod policy;
#[cfg(feature = "sha256")]
mod software;
mod verify;

pub use attributes::SignedAttributes;
pub use policy::{Policy, TrustedKey};
#[cfg(feature = "sha256")]
pub use software::{Sha256Software, SoftwareCrypto};
pub use verify::Authenticated;

pub(crate) use message::message_from_digests;
pub(crate) use policy::check_attributes;

/// A signature algorithm of spec §14, by its code in `tpack.sig.alg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// 1: Ed25519 (pure, RFC 8032) over the signed message. Every general-purpose verifier implements it.
    Ed25519,
    /// 2: ECDSA over NIST P-256 with SHA-256 of the signed message; the signature is `r ‖ s`, 32 bytes each,
    /// big-endian.
    EcdsaP256,
}

impl Algorithm {
    /// The code stored in `tpack.sig.alg`.
    #[must_use]
    pub const fn code(self) -> u64 {
        match self {
            Algorithm::Ed25519 => 1,
            Algorithm::EcdsaP256 => 2,
        }
    }

    /// The algorithm with code `code`, or `None` for a code this crate does not know.
    #[must_use]
    pub const fn from_code(code: u64) -> Option<Algorithm> {
        match code {
            1 => Some(Algorithm::Ed25519),
            2 => Some(Algorithm::EcdsaP256),
            _ => None,
        }
    }

    /// The name used in messages and on the command line: `ed25519`, `p256`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Ed25519 => "ed25519",
            Algorithm::EcdsaP256 => "p256",
        }
    }

    /// Length of a signature, in bytes.
    #[must_use]
    pub const fn signature_len(self) -> usize {
        64
    }

    /// Length of a raw public key, in bytes: 32 for Ed25519, 65 for P-256 (an uncompressed SEC1 point).
    #[must_use]
    pub const fn public_key_len(self) -> usize {
        match self {
            Algorithm::Ed25519 => 32,
            Algorithm::EcdsaP256 => 65,
        }
    }

    /// The DER bytes that precede a raw public key in its SubjectPublicKeyInfo: a key id is the SHA-256 of
    /// this prefix and the key, which is what `openssl pkey -pubin -outform DER | sha256sum` prints.
    #[must_use]
    pub const fn spki_prefix(self) -> &'static [u8] {
        match self {
            Algorithm::Ed25519 => &[0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00],
            Algorithm::EcdsaP256 => &[
                0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
                0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
            ],
        }
    }
}

impl core::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// An incremental SHA-256: software ([`Sha256Software`]) or a hardware hash engine.
pub trait Sha256 {
    /// Hashes `bytes` after what was hashed before.
    fn update(&mut self, bytes: &[u8]);
    /// The digest of everything hashed.
    fn finish(self) -> [u8; 32];
}

/// The cryptography a verifier uses: SHA-256 and the signature algorithms it implements.
pub trait Crypto {
    /// Its SHA-256.
    type Hasher: Sha256;

    /// A new, empty SHA-256.
    fn hasher(&self) -> Self::Hasher;

    /// Whether it can check signatures of `algorithm` (a container signed with another is refused, R60).
    fn supports(&self, algorithm: Algorithm) -> bool;

    /// Whether `signature` is a valid signature of `message` under `public_key` (raw, of
    /// [`Algorithm::public_key_len`] bytes). `false` for a key or signature that is malformed, and for an
    /// algorithm it does not support. An implementation MUST apply the checks spec §14 pins (Ed25519: `S < L`
    /// and a canonical `R`; P-256: `r` and `s` in `[1, n − 1]`).
    fn verify(&self, algorithm: Algorithm, public_key: &[u8], message: &[u8; 80], signature: &[u8]) -> bool;
}

/// The key id of a public key (spec §14): SHA-256 of its DER SubjectPublicKeyInfo.
pub fn key_id<C: Crypto>(crypto: &C, algorithm: Algorithm, public_key: &[u8]) -> [u8; 32] {
    let mut hasher = crypto.hasher();
    hasher.update(algorithm.spki_prefix());
    hasher.update(public_key);
    hasher.finish()
}
