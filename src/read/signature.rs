//! The group *signature* (R54–R57, spec §12, §14): in a file of minor version ≥ 2, the `SIGNED` flag, the
//! signature entry and the signed attributes agree, and each has its pinned shape. Only the structure is checked
//! here; whether the signature is genuine is [`crate::auth`]'s question, asked with a key set and a policy.

use super::Container;
use crate::auth::Algorithm;
use crate::error::{Error, SignedAttribute};
use crate::format::{
    is_newer_minor, Dtype, MetaType, COMPAT_SIGNED, DIGEST_LEN, FLAG_HAS_TARGET, SIGNATURE_ALIGNMENT,
    SIGNATURE_ENTRY_NAME, SIGNATURE_KEY_PREFIX,
};
use crate::layout::len_u64;

/// The signed attributes' keys, in the order R56 checks them.
pub(crate) const KEY_ALGORITHM: &str = "tpack.sig.alg";
pub(crate) const KEY_KEY_ID: &str = "tpack.sig.key";
pub(crate) const KEY_COUNTER: &str = "tpack.sig.counter";
pub(crate) const KEY_SUBJECT: &str = "tpack.sig.subject";
pub(crate) const KEY_PUBLIC_KEY: &str = "tpack.sig.pubkey";
/// Longest signed subject, in bytes.
pub(crate) const MAX_SUBJECT_LEN: usize = 255;

/// R54, R55, R56, R57 for `container`, whose metadata the group *metadata* accepted.
pub(super) fn check(container: &Container<'_>) -> Result<(), Error> {
    let minor = container.header.version_minor.get();
    if minor < 2 {
        // Before 1.2 nothing is reserved: the dtype is undefined (R22) and the keys are plain metadata.
        return Ok(());
    }
    let flagged = container.compat_flags() & COMPAT_SIGNED != 0;
    let has_entry = container.entries().any(|e| e.dtype() == Dtype::SIGNATURE);
    let (has_keys, undefined) = reserved_keys(container);
    if flagged != has_entry || (has_keys && !flagged) {
        return Err(Error::SignedFlag);
    }
    let last = container.len().checked_sub(1);
    for entry in container.entries() {
        let is_signature = entry.dtype() == Dtype::SIGNATURE;
        let named = entry.name_bytes() == SIGNATURE_ENTRY_NAME.as_bytes();
        let misshapen = Some(entry.position()) != last
            || !named
            || entry.descriptor().flags & FLAG_HAS_TARGET != 0
            || entry.alignment() != SIGNATURE_ALIGNMENT;
        if named != is_signature || (is_signature && misshapen) {
            return Err(Error::SignatureEntry { entry: position_u32(entry.position()) });
        }
    }
    let Some(last) = last.and_then(|last| container.entry(last)).filter(|_| flagged) else {
        return Ok(());
    };
    let algorithm = attributes(container, minor, undefined)?;
    // R57: the digests of the other entries, then the signature.
    let digests = len_u64(last.position()).checked_mul(len_u64(DIGEST_LEN));
    let entry = position_u32(last.position());
    let fits = match (algorithm, digests) {
        (Some(algorithm), Some(digests)) => {
            let expected = digests.checked_add(len_u64(algorithm.signature_len()));
            (expected == Some(last.byte_len()), expected.unwrap_or(u64::MAX))
        }
        (None, Some(digests)) => (last.byte_len() > digests, digests),
        (_, None) => (false, u64::MAX),
    };
    match fits {
        (true, _) => Ok(()),
        (false, expected) => Err(Error::SignatureLength { entry, expected }),
    }
}

/// R56 for a flagged container: each signed attribute in turn, then the keys this version does not define.
/// Returns the algorithm, `None` for one of a newer minor.
/// Whether a metadata key starts with the reserved prefix `tpack.sig.`, and whether one of those is not an
/// attribute this version defines: one pass over the keys for both.
fn reserved_keys(container: &Container<'_>) -> (bool, bool) {
    let defined = [KEY_ALGORITHM, KEY_KEY_ID, KEY_COUNTER, KEY_SUBJECT, KEY_PUBLIC_KEY];
    let (mut reserved, mut undefined) = (false, false);
    for key in container.metadata.keys() {
        if key.starts_with(SIGNATURE_KEY_PREFIX.as_bytes()) {
            reserved = true;
            undefined |= !defined.iter().any(|d| d.as_bytes() == key);
        }
    }
    (reserved, undefined)
}

/// R56 for a flagged container: each signed attribute has its type and length; `undefined` is whether a
/// reserved key is not one of them ([`reserved_keys`]).
fn attributes(container: &Container<'_>, minor: u16, undefined: bool) -> Result<Option<Algorithm>, Error> {
    // Types and lengths only, read from the records (`typed_bytes`, `u64_value`): no value is decoded.
    let meta = container.metadata;
    let fault = |attribute| Error::SignatureMeta { attribute };
    let Some(code) = meta.u64_value(KEY_ALGORITHM) else {
        return Err(fault(SignedAttribute::Algorithm));
    };
    let algorithm = Algorithm::from_code(code);
    if algorithm.is_none() && !is_newer_minor(minor) {
        return Err(fault(SignedAttribute::Algorithm));
    }
    if !matches!(meta.typed_bytes(KEY_KEY_ID), Some((MetaType::BYTES, id)) if id.len() == DIGEST_LEN) {
        return Err(fault(SignedAttribute::KeyId));
    }
    if meta.u64_value(KEY_COUNTER).is_none() {
        return Err(fault(SignedAttribute::Counter));
    }
    // A string's bytes are its UTF-8 (validated, R49): their number is the string's length.
    match meta.typed_bytes(KEY_SUBJECT) {
        None => {}
        Some((MetaType::STRING, s)) if (1..=MAX_SUBJECT_LEN).contains(&s.len()) => {}
        Some(_) => return Err(fault(SignedAttribute::Subject)),
    }
    match (meta.typed_bytes(KEY_PUBLIC_KEY), algorithm) {
        (None, _) | (Some((MetaType::BYTES, _)), None) => {}
        (Some((MetaType::BYTES, key)), Some(algorithm)) if key.len() == algorithm.public_key_len() => {}
        (Some(_), _) => return Err(fault(SignedAttribute::PublicKey)),
    }
    if undefined && !is_newer_minor(minor) {
        return Err(fault(SignedAttribute::Unknown));
    }
    Ok(algorithm)
}

fn position_u32(position: usize) -> u32 {
    u32::try_from(position).unwrap_or(u32::MAX)
}
