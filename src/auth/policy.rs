//! What a verifier trusts and expects, and the checks that need only a container's prefix (R58–R62).

use crate::error::Error;
use crate::format::DIGEST_LEN;

use super::{key_id, Algorithm, Crypto, SignedAttributes};

/// A key a verifier trusts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrustedKey<'k> {
    /// The key's id: SHA-256 of its DER SubjectPublicKeyInfo ([`crate::auth::key_id`]).
    pub key_id: [u8; DIGEST_LEN],
    /// The one algorithm this key verifies: a container that names the key with another is refused (R60).
    pub algorithm: Algorithm,
    /// The raw public key, or `None` for a device that keeps only key ids (in OTP, say): it then uses the
    /// public key the container carries (`tpack.sig.pubkey`), once that key hashes to this id.
    pub public_key: Option<&'k [u8]>,
    /// The subject every container signed by this key must declare, if any (R61).
    pub subject: Option<&'k str>,
}

impl<'k> TrustedKey<'k> {
    /// The trusted key `public_key` (raw: 32 bytes for Ed25519, 65 for P-256), its id computed with `crypto`.
    #[must_use]
    pub fn new<C: Crypto>(crypto: &C, algorithm: Algorithm, public_key: &'k [u8]) -> Self {
        TrustedKey {
            key_id: key_id(crypto, algorithm, public_key),
            algorithm,
            public_key: Some(public_key),
            subject: None,
        }
    }

    /// The same key, required to sign only containers that declare `subject`.
    #[must_use]
    pub fn with_subject(self, subject: &'k str) -> Self {
        TrustedKey { subject: Some(subject), ..self }
    }
}

/// What a verifier requires of a container.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Policy<'p> {
    /// The keys it trusts.
    pub keys: &'p [TrustedKey<'p>],
    /// Whether an unsigned container is refused (R58). A device that must run only its vendor's models sets
    /// it: the `SIGNED` flag proves nothing, since whoever strips a signature clears the flag too.
    pub require_signature: bool,
    /// The lowest security counter accepted (R62): the floor the device keeps in monotonic storage. A
    /// container whose counter equals it is accepted, so the same release can be installed again.
    pub min_counter: u64,
    /// The subject a container must declare, if any (R61).
    pub subject: Option<&'p str>,
}

impl<'p> Policy<'p> {
    /// A policy that requires a signature by one of `keys`, with no counter floor and no subject.
    #[must_use]
    pub fn require(keys: &'p [TrustedKey<'p>]) -> Self {
        Policy { keys, require_signature: true, min_counter: 0, subject: None }
    }
}

/// R59 to R62 for a container that declares `attributes`, in the spec's order: the key (and the carried
/// public key), the algorithm, the subject, the counter. Returns the algorithm and the public key to verify
/// with. (R58 is the caller's: it knows whether the container is signed at all.)
pub(crate) fn check_attributes<'x, C: Crypto>(
    attributes: &SignedAttributes<'x>,
    policy: &Policy<'x>,
    crypto: &C,
) -> Result<(Algorithm, &'x [u8]), Error> {
    let key = policy.keys.iter().find(|k| &k.key_id == attributes.key_id).ok_or(Error::UnknownKey)?;
    // A carried key must be the one the id names, whether or not the verifier needs it.
    if let Some(carried) = attributes.public_key {
        if key_id(crypto, key.algorithm, carried) != key.key_id {
            return Err(Error::UnknownKey);
        }
    }
    let public_key = key.public_key.or(attributes.public_key).ok_or(Error::UnknownKey)?;
    if attributes.algorithm() != Some(key.algorithm) || !crypto.supports(key.algorithm) {
        return Err(Error::AlgorithmMismatch { algorithm: attributes.algorithm_code });
    }
    for expected in [policy.subject, key.subject].into_iter().flatten() {
        if attributes.subject != Some(expected) {
            return Err(Error::SubjectMismatch);
        }
    }
    if attributes.counter < policy.min_counter {
        return Err(Error::Rollback { counter: attributes.counter });
    }
    Ok((key.algorithm, public_key))
}
