//! `tpack sign`: a container signed with a private key (core [`tpack::sign::sign_container`]), and on request
//! an OpenSSF model-signing bundle for the signed file ([`crate::oms`]).

use std::path::{Path, PathBuf};

use tpack::auth::Algorithm;

use crate::error::{CliError, Result};
use crate::formats::tpack::{check, open};
use crate::fsutil::check_overwrite;
use crate::keys::{algorithm_name, private_key, read_pem};
use crate::oms::{self, OmsKey};
use crate::output::write_file;
use crate::text::quoted;

/// Longest subject, in bytes (spec: 1..=255).
const MAX_SUBJECT: usize = 255;

/// What `tpack sign` does, from its flags.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The private key file (`--key`).
    pub key: PathBuf,
    /// The security counter (`--counter`).
    pub counter: u64,
    /// The subject (`--subject`).
    pub subject: Option<String>,
    /// Store the public key in the file (`--embed-public-key`).
    pub embed_public_key: bool,
    /// Where to write an OMS bundle (`--oms-bundle`).
    pub oms_bundle: Option<PathBuf>,
    /// The P-256 key of the OMS bundle when `key` is Ed25519 (`--oms-key`).
    pub oms_key: Option<PathBuf>,
    /// Replace existing outputs (`--force`).
    pub force: bool,
}

/// Runs `tpack sign IN -o OUT --key KEY …`: verifies IN completely, signs it (replacing a signature it has),
/// and writes OUT atomically; then the OMS bundle, if asked, likewise. Every refusal comes before anything
/// is written.
///
/// # Errors
/// [`crate::Kind::Invalid`]: IN is no valid, intact container; [`crate::Kind::Input`]: a key is unusable, the
/// subject is out of bounds, or the bundle needs a P-256 key it was not given; [`crate::Kind::Io`]: an output
/// exists without `force`, or reading or writing failed.
pub fn run(input: &Path, output: &Path, opts: &Options) -> Result<String> {
    check_overwrite(output, opts.force)?;
    if let Some(bundle) = &opts.oms_bundle {
        check_overwrite(bundle, opts.force)?;
    }
    if let Some(subject) = &opts.subject {
        if subject.is_empty() || subject.len() > MAX_SUBJECT {
            return Err(CliError::input(format!(
                "the subject must be 1 to {MAX_SUBJECT} bytes of UTF-8; {} is {} bytes",
                quoted(subject),
                subject.len()
            )));
        }
    }
    let key = private_key(&opts.key)?;
    let oms_key = match &opts.oms_bundle {
        Some(_) => Some(oms_key(&opts.key, key.algorithm(), opts.oms_key.as_deref())?),
        None => None,
    };

    let map = crate::fsutil::map(input)?;
    let container = open(input, &map)?;
    if let Some(p) = check(&container, &mut |_| {}).first() {
        return Err(CliError::invalid(format!(
            "{} is corrupt, so it is not signed: entry {} {}: {} (`tpack verify` lists every problem)",
            input.display(),
            p.entry,
            quoted(&p.name),
            p.what
        )));
    }
    let options = tpack::sign::SignOptions {
        counter: opts.counter,
        subject: opts.subject.clone(),
        embed_public_key: opts.embed_public_key,
    };
    let signed = tpack::sign::sign_container(&map, &key, &options)
        .map_err(|e| CliError::input(format!("cannot sign {}: {e}", input.display())))?;
    let bundle = match (&opts.oms_bundle, &oms_key) {
        (Some(path), Some(oms_key)) => {
            let name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let text = oms::bundle(&name, &signed, oms_key).map_err(CliError::input)?;
            Some((path, text, oms_key.hint().map_err(CliError::input)?))
        }
        _ => None,
    };

    write_file(output, &signed, false)?;
    let mut report = format!(
        "signed {} as {}: {} key id {}, counter {}, subject {}{}; {} entries, each with its SHA-256 digest\n",
        input.display(),
        output.display(),
        algorithm_name(key.algorithm()),
        hex::encode(key.public().key_id()),
        opts.counter,
        opts.subject.as_deref().map_or_else(|| "none".to_owned(), quoted),
        if opts.embed_public_key { ", public key embedded" } else { "" },
        container.len(),
    );
    if let Some((path, text, hint)) = bundle {
        write_file(path, &text, false)?;
        report.push_str(&format!(
            "OMS bundle {} (ECDSA P-256, key hint {hint}); check it with `model_signing verify key {} --signature {} \
             --public_key P256.pub.pem`\n",
            path.display(),
            output.display(),
            path.display()
        ));
    }
    Ok(report)
}

/// The key of the OMS bundle: `--oms-key` if given, else `--key` (`key_path`, of `algorithm`) when it is
/// P-256.
///
/// # Errors
/// [`crate::Kind::Input`]: `--key` is Ed25519 and no `--oms-key` is given, or the OMS key is no P-256 key;
/// [`crate::Kind::Io`]: a key file cannot be read.
fn oms_key(key_path: &Path, algorithm: Algorithm, oms_key: Option<&Path>) -> Result<OmsKey> {
    let path = match (oms_key, algorithm) {
        (Some(path), _) => path,
        (None, Algorithm::EcdsaP256) => key_path,
        (None, other) => {
            return Err(CliError::input(format!(
                "--oms-bundle needs an ECDSA P-256 key: OpenSSF model signing accepts no {0} key, and {1} is an {0} \
                 key; pass a P-256 key with --oms-key P256.pem (`tpack keygen --algorithm p256 -o P256.pem` makes one)",
                algorithm_name(other),
                key_path.display()
            )))
        }
    };
    let pem = read_pem(path)?;
    OmsKey::from_pkcs8_pem(&pem)
        .map_err(|why| CliError::input(format!("{} cannot sign the OMS bundle: {why}", path.display())))
}
