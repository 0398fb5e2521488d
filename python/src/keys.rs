//! Signing and verifying keys (spec §14) between PEM text and what the core takes: the core reads and
//! writes the PEM files; this module only names algorithms and hands raw keys and key ids to Python.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tpack::auth::{Algorithm, TrustedKey};
use tpack::sign::{KeyError, PublicKey, SignOptions, SigningKey};

/// The algorithms this build signs and verifies with, by the names the Python API uses (`Algorithm::name`).
const ALGORITHMS: [Algorithm; 2] = [Algorithm::Ed25519, Algorithm::EcdsaP256];

/// A trusted key as Python declares it: algorithm code, raw public key (or `None`: the key id only), key id,
/// subject.
pub type KeyDecl = (u64, Option<Vec<u8>>, Vec<u8>, Option<String>);

/// A signing request as Python declares it: private key PEM, counter, subject, whether to embed the public key.
pub type SignDecl = (String, u64, Option<String>, bool);

fn key_error(e: &KeyError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn algorithm_named(name: &str) -> PyResult<Algorithm> {
    ALGORITHMS.into_iter().find(|a| a.name() == name).ok_or_else(|| {
        PyValueError::new_err(format!("unknown signature algorithm {name:?}; known: \"ed25519\", \"p256\""))
    })
}

fn algorithm_coded(code: u64) -> PyResult<Algorithm> {
    Algorithm::from_code(code)
        .ok_or_else(|| PyValueError::new_err(format!("unknown signature algorithm code {code}")))
}

/// `(algorithm code, raw key, key id, SubjectPublicKeyInfo PEM)` of a public key.
type PublicInfo<'py> = (u64, Bound<'py, PyBytes>, Bound<'py, PyBytes>, String);

fn public_info<'py>(py: Python<'py>, key: &PublicKey) -> PyResult<PublicInfo<'py>> {
    Ok((
        key.algorithm().code(),
        PyBytes::new(py, key.raw()),
        PyBytes::new(py, &key.key_id()),
        key.to_pem().map_err(|e| key_error(&e))?,
    ))
}

/// A new private key of `algorithm` (`"ed25519"` or `"p256"`) as PKCS#8 PEM text.
#[pyfunction]
pub fn generate_key(algorithm: &str) -> PyResult<String> {
    let key = SigningKey::generate(algorithm_named(algorithm)?).map_err(|e| key_error(&e))?;
    let pem = key.to_pem().map_err(|e| key_error(&e))?;
    Ok(pem.as_str().to_owned())
}

/// The public key in `pem`: a SubjectPublicKeyInfo PEM, or the public half of a private key's PEM.
#[pyfunction]
pub fn public_key_from_pem<'py>(py: Python<'py>, pem: &str) -> PyResult<PublicInfo<'py>> {
    public_info(py, &PublicKey::from_pem(pem).map_err(|e| key_error(&e))?)
}

/// The public key of algorithm `code` whose raw bytes are `raw` (checked: a valid encoding, a point on the
/// curve).
#[pyfunction]
pub fn public_key_from_raw<'py>(py: Python<'py>, code: u64, raw: &[u8]) -> PyResult<PublicInfo<'py>> {
    public_info(py, &PublicKey::from_raw(algorithm_coded(code)?, raw).map_err(|e| key_error(&e))?)
}

/// The algorithm's name (`"ed25519"`, `"p256"`), or `None` for a code this build does not know.
#[pyfunction]
pub fn algorithm_name(code: u64) -> Option<&'static str> {
    Algorithm::from_code(code).map(Algorithm::name)
}

/// The signing key and options of `decl`.
///
/// # Errors
/// `ValueError` if the PEM is not an Ed25519 or P-256 private key.
pub fn signing(decl: SignDecl) -> PyResult<(SigningKey, SignOptions)> {
    let (pem, counter, subject, embed_public_key) = decl;
    let key = SigningKey::from_pem(&pem).map_err(|e| key_error(&e))?;
    Ok((key, SignOptions { counter, subject, embed_public_key }))
}

/// A trusted key declared from Python, owned, for a [`TrustedKey`] to borrow.
struct OwnedKey {
    algorithm: Algorithm,
    public_key: Option<Vec<u8>>,
    key_id: [u8; 32],
    subject: Option<String>,
}

/// Trusted keys declared from Python, owned, for a `tpack::auth::Policy` to borrow.
pub struct TrustedKeys {
    keys: Vec<OwnedKey>,
}

impl TrustedKeys {
    /// Checks every declaration: a known algorithm, a key id of 32 bytes. (A raw key's validity and its id are
    /// the core's business: a key that is not the one its id names never verifies a signature.)
    pub fn new(decls: Vec<KeyDecl>) -> PyResult<Self> {
        let keys = decls
            .into_iter()
            .map(|(code, public_key, key_id, subject)| {
                let key_id: [u8; 32] = key_id
                    .try_into()
                    .map_err(|_| PyValueError::new_err("a key id is 32 bytes (SHA-256 of the public key)"))?;
                Ok(OwnedKey { algorithm: algorithm_coded(code)?, public_key, key_id, subject })
            })
            .collect::<PyResult<_>>()?;
        Ok(Self { keys })
    }

    /// The keys as the core's trusted keys.
    pub fn trusted(&self) -> Vec<TrustedKey<'_>> {
        self.keys
            .iter()
            .map(|k| TrustedKey {
                key_id: k.key_id,
                algorithm: k.algorithm,
                public_key: k.public_key.as_deref(),
                subject: k.subject.as_deref(),
            })
            .collect()
    }
}
