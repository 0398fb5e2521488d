//! The signed attributes a container's prefix declares (spec §14), read from metadata that the reader has
//! already checked (R56).

use crate::format::{COMPAT_SIGNED, DIGEST_LEN};
use crate::meta_value::MetaValue;
use crate::read::{KEY_ALGORITHM, KEY_COUNTER, KEY_KEY_ID, KEY_PUBLIC_KEY, KEY_SUBJECT};
use crate::{Container, Metadata};

use super::Algorithm;

/// What a signed container says about its signature: the algorithm, the key, the security counter and the
/// subject, from its prefix.
///
/// **Not yet trusted**: these are the file's claims. They are authenticated only once
/// [`Container::authenticate`] has checked the signature over them; before that they serve only to refuse early
/// (a push decoder refuses a wrong key or a rolled-back counter before it writes anything).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignedAttributes<'a> {
    /// The algorithm's code (`tpack.sig.alg`); [`SignedAttributes::algorithm`] names it.
    pub algorithm_code: u64,
    /// The signing key's id (`tpack.sig.key`): SHA-256 of its DER SubjectPublicKeyInfo.
    pub key_id: &'a [u8; DIGEST_LEN],
    /// The security counter (`tpack.sig.counter`).
    pub counter: u64,
    /// The model line (`tpack.sig.subject`), if the signer named one.
    pub subject: Option<&'a str>,
    /// The raw public key (`tpack.sig.pubkey`), if the file carries it.
    pub public_key: Option<&'a [u8]>,
}

impl<'a> SignedAttributes<'a> {
    /// The algorithm, or `None` for a code this crate does not know (a file of a newer minor version).
    #[must_use]
    pub fn algorithm(&self) -> Option<Algorithm> {
        Algorithm::from_code(self.algorithm_code)
    }

    /// The attributes of a container of minor version ≥ 2 that declares itself signed, from metadata that R56
    /// accepted; `None` for an unsigned container (or a file before 1.2, where the keys mean nothing).
    pub(crate) fn of(minor: u16, compat_flags: u64, metadata: Metadata<'a>) -> Option<Self> {
        if minor < 2 || compat_flags & COMPAT_SIGNED == 0 {
            return None;
        }
        let Some(MetaValue::U64(algorithm_code)) = metadata.get(KEY_ALGORITHM) else { return None };
        let Some(MetaValue::Bytes(key_id)) = metadata.get(KEY_KEY_ID) else { return None };
        let Some(MetaValue::U64(counter)) = metadata.get(KEY_COUNTER) else { return None };
        let subject = match metadata.get(KEY_SUBJECT) {
            Some(MetaValue::String(s)) => Some(s),
            _ => None,
        };
        let public_key = match metadata.get(KEY_PUBLIC_KEY) {
            Some(MetaValue::Bytes(k)) => Some(k),
            _ => None,
        };
        Some(SignedAttributes {
            algorithm_code,
            key_id: key_id.try_into().ok()?,
            counter,
            subject,
            public_key,
        })
    }
}

impl<'a> Container<'a> {
    /// The signed attributes, or `None` for a container that is not signed. They are claims until
    /// [`Container::authenticate`] has checked them.
    #[must_use]
    pub fn signed_attributes(&self) -> Option<SignedAttributes<'a>> {
        let (_, minor) = self.version();
        SignedAttributes::of(minor, self.compat_flags(), self.metadata())
    }
}
