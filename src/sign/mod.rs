//! Signing (feature `sign`, std): signing keys, signing while writing, and signing or unsigning an existing
//! container (spec §14).
//!
//! Keys are the PKCS#8 and SubjectPublicKeyInfo PEM files `openssl genpkey` and `openssl pkey -pubout` write,
//! Ed25519 or P-256. Signing is deterministic for both algorithms (Ed25519 by construction, ECDSA with RFC 6979
//! nonces), so the same content signed twice with the same key gives the same bytes.
//!
//! ```
//! use tpack::auth::{Policy, SoftwareCrypto};
//! use tpack::sign::{SignOptions, SigningKey};
//! use tpack::write::{Builder, NewEntry};
//! let key = SigningKey::generate(tpack::auth::Algorithm::Ed25519)?;
//! let mut builder = Builder::new();
//! builder.push(NewEntry::new("w", tpack::Dtype::U8, &[2], &[1, 2]))?;
//! builder.sign(&key, &SignOptions { counter: 7, ..SignOptions::default() })?;
//! let bytes = builder.finish()?;
//!
//! let container = tpack::Container::parse(&bytes)?;
//! let trusted = [key.public().trusted()];
//! let checked = container.authenticate(&Policy::require(&trusted), &SoftwareCrypto)?;
//! assert_eq!(checked.signer().unwrap().counter, 7);
//! checked.verify(&SoftwareCrypto)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod key;
mod recode;
pub(crate) mod state;

pub use key::{KeyError, PublicKey, SigningKey};
pub use recode::{sign_container, unsign_container, SignError};

use std::string::String;

/// What a signature declares besides the key: the signed attributes of spec §14.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignOptions {
    /// The security counter (`tpack.sig.counter`): devices refuse a container whose counter is below the
    /// floor they keep. Raise it for security-relevant releases only, not for every release.
    pub counter: u64,
    /// The model line (`tpack.sig.subject`), 1 to 255 bytes of UTF-8, if any.
    pub subject: Option<String>,
    /// Whether to carry the public key itself (`tpack.sig.pubkey`), for devices that keep only key ids.
    pub embed_public_key: bool,
}
