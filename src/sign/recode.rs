//! Signing and unsigning a container that already exists: it is written again, entry by entry, with the
//! signature added or taken away. Payload bytes do not change; their offsets may.

use std::convert::Infallible;
use std::fmt;
use std::vec::Vec;

use super::{SignOptions, SigningKey};
use crate::error::Error;
use crate::format::{Dtype, COMPAT_SIGNED, SIGNATURE_KEY_PREFIX};
use crate::write::{EntryDecl, StreamWriter, VecBookkeeping, WriteError};
use crate::Container;

/// Why a container could not be signed or unsigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignError {
    /// The input is not a valid container: the rule it breaks (structure, or its payload checksums).
    Invalid(Error),
    /// The output could not be written: a rule it would break (a subject of the wrong length, say).
    Write(WriteError<Infallible>),
}

impl fmt::Display for SignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignError::Invalid(e) => write!(f, "the input is not a valid container: {e}"),
            SignError::Write(e) => write!(f, "the signed container could not be written: {e}"),
        }
    }
}

impl std::error::Error for SignError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SignError::Invalid(e) => Some(e),
            SignError::Write(e) => Some(e),
        }
    }
}

/// Signs the container `input` with `key`: its entries (in order, with their names, dtypes, shapes,
/// alignments, targets and payloads), its metadata and its compatible flags, written again in canonical form
/// with the signature of spec §14 added. A signed input has its old signature replaced. The input is validated
/// whole first (payload checksums included), so a damaged file is never signed.
///
/// # Errors
/// [`SignError::Invalid`] for an invalid input; [`SignError::Write`] for options the format refuses.
pub fn sign_container(input: &[u8], key: &SigningKey, options: &SignOptions) -> Result<Vec<u8>, SignError> {
    recode(input, Some((key, options)))
}

/// The container `input` without its signature: its entries, metadata and flags written again in canonical
/// form, without the signature entry, the signed attributes and the `SIGNED` flag. For an input that
/// [`sign_container`] made from a canonical container, this gives that container back byte for byte.
///
/// # Errors
/// [`SignError::Invalid`] for an invalid input.
pub fn unsign_container(input: &[u8]) -> Result<Vec<u8>, SignError> {
    recode(input, None)
}

fn recode(input: &[u8], signing: Option<(&SigningKey, &SignOptions)>) -> Result<Vec<u8>, SignError> {
    let container = Container::parse(input).map_err(SignError::Invalid)?;
    container.verify().map_err(SignError::Invalid)?;
    let signed = container.signed_attributes().is_some();
    let kept = || container.entries().filter(move |e| !(signed && e.dtype() == Dtype::SIGNATURE));
    let mut writer = StreamWriter::new(Vec::new(), VecBookkeeping);
    let write = SignError::Write;
    writer.set_compat_flags(container.compat_flags() & !COMPAT_SIGNED);
    for entry in kept() {
        let shape = entry.shape();
        let mut decl =
            EntryDecl::new(entry.name(), entry.dtype(), shape.dims()).with_alignment(entry.alignment());
        if let Some(target) = entry.target() {
            decl = decl.with_target(target);
        }
        writer.declare(decl).map_err(write)?;
    }
    for (key, value) in container.metadata() {
        if !(signed && key.starts_with(SIGNATURE_KEY_PREFIX)) {
            writer.metadata(key, value).map_err(write)?;
        }
    }
    if let Some((key, options)) = signing {
        writer.sign(key, options).map_err(write)?;
    }
    for entry in kept() {
        writer.write_entry(entry.payload()).map_err(write)?;
    }
    writer.finish().map_err(write)
}
