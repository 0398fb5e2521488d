//! The signed message `M` (spec §14): the domain, the SHA-256 of the prefix, the SHA-256 of the digests.

use crate::format::{DIGEST_LEN, SIGNATURE_DOMAIN, SIGNED_MESSAGE_LEN};
use crate::layout::slice;
use crate::Container;

use super::{Crypto, Sha256};

/// `M = DOMAIN ‖ prefix_digest ‖ digests_digest`.
pub(crate) fn message_from_digests(
    prefix_digest: &[u8; DIGEST_LEN],
    digests_digest: &[u8; DIGEST_LEN],
) -> [u8; SIGNED_MESSAGE_LEN] {
    let mut message = [0u8; SIGNED_MESSAGE_LEN];
    let (domain, rest) = message.split_at_mut(SIGNATURE_DOMAIN.len());
    let (prefix, digests) = rest.split_at_mut(DIGEST_LEN);
    domain.copy_from_slice(&SIGNATURE_DOMAIN);
    prefix.copy_from_slice(prefix_digest);
    digests.copy_from_slice(digests_digest);
    message
}

impl<'a> Container<'a> {
    /// The signature entry's digests and signature, split: `None` for an unsigned container.
    pub(crate) fn signature_parts(&self) -> Option<(&'a [u8], &'a [u8])> {
        self.signed_attributes()?;
        let last = self.entry(self.len().checked_sub(1)?)?;
        let digests = self.len().checked_sub(1)?.checked_mul(DIGEST_LEN)?;
        let payload = last.payload();
        (payload.len() >= digests).then(|| payload.split_at(digests))
    }

    /// The message the signature signs (spec §14): `"tpack signed v1\0" ‖ SHA-256(prefix) ‖ SHA-256(digests)`,
    /// where the prefix is every byte before the payload section and the digests are the signature entry's.
    /// `None` for an unsigned container. It hashes the prefix and the digests only, never a payload.
    pub fn signed_message<C: Crypto>(&self, crypto: &C) -> Option<[u8; SIGNED_MESSAGE_LEN]> {
        let (digests, _) = self.signature_parts()?;
        let [.., payloads, _] = &self.header().sections;
        let prefix = slice(self.as_bytes(), 0, payloads.offset.get())?;
        let mut hasher = crypto.hasher();
        hasher.update(prefix);
        let prefix_digest = hasher.finish();
        let mut hasher = crypto.hasher();
        hasher.update(digests);
        Some(message_from_digests(&prefix_digest, &hasher.finish()))
    }
}
