//! Authenticating a container (R58–R63) and then its entries (R64), at once or one by one as they are used.

use crate::checksum::Crc32;
use crate::error::Error;
use crate::format::DIGEST_LEN;
use crate::read::{check_padding, verify_nested};
use crate::Container;

use super::{check_attributes, Crypto, Policy, Sha256, SignedAttributes};

/// A container whose signature has been checked against a [`Policy`] — or which is unsigned, and the policy
/// allows that ([`Authenticated::signer`] is then `None`).
///
/// The prefix and the digests are authenticated; each payload is authenticated when
/// [`Authenticated::verify_entry`] (or [`Authenticated::verify`]) has hashed it. Obtained from
/// [`Container::authenticate`].
#[derive(Clone, Copy, Debug)]
pub struct Authenticated<'a> {
    container: Container<'a>,
    signer: Option<SignedAttributes<'a>>,
    /// The signed digest of each entry but the last, in table order (empty when unsigned).
    digests: &'a [u8],
}

impl<'a> Container<'a> {
    /// Checks the container's signature against `policy`, in the spec's order: R58 (a signature is required
    /// and there is none), R59 (the key is not trusted, or the key the file carries is not the one it names),
    /// R60 (the algorithm is not the key's, or `crypto` does not implement it), R61 (the subject), R62 (the
    /// counter is below the floor), then R63 (the signature over the prefix and the entries' digests).
    ///
    /// It hashes the prefix and the digests, never a payload: each entry is authenticated afterwards, by
    /// [`Authenticated::verify_entry`] when it is first used or by [`Authenticated::verify`] for all of them.
    /// An unsigned container that the policy allows gives an [`Authenticated`] without a signer, whose entries
    /// are checked against their CRCs instead.
    ///
    /// The policy may borrow its keys for less long than the container's bytes: the result borrows only the
    /// container, so a binding can keep it as long as the container (rejected: `&Policy<'a>`, which made a
    /// long-lived container's keys live as long as its bytes).
    ///
    /// # Errors
    /// The first of [`Error::SignatureRequired`], [`Error::UnknownKey`], [`Error::AlgorithmMismatch`],
    /// [`Error::SubjectMismatch`], [`Error::Rollback`] and [`Error::BadSignature`] that applies.
    pub fn authenticate<C: Crypto>(
        &self,
        policy: &Policy<'_>,
        crypto: &C,
    ) -> Result<Authenticated<'a>, Error> {
        let Some(signer) = self.signed_attributes() else {
            if policy.require_signature {
                return Err(Error::SignatureRequired);
            }
            return Ok(Authenticated { container: *self, signer: None, digests: &[] });
        };
        let (algorithm, public_key) = check_attributes(&signer, policy, crypto)?;
        let (digests, signature) = self.signature_parts().ok_or(Error::BadSignature)?;
        let message = self.signed_message(crypto).ok_or(Error::BadSignature)?;
        if !crypto.verify(algorithm, public_key, &message, signature) {
            return Err(Error::BadSignature);
        }
        Ok(Authenticated { container: *self, signer: Some(signer), digests })
    }
}

impl<'a> Authenticated<'a> {
    /// The container.
    #[must_use]
    pub fn container(&self) -> Container<'a> {
        self.container
    }

    /// Who signed it (now authenticated), or `None` for an unsigned container the policy allowed. A device
    /// raises its counter floor to `counter` only after the new model has been committed and found working.
    #[must_use]
    pub fn signer(&self) -> Option<SignedAttributes<'a>> {
        self.signer
    }

    /// The signed digest of entry `index`, or `None` for the signature entry itself, past the last entry, or
    /// in an unsigned container.
    #[must_use]
    pub fn digest(&self, index: usize) -> Option<&'a [u8; DIGEST_LEN]> {
        let start = index.checked_mul(DIGEST_LEN)?;
        self.digests.get(start..start.checked_add(DIGEST_LEN)?)?.try_into().ok()
    }

    /// Checks entry `index` and returns its payload: in a signed container, that the payload hashes to its
    /// signed digest (R64); in an unsigned one, that it matches its CRC (R50). The signature entry is checked
    /// against its CRC. Entries are independent: a caller may check them in any order, or on several threads.
    ///
    /// # Errors
    /// [`Error::EntryDigest`] or [`Error::EntryChecksum`]; [`Error::EntryDigest`] too for an `index` past the
    /// last entry.
    pub fn verify_entry<C: Crypto>(&self, index: usize, crypto: &C) -> Result<&'a [u8], Error> {
        let position = u32::try_from(index).unwrap_or(u32::MAX);
        let entry = self.container.entry(index).ok_or(Error::EntryDigest { entry: position })?;
        match (self.signer, self.digest(index)) {
            (Some(_), Some(digest)) => {
                let mut hasher = crypto.hasher();
                hasher.update(entry.payload());
                if &hasher.finish() != digest {
                    return Err(Error::EntryDigest { entry: position });
                }
            }
            _ => entry.verify()?,
        }
        Ok(entry.payload())
    }

    /// The whole payload-integrity group with authentication, entry by entry in table order: the padding
    /// before the entry is zero (R37), its payload matches its signed digest (R64, in a signed container) and
    /// its CRC (R50), and a nested container's payloads verify (its own signature, if any, is not checked: that
    /// takes its own policy, [`Container::authenticate`] on [`crate::Entry::nested`]).
    ///
    /// A signed entry's payload is read once: its SHA-256 and its CRC are computed together, piece by piece
    /// (16 KiB at a time), and compared in the spec's order, R64 first.
    ///
    /// # Errors
    /// The first of [`Error::PaddingNonZero`], [`Error::EntryDigest`] and [`Error::EntryChecksum`] (or a nested
    /// container's own R37 or R50, placed by its [`Nesting`](crate::Nesting)) in that order.
    pub fn verify<C: Crypto>(&self, crypto: &C) -> Result<(), Error> {
        let [.., payloads, _] = &self.container.header().sections;
        let mut cursor = payloads.offset.get();
        for entry in self.container.entries() {
            check_padding(self.container.as_bytes(), cursor, entry.offset())?;
            match self.digest(entry.position()) {
                Some(digest) => {
                    let (computed_digest, computed_crc) = digest_and_crc(entry.payload(), crypto);
                    if &computed_digest != digest {
                        let entry = u32::try_from(entry.position()).unwrap_or(u32::MAX);
                        return Err(Error::EntryDigest { entry });
                    }
                    entry.check_checksum(computed_crc)?;
                }
                None => entry.verify()?,
            }
            verify_nested(&entry)?;
            cursor = entry.range().end;
        }
        Ok(())
    }
}

/// How many bytes of a payload [`Authenticated::verify`] hashes and then checksums at a time: few enough that
/// the CRC reads them from the L1 cache the hash has just filled, so the payload crosses the memory bus once
/// (a whole-payload pass each made verifying a 1 GiB entry a quarter slower than hashing it alone).
const PIECE: usize = 16 * 1024;

/// The SHA-256 and the CRC-32 of `payload`, in one pass.
fn digest_and_crc<C: Crypto>(payload: &[u8], crypto: &C) -> ([u8; DIGEST_LEN], u32) {
    let mut hasher = crypto.hasher();
    let mut crc = Crc32::new();
    for piece in payload.chunks(PIECE) {
        hasher.update(piece);
        crc.update(piece);
    }
    (hasher.finish(), crc.finish())
}
