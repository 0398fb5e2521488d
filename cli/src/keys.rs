//! Key files: PKCS#8 private keys and SPKI public keys in PEM, as `openssl genpkey` and
//! `openssl pkey -pubout` write them, read with errors that say what the file is and what to pass instead.

use std::path::{Path, PathBuf};

use tpack::auth::Algorithm;
use tpack::sign::SigningKey;

use crate::error::{CliError, Result};

/// The algorithm's name in messages: `Ed25519`, `ECDSA P-256`.
#[must_use]
pub(crate) fn algorithm_name(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::Ed25519 => "Ed25519",
        Algorithm::EcdsaP256 => "ECDSA P-256",
        _ => "an algorithm this tool does not know",
    }
}

/// The name of the algorithm with code `code`, or `algorithm N` for one this tool does not know.
#[must_use]
pub(crate) fn algorithm_code_name(code: u64) -> String {
    Algorithm::from_code(code).map_or_else(|| format!("algorithm {code}"), |a| algorithm_name(a).to_owned())
}

/// The PEM label of a private key, which marks a file given where a public key is wanted.
const PRIVATE_LABELS: [&str; 3] = ["PRIVATE KEY-----", "EC PRIVATE KEY-----", "ENCRYPTED PRIVATE KEY-----"];

/// The largest key file read: a PEM key is a few hundred bytes, so anything larger is not one (and a huge
/// file given by mistake is not read into memory).
pub(crate) const MAX_KEY_FILE: u64 = 64 * 1024;

/// Reads the text of the key file `path`, at most [`MAX_KEY_FILE`] bytes.
///
/// # Errors
/// [`crate::Kind::Io`] when it cannot be read; [`crate::Kind::Input`] when it is larger or not text.
pub(crate) fn read_pem(path: &Path) -> Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| CliError::io("cannot read", path, &e))?;
    let mut bytes = Vec::new();
    file.take(MAX_KEY_FILE + 1).read_to_end(&mut bytes).map_err(|e| CliError::io("cannot read", path, &e))?;
    if bytes.len() as u64 > MAX_KEY_FILE {
        return Err(CliError::input(format!(
            "{} is not a PEM key file: it is larger than {} KiB, and a key is a few hundred bytes",
            path.display(),
            MAX_KEY_FILE / 1024
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| CliError::input(format!("{} is not a PEM key file (it is not text)", path.display())))
}

/// Reads the private key in `path`.
///
/// # Errors
/// [`crate::Kind::Io`] when it cannot be read; [`crate::Kind::Input`] when it is no unencrypted PKCS#8
/// Ed25519 or P-256 private key (or SEC1 P-256 key), with what it is instead when that can be told.
pub(crate) fn private_key(path: &Path) -> Result<SigningKey> {
    let pem = read_pem(path)?;
    SigningKey::from_pem(&pem).map_err(|_| {
        let what = if pem.contains("-----BEGIN PUBLIC KEY-----") {
            "it is a public key; sign with the private key it was made from"
        } else if pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            "it is encrypted; decrypt it first (`openssl pkey -in KEY -out PLAIN.pem`)"
        } else {
            "tpack signs with PKCS#8 PEM keys of Ed25519 or ECDSA P-256, as `tpack keygen` or `openssl genpkey` \
             writes them"
        };
        CliError::input(format!("{} is not a private key tpack can sign with: {what}", path.display()))
    })
}

/// A trusted public key read from a file.
#[derive(Debug, Clone)]
pub(crate) struct PublicKey {
    /// The file it came from, for messages.
    pub(crate) path: PathBuf,
    /// The key.
    pub(crate) key: tpack::sign::PublicKey,
}

/// Reads the public key in `path`.
///
/// # Errors
/// [`crate::Kind::Io`] when it cannot be read; [`crate::Kind::Input`] when it is no SPKI PEM public key of
/// Ed25519 or P-256, saying how to get one from a private key.
pub(crate) fn public_key(path: &Path) -> Result<PublicKey> {
    let pem = read_pem(path)?;
    let private = PRIVATE_LABELS.iter().any(|l| pem.contains(&format!("-----BEGIN {l}")));
    match tpack::sign::PublicKey::from_pem(&pem) {
        // A private key PEM reads as its public half too; a verifier is given public keys only, so that no
        // private key is copied where it is not needed.
        Ok(key) if !private => Ok(PublicKey { path: path.to_path_buf(), key }),
        _ => {
            let what = if private {
                "it is a private key; pass its public key (`KEY.pem.pub` from `tpack keygen`, or \
                 `openssl pkey -in KEY.pem -pubout`)"
            } else if pem.contains("-----BEGIN PUBLIC KEY-----") {
                "it is a public key of another algorithm; tpack verifies Ed25519 and ECDSA P-256 signatures"
            } else {
                "tpack reads SPKI PEM public keys (`-----BEGIN PUBLIC KEY-----`), as `tpack keygen` or `openssl pkey \
                 -pubout` writes them"
            };
            Err(CliError::input(format!(
                "{} is not a public key tpack can verify with: {what}",
                path.display()
            )))
        }
    }
}
