//! Who signed a container, as its signed attributes say (`tpack.sig.*`, spec §13 "signature"), in words and
//! as JSON, for `verify` and `inspect`. Nothing here checks the signature: `verify --key` does.

use serde_json::{json, Value};
use tpack::auth::{SignedAttributes, SoftwareCrypto};
use tpack::Container;

use crate::keys::algorithm_code_name;
use crate::text::quoted;

/// Who signed a container, as its signed attributes say (checked or not).
#[derive(Debug, Clone)]
pub(crate) struct Signer {
    /// `tpack.sig.alg`.
    pub(crate) algorithm: u64,
    /// `tpack.sig.key`.
    pub(crate) key_id: [u8; 32],
    /// `tpack.sig.counter`.
    pub(crate) counter: u64,
    /// `tpack.sig.subject`.
    pub(crate) subject: Option<String>,
    /// `tpack.sig.pubkey`, the raw public key, if present.
    pub(crate) public_key: Option<Vec<u8>>,
}

impl Signer {
    /// The signer of `c`, if it is signed.
    #[must_use]
    pub(crate) fn of(c: &Container<'_>) -> Option<Self> {
        c.signed_attributes().map(|a| Self::from_attributes(&a))
    }

    /// The signer the attributes `a` name.
    #[must_use]
    pub(crate) fn from_attributes(a: &SignedAttributes<'_>) -> Self {
        Self {
            algorithm: a.algorithm_code,
            key_id: *a.key_id,
            counter: a.counter,
            subject: a.subject.map(str::to_owned),
            public_key: a.public_key.map(<[u8]>::to_vec),
        }
    }

    /// `Ed25519 key <hex id>, counter 7, subject "acme.kws"`: the subject escaped, as every text from a file.
    #[must_use]
    pub(crate) fn words(&self) -> String {
        format!(
            "{} key {}, counter {}, subject {}",
            algorithm_code_name(self.algorithm),
            hex::encode(self.key_id),
            self.counter,
            self.subject.as_deref().map_or_else(|| "none".to_owned(), quoted)
        )
    }

    /// `Ed25519 key <hex id>, counter 7, subject "acme.kws", public key embedded`: [`Signer::words`] and
    /// whether the public key is in the file.
    #[must_use]
    pub(crate) fn words_with_public_key(&self) -> String {
        let embedded = if self.public_key.is_some() { ", public key embedded" } else { "" };
        format!("{}{embedded}", self.words())
    }

    /// The signer as `verify --json` shows it; `checked` and `authentic` say what was found.
    #[must_use]
    pub(crate) fn json(&self, checked: bool, authentic: bool) -> Value {
        json!({
            "checked": checked,
            "authentic": authentic,
            "algorithm": algorithm_code_name(self.algorithm),
            "key_id": hex::encode(self.key_id),
            "counter": self.counter,
            "subject": self.subject,
            "public_key_embedded": self.public_key.is_some(),
        })
    }
}

/// The `signature` object of `inspect --json` for the signed container `c`: spec §13's decoding (`algorithm`,
/// `key`, `counter`, `subject`, `public_key`, `message`) and the algorithm's name; `None` for an unsigned one.
#[must_use]
pub(crate) fn decoding(c: &Container<'_>) -> Option<Value> {
    let s = Signer::of(c)?;
    let message = c.signed_message(&SoftwareCrypto).map(hex::encode);
    Some(json!({
        "algorithm": s.algorithm,
        "algorithm_name": algorithm_code_name(s.algorithm),
        "key": hex::encode(s.key_id),
        "counter": s.counter,
        "subject": s.subject,
        "public_key": s.public_key.as_deref().map(hex::encode),
        "message": message,
    }))
}
