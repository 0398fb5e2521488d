//! [`SignedDecoder`]: a push decoder that also authenticates the stream against a [`Policy`] (spec §11.3,
//! §14) — refusing a wrong key, algorithm, subject or a rolled-back counter from the prefix alone, before it
//! releases a single payload byte, and giving the authenticated verdict at the end.

use core::fmt;

use super::{DecodeError, Decoder, Event};
use crate::auth::{check_attributes, message_from_digests, Algorithm, Crypto, Policy, Sha256};
use crate::error::Error;
use crate::format::DIGEST_LEN;
use crate::layout::len_u64;

/// Longest public key kept between the prefix and the signature (a P-256 point).
const MAX_PUBLIC_KEY: usize = 65;
/// Longest signature kept (both algorithms of format 1.2).
const MAX_SIGNATURE: usize = 64;

/// Who signed a stream that [`SignedDecoder::finish`] authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Signer {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The key's id (SHA-256 of its DER SubjectPublicKeyInfo).
    pub key_id: [u8; DIGEST_LEN],
    /// The signed security counter: raise the device's floor to it only once the new model is committed and
    /// found working.
    pub counter: u64,
}

/// The proof that [`SignedDecoder::finish`] accepted a stream: what [`super::Placer::commit`] asks for, so that
/// staged bytes cannot be committed before the verdict (it has no public constructor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Authentic {
    signer: Option<Signer>,
}

impl Authentic {
    /// Who signed the stream, or `None` for an unsigned stream the policy allowed.
    #[must_use]
    pub fn signer(&self) -> Option<Signer> {
        self.signer
    }
}

/// What the prefix decided.
// The hashing state is the large variant, and it is kept inline on purpose: no allocator on a microcontroller.
#[allow(clippy::large_enum_variant)]
enum Stage<H> {
    /// The prefix has not come yet.
    Waiting,
    /// Unsigned, and the policy allows it: nothing to authenticate.
    Unsigned,
    /// Refused from the prefix (R58–R62), or the digest buffer is too small: no event is released any more.
    Refused(DecodeError),
    /// Signed and acceptable so far: the entries are being hashed.
    Hashing(Signed<H>),
}

struct Signed<H> {
    algorithm: Algorithm,
    key_id: [u8; DIGEST_LEN],
    counter: u64,
    public_key: [u8; MAX_PUBLIC_KEY],
    public_key_len: usize,
    prefix_digest: [u8; DIGEST_LEN],
    /// Entries other than the signature entry.
    entries: u32,
    /// The hash of the payload of the entry being received.
    entry: Option<H>,
    /// The hash of the signature entry's digests as they arrive.
    digests: Option<H>,
    signature: [u8; MAX_SIGNATURE],
    signature_len: usize,
    /// The first entry whose stored digest differs from the one computed (R64).
    mismatch: Option<u32>,
    /// The signature's verdict, once the signature entry has ended (R63).
    verified: Option<bool>,
}

/// A [`Decoder`] that authenticates the container it decodes against a [`Policy`] (spec §14).
///
/// It gives the decoder's events, with one difference: a container that the policy refuses from its prefix
/// alone — unsigned though a signature is required (R58), an untrusted key (R59), another algorithm (R60),
/// another subject (R61), a counter below the floor (R62) — releases **no event at all** after the prefix, so
/// that a device erases and writes nothing for it; [`SignedDecoder::is_doomed`] says so at once, and
/// [`SignedDecoder::finish`] names the rule. Otherwise each entry's payload is hashed as it passes, and the
/// signature (R63) and the digests (R64) are checked when the signature entry, the last, has arrived.
///
/// Until [`SignedDecoder::finish`] accepts the stream, released bytes are **not authentic**: place them in a
/// staging area, and commit (swap a slot, mark an image, run code) only after it — as MCUboot does.
///
/// Memory: the decoder's buffer, plus `digests`, 32 bytes for each entry (`32 × entry_count` is always
/// enough), plus one SHA-256 state inline. Unlike [`Decoder`], its hashing state cannot be saved and
/// resumed: an interrupted signed transfer starts again.
pub struct SignedDecoder<'b, 'p, 'd, C: Crypto> {
    decoder: Decoder<'b>,
    policy: Policy<'p>,
    crypto: C,
    digests: &'d mut [u8],
    stage: Stage<C::Hasher>,
}

impl<C: Crypto> fmt::Debug for SignedDecoder<'_, '_, '_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignedDecoder").field("decoder", &self.decoder).finish_non_exhaustive()
    }
}

impl<'b, 'p, 'd, C: Crypto> SignedDecoder<'b, 'p, 'd, C> {
    /// A decoder keeping its state in `buffer` (as [`Decoder::new`]) and the entries' digests in `digests`,
    /// checking the stream against `policy` with `crypto`.
    pub fn new(buffer: &'b mut [u8], digests: &'d mut [u8], policy: Policy<'p>, crypto: C) -> Self {
        SignedDecoder { decoder: Decoder::new(buffer), policy, crypto, digests, stage: Stage::Waiting }
    }

