//! What a writer keeps while it signs: the key, the digest of each entry so far, and the hash of the entry
//! being written.

use std::boxed::Box;
use std::vec::Vec;

use super::{SignOptions, SigningKey};
use crate::auth::{message_from_digests, Sha256, Sha256Software};
use crate::format::{DIGEST_LEN, SIGNED_MESSAGE_LEN};
use crate::meta_value::MetaValue;

/// A writer's signing state (boxed, so that a writer that does not sign pays one pointer).
pub(crate) struct Signing {
    key: SigningKey,
    digests: Vec<u8>,
    hasher: Sha256Software,
}

impl Signing {
    pub(crate) fn new(key: &SigningKey) -> Box<Self> {
        Box::new(Signing { key: key.clone(), digests: Vec::new(), hasher: Sha256Software::default() })
    }

    /// The signature entry's length after `entries` other entries: their digests and the signature.
    pub(crate) fn signature_len(&self, entries: usize) -> Option<u64> {
        let digests = u64::try_from(entries).ok()?.checked_mul(u64::try_from(DIGEST_LEN).ok()?)?;
        digests.checked_add(u64::try_from(self.key.algorithm().signature_len()).ok()?)
    }

    /// Payload bytes of the entry being written.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
    }

    /// The entry being written is complete.
    pub(crate) fn end_entry(&mut self) {
        let digest = core::mem::take(&mut self.hasher).finish();
        self.digests.extend_from_slice(&digest);
    }

    /// The signature entry's payload: the digests, then the signature over the message made from
    /// `prefix_digest` and them.
    pub(crate) fn signature_payload(&self, prefix_digest: &[u8; DIGEST_LEN]) -> Vec<u8> {
        let mut hasher = Sha256Software::default();
        hasher.update(&self.digests);
        let message: [u8; SIGNED_MESSAGE_LEN] = message_from_digests(prefix_digest, &hasher.finish());
        let mut payload = self.digests.clone();
        payload.extend_from_slice(&self.key.sign(&message));
        payload
    }
}

/// Calls `declare` with each signed attribute for `options` and `key`, as metadata, in key order.
pub(crate) fn declare_attributes<E>(
    key: &SigningKey,
    options: &SignOptions,
    mut declare: impl FnMut(&str, MetaValue<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let public = key.public();
    let id = public.key_id();
    declare("tpack.sig.alg", MetaValue::U64(public.algorithm().code()))?;
    declare("tpack.sig.counter", MetaValue::U64(options.counter))?;
    declare("tpack.sig.key", MetaValue::Bytes(&id))?;
    if options.embed_public_key {
        declare("tpack.sig.pubkey", MetaValue::Bytes(public.raw()))?;
    }
    if let Some(subject) = &options.subject {
        declare("tpack.sig.subject", MetaValue::String(subject))?;
    }
    Ok(())
}
