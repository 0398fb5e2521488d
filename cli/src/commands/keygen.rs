//! `tpack keygen`: a new signing key, as the PEM files `openssl genpkey` and `openssl pkey -pubout` write.

use std::path::{Path, PathBuf};

use tpack::auth::Algorithm;
use tpack::sign::SigningKey;

use crate::error::{CliError, Result};
use crate::fsutil::check_overwrite;
use crate::keys::algorithm_name;
use crate::output::write_file;

/// The public key's path: the private key's with `.pub` added (`release.pem` → `release.pem.pub`).
#[must_use]
pub(crate) fn public_path(private: &Path) -> PathBuf {
    let mut name = private.as_os_str().to_owned();
    name.push(".pub");
    PathBuf::from(name)
}

/// Runs `tpack keygen --algorithm ALG -o KEY.pem`: writes the PKCS#8 private key to `output` (owner-only,
/// `0600`) and the SPKI public key to `output.pub`, each atomically, and reports the key id (the SHA-256 of the
/// DER SPKI, in hex).
///
/// # Errors
/// [`crate::Kind::Io`]: either file exists and `force` is off (nothing is written then), or writing failed.
pub fn run(algorithm: Algorithm, output: &Path, force: bool) -> Result<String> {
    let public = public_path(output);
    check_overwrite(output, force)?;
    check_overwrite(&public, force)?;
    let key = SigningKey::generate(algorithm)
        .map_err(|e| CliError::input(format!("cannot make an {} key: {e}", algorithm_name(algorithm))))?;
    let private_pem = key.to_pem().map_err(|e| CliError::input(format!("cannot encode the key: {e}")))?;
    let public_pem =
        key.public().to_pem().map_err(|e| CliError::input(format!("cannot encode the key: {e}")))?;
    // The public key first: a failure then leaves no private key without its public half.
    write_file(&public, public_pem.as_bytes(), false)?;
    write_file(output, private_pem.as_bytes(), true)?;
    Ok(format!(
        "{} key id {}\nprivate key: {} (keep it secret)\npublic key:  {}\n",
        algorithm_name(algorithm),
        hex::encode(key.public().key_id()),
        output.display(),
        public.display()
    ))
}