    /// The decoder underneath: its prefix, trailer and position (for a [`super::Placer`], say).
    #[must_use]
    pub fn decoder(&self) -> &Decoder<'b> {
        &self.decoder
    }

    /// Moves the decoder to a larger buffer, as [`Decoder::grow`]: after [`DecodeError::BufferTooSmall`]
    /// from [`SignedDecoder::decode`], or once [`Decoder::stream_buffer_needed`] (through
    /// [`SignedDecoder::decoder`]) has told the stream's need. The hashing state and `digests` stay.
    ///
    /// # Errors
    /// As [`Decoder::grow`].
    pub fn grow(&mut self, buffer: &'b mut [u8]) -> Result<&'b mut [u8], DecodeError> {
        self.decoder.grow(buffer)
    }

    /// Gives the decoder `buffer` in place of its own without copying, as [`Decoder::replace_buffer`].
    pub fn replace_buffer(&mut self, buffer: &'b mut [u8]) -> &'b mut [u8] {
        self.decoder.replace_buffer(buffer)
    }

    /// Whether the stream is already known to be refused, by the policy or by a rule: it can be abandoned.
    #[must_use]
    pub fn is_doomed(&self) -> bool {
        matches!(self.stage, Stage::Refused(_)) || self.decoder.is_doomed()
    }

    /// As [`Decoder::decode`], authenticating as it goes; after a refusal from the prefix it consumes the
    /// input and gives no event.
    ///
    /// # Errors
    /// As [`Decoder::decode`]: after [`DecodeError::BufferTooSmall`], `input` was consumed up to the
    /// decoder's position (`self.decoder().position()`), every event before it authenticated; grow the buffer
    /// ([`SignedDecoder::grow`]) and feed the stream from that position on.
    pub fn decode<'a>(&mut self, input: &'a [u8]) -> Result<(usize, Option<Event<'a>>), DecodeError> {
        let mut used = 0usize;
        loop {
            let (n, event) = self.decoder.decode(input.get(used..).unwrap_or(&[]))?;
            used = used.saturating_add(n);
            let Some(event) = event else { return Ok((used, None)) };
            match event {
                Event::Prefix => self.on_prefix(),
                Event::Payload { entry, bytes, offset, .. } => self.on_payload(entry, offset, bytes),
                Event::EntryEnd { entry } => self.on_entry_end(entry),
                Event::End => {}
            }
            // After a refusal, events are consumed here and never released.
            if !matches!(self.stage, Stage::Refused(_)) {
                return Ok((used, Some(event)));
            }
        }
    }

    /// Ends the stream and gives the authenticated verdict, in the spec's order: the structural rules, then
    /// R58–R63, then entry by entry R37, R64 and R50. The [`Authentic`] names the signer of a stream whose
    /// signature and digests verified, and none for an unsigned stream the policy allows.
    ///
    /// # Errors
    /// The first broken rule, as [`DecodeError::Invalid`]; [`DecodeError::BufferTooSmall`] when `digests`
    /// cannot hold the entries' digests.
    pub fn finish(&mut self) -> Result<Authentic, DecodeError> {
        let verdict = self.decoder.finish_parts()?;
        verdict.structural?;
        let integrity = verdict.integrity;
        let signer = match &self.stage {
            Stage::Waiting => return Err(DecodeError::Invalid(Error::Truncated { declared: 0 })),
            Stage::Refused(e) => return Err(*e),
            Stage::Unsigned => None,
            Stage::Hashing(signed) => {
                if signed.verified != Some(true) {
                    return Err(Error::BadSignature.into());
                }
                Some((
                    Signer { algorithm: signed.algorithm, key_id: signed.key_id, counter: signed.counter },
                    signed.mismatch,
                ))
            }
        };
        let Some((signer, mismatch)) = signer else {
            integrity?;
            return Ok(Authentic { signer: None });
        };
        // R37, R64 and R50 go entry by entry, in that order for each entry.
        match (integrity, mismatch) {
            (Err(e), Some(entry)) if self.integrity_place(&e).is_some_and(|at| at < (entry, 1)) => {
                Err(e.into())
            }
            (_, Some(entry)) => Err(Error::EntryDigest { entry }.into()),
            (Err(e), None) => Err(e.into()),
            (Ok(()), None) => Ok(Authentic { signer: Some(signer) }),
        }
    }

    /// Where an integrity error is in the order of the payload-integrity group: its entry, then 0 for R37 (the
    /// padding before the entry) or 2 for R50 (after R64, which is 1).
    fn integrity_place(&self, error: &Error) -> Option<(u32, u8)> {
        match *error {
            Error::EntryChecksum { entry, .. } => Some((entry, 2)),
            Error::PaddingNonZero { offset } => {
                // After `finish`: `Decoder::prefix` is gone with the verdict, the kept prefix is not.
                let prefix = self.decoder.prefix_kept()?;
                let before = prefix.entries().find(|e| e.range().start > offset)?;
                Some((u32::try_from(before.position()).ok()?, 0))
            }
            _ => None,
        }
    }

    /// R58–R62 from the prefix, and the prefix's digest.
    fn on_prefix(&mut self) {
        let Some(prefix) = self.decoder.prefix() else { return };
        let Some(attributes) = prefix.signed_attributes() else {
            self.stage = if self.policy.require_signature {
                Stage::Refused(Error::SignatureRequired.into())
            } else {
                Stage::Unsigned
            };
            return;
        };
        let entries = prefix.len().saturating_sub(1);
        let needed = len_u64(entries).saturating_mul(len_u64(DIGEST_LEN));
        if len_u64(self.digests.len()) < needed {
            self.stage = Stage::Refused(DecodeError::BufferTooSmall { needed });
            return;
        }
        let (algorithm, public_key) = match check_attributes(&attributes, &self.policy, &self.crypto) {
            Ok(checked) => checked,
            Err(e) => {
                self.stage = Stage::Refused(e.into());
                return;
            }
        };
        let mut key = [0u8; MAX_PUBLIC_KEY];
        let Some(dest) = key.get_mut(..public_key.len()) else {
            self.stage = Stage::Refused(Error::UnknownKey.into());
            return;
        };
        dest.copy_from_slice(public_key);
        let mut hasher = self.crypto.hasher();
        hasher.update(prefix.as_bytes());
        self.stage = Stage::Hashing(Signed {
            algorithm,
            key_id: *attributes.key_id,
            counter: attributes.counter,
            public_key: key,
            public_key_len: public_key.len(),
            prefix_digest: hasher.finish(),
            entries: u32::try_from(entries).unwrap_or(u32::MAX),
            entry: None,
            digests: None,
            signature: [0; MAX_SIGNATURE],
            signature_len: 0,
            mismatch: None,
            verified: None,
        });
    }

    fn on_payload(&mut self, entry: u32, offset: u64, bytes: &[u8]) {
        let Stage::Hashing(signed) = &mut self.stage else { return };
        if entry < signed.entries {
            signed.entry.get_or_insert_with(|| self.crypto.hasher()).update(bytes);
            return;
        }
        // The signature entry: its digests, then the signature.
        let digests_len = len_u64(DIGEST_LEN).saturating_mul(u64::from(signed.entries));
        let (digests, signature) = bytes.split_at(
            usize::try_from(digests_len.saturating_sub(offset)).unwrap_or(usize::MAX).min(bytes.len()),
        );
        if !digests.is_empty() {
            signed.digests.get_or_insert_with(|| self.crypto.hasher()).update(digests);
            // Compare with the computed digests, byte by byte from `offset`, and note the first entry that differs.
            let start = usize::try_from(offset).unwrap_or(usize::MAX);
            for (i, stored) in digests.iter().enumerate() {
                let at = start.saturating_add(i);
                if self.digests.get(at) != Some(stored) && signed.mismatch.is_none() {
                    signed.mismatch = u32::try_from(at / DIGEST_LEN).ok();
                }
            }
        }
        let room = MAX_SIGNATURE.saturating_sub(signed.signature_len);
        let (kept, excess) = signature.split_at(room.min(signature.len()));
        if let Some(dest) =
            signed.signature.get_mut(signed.signature_len..signed.signature_len.saturating_add(kept.len()))
        {
            dest.copy_from_slice(kept);
            signed.signature_len = signed.signature_len.saturating_add(kept.len());
        }
        if !excess.is_empty() {
            // Longer than any signature this crate verifies: R57 refused it already for a known algorithm.
            signed.verified = Some(false);
        }
    }

    fn on_entry_end(&mut self, entry: u32) {
        let Stage::Hashing(signed) = &mut self.stage else { return };
        if entry < signed.entries {
            let digest = signed.entry.take().unwrap_or_else(|| self.crypto.hasher()).finish();
            let at = usize::try_from(entry).unwrap_or(usize::MAX).saturating_mul(DIGEST_LEN);
            if let Some(dest) = self.digests.get_mut(at..at.saturating_add(DIGEST_LEN)) {
                dest.copy_from_slice(&digest);
            }
            return;
        }
        let digests = signed.digests.take().unwrap_or_else(|| self.crypto.hasher()).finish();
        let message = message_from_digests(&signed.prefix_digest, &digests);
        let key = signed.public_key.get(..signed.public_key_len).unwrap_or(&[]);
        let signature = signed.signature.get(..signed.signature_len).unwrap_or(&[]);
        let valid =
            signed.verified != Some(false) && self.crypto.verify(signed.algorithm, key, &message, signature);
        signed.verified = Some(valid);
    }
}
