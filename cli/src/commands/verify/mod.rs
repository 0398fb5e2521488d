//! `tpack verify`: full structural and checksum verification of one or more files, naming every corrupt
//! entry; with `--key`, the signature checks too (`signed`).

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{CliError, Kind, Result};
use crate::formats::tpack::{check, open, Problem};
use crate::fsutil::size_words;
use crate::text::{escape, quoted};

mod signed;

use crate::signer::Signer;
use signed::{Refusal, Trust, Verdict};

/// Schema tag of `verify --json` output (see docs/cli.md).
pub const JSON_SCHEMA: &str = "tpack-verify/1";

/// What `tpack verify` checks, from its flags.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// One JSON document instead of text (`--json`).
    pub json: bool,
    /// Trusted public key files (`--key`); with one or more, a signature is checked (and required unless
    /// `allow_unsigned`).
    pub keys: Vec<PathBuf>,
    /// The lowest security counter accepted (`--min-counter`).
    pub min_counter: u64,
    /// The subject a signature must name (`--subject`).
    pub subject: Option<String>,
    /// Accept unsigned files even with `--key` (`--allow-unsigned`).
    pub allow_unsigned: bool,
    /// Threads that hash entries (`--threads`); `None`: one per core.
    pub threads: Option<usize>,
}

/// Runs `tpack verify` on one file, without keys: `Ok(report)` when it is intact.
///
/// # Errors
/// [`Kind::Invalid`] listing every corrupt entry, or the structural rule the file breaks; [`Kind::Io`] when it
/// cannot be read.
pub fn run(path: &Path, quiet: bool) -> Result<String> {
    let mut out = Vec::new();
    run_files(&[path.to_path_buf()], &Options::default(), quiet, &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// What the signature checks said of an intact file.
enum Signature {
    /// Unsigned, and no key was given.
    Unsigned,
    /// Signed, and no key was given: the signer as the file says, unchecked.
    Unchecked(Signer),
    /// Signed by a trusted key, within the policy, every entry matching its digest.
    Authentic(Signer),
    /// Unsigned, accepted by `--allow-unsigned`.
    UnsignedAllowed,
}

/// What verifying one file found.
enum Outcome {
    Intact { entries: usize, bytes: u64, signature: Signature },
    Corrupt { entries: usize, problems: Vec<Problem> },
    NotAuthentic(Box<Refusal>),
    Unusable(CliError),
}

impl Outcome {
    fn is_intact(&self) -> bool {
        matches!(self, Outcome::Intact { .. })
    }
}

/// Runs `tpack verify FILE…`: each file's result is written to `out` as soon as it is known, while the
/// progress bar (one for all files, on stderr) is still up; the bar goes when the last result is written.
/// With `opts.json`, one `tpack-verify/1` document is written at the end instead. With `opts.keys`, each file's
/// signature is checked against them and the policy of `opts` (R58..R64), its entries hashed on
/// `opts.threads` threads.
///
/// With one file, the text report of a file that is not intact is the error itself (nothing is written to
/// `out`); with several, every file gets a line in `out` and the error only counts and names them.
///
/// # Errors
/// A key file that cannot be used ([`Kind::Io`] or [`Kind::Input`]), before any file is read. When any file is
/// not intact (or not authentic): the kind of the first such file ([`Kind::Invalid`] for a corrupt, invalid or
/// forged one, [`Kind::Io`] for one that cannot be read).
pub fn run_files(paths: &[PathBuf], opts: &Options, quiet: bool, out: &mut dyn Write) -> Result<String> {
    let trust = Trust::load(opts)?;
    let threads = opts.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let maps: Vec<Result<memmap2::Mmap>> = paths.iter().map(|p| crate::fsutil::map(p)).collect();
    let total: u64 = maps.iter().flatten().map(|m| m.len() as u64).sum();
    let bar = crate::progress::bytes(total, "verifying", quiet);
    let several = paths.len() > 1;
    let mut results = Vec::with_capacity(paths.len());
    for (path, map) in paths.iter().zip(maps) {
        crate::progress::set_message(&bar, &path.display().to_string());
        let outcome = match map {
            Err(e) => Outcome::Unusable(e),
            Ok(map) => match open(path, &map) {
                Err(e) => Outcome::Unusable(e),
                Ok(container) => {
                    let entries = container.len();
                    let bytes: u64 = container.entries().map(|e| e.byte_len()).sum();
                    let checked = match &trust {
                        None => {
                            let mut seen = 0u64;
                            let problems = check(&container, &mut |n| {
                                seen += n;
                                bar.inc(n);
                            });
                            bar.inc(bytes.saturating_sub(seen));
                            let signature =
                                Signer::of(&container).map_or(Signature::Unsigned, Signature::Unchecked);
                            Ok((signature, problems))
                        }
                        Some(trust) => signed::verify(&container, trust, threads, &|n| bar.inc(n)).map(
                            |(verdict, problems)| match verdict {
                                Verdict::Signed(signer) => (Signature::Authentic(signer), problems),
                                Verdict::UnsignedAllowed => (Signature::UnsignedAllowed, problems),
                            },
                        ),
                    };
                    // The rest of the file (header, tables, padding) counts as done too.
                    bar.inc((map.len() as u64).saturating_sub(bytes));
                    match checked {
                        Err(refusal) => Outcome::NotAuthentic(refusal),
                        Ok((signature, problems)) if problems.is_empty() => {
                            Outcome::Intact { entries, bytes, signature }
                        }
                        Ok((_, problems)) => Outcome::Corrupt { entries, problems },
                    }
                }
            },
        };
        if !opts.json && (several || outcome.is_intact()) {
            let line = text_report(path, &outcome);
            // A closed pipe (`tpack verify … | head`) is not an error worth a message.
            bar.suspend(|| {
                let _ = writeln!(out, "{line}");
            });
        }
        results.push((path, outcome));
    }
    if opts.json {
        let files: Vec<Value> = results.iter().map(|(p, o)| json_report(p, o)).collect();
        let intact = results.iter().all(|(_, o)| o.is_intact());
        let doc = json!({"schema": JSON_SCHEMA, "intact": intact, "files": files});
        bar.suspend(|| {
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        });
    }
    bar.finish_and_clear();
    let failed: Vec<(&PathBuf, &Outcome)> =
        results.iter().filter(|(_, o)| !o.is_intact()).map(|(p, o)| (*p, o)).collect();
    let Some(&(first_path, first)) = failed.first() else {
        return Ok(String::new());
    };
    let kind = match first {
        Outcome::Unusable(e) => e.kind(),
        _ => Kind::Invalid,
    };
    if !several && !opts.json {
        return Err(CliError::new(kind, text_report(first_path, first)));
    }
    let names: Vec<String> =
        failed.iter().map(|(p, _)| escape(&p.display().to_string()).into_owned()).collect();
    let what = if trust.is_some() { "intact and authentic" } else { "intact" };
    Err(CliError::new(
        kind,
        format!("{} of {} files are not {what}: {}", failed.len(), results.len(), names.join(", ")),
    ))
}

/// One file's result in words: the intact line, or every problem.
fn text_report(path: &Path, outcome: &Outcome) -> String {
    let file = escape(&path.display().to_string()).into_owned();
    match outcome {
        Outcome::Intact { entries, bytes, signature } => {
            let payload = size_words(*bytes);
            match signature {
                Signature::Unsigned => {
                    format!("{file}: intact: {entries} entries, {payload} of payload, every checksum matches")
                }
                Signature::UnsignedAllowed => format!(
                    "{file}: intact: {entries} entries, {payload} of payload, every checksum matches; unsigned                      (accepted by --allow-unsigned)"
                ),
                Signature::Unchecked(signer) => format!(
                    "{file}: intact: {entries} entries, {payload} of payload, every checksum matches; signed by {},                      but the signature was not checked (pass --key PUBLIC.pem to check it)",
                    signer.words()
                ),
                Signature::Authentic(signer) => format!(
                    "{file}: intact and authentic: {entries} entries, {payload} of payload, every digest and                      checksum matches; signed by {}",
                    signer.words()
                ),
            }
        }
        Outcome::Corrupt { entries, problems } => {
            let forged = problems.iter().any(|p| p.rule == Some("R64"));
            let mut message = if forged {
                format!("{file} is not authentic: {} of {entries} entries fail verification", problems.len())
            } else {
                format!("{file} is corrupt: {} of {entries} entries fail verification", problems.len())
            };
            for p in problems {
                let _ = write!(message, "\n  entry {} {}: {}", p.entry, quoted(&p.name), p.what);
            }
            message
        }
        Outcome::NotAuthentic(refusal) => format!("{file} is not authentic: {}", refusal.words),
        Outcome::Unusable(e) => e.to_string(),
    }
}

fn json_report(path: &Path, outcome: &Outcome) -> Value {
    let file = path.display().to_string();
    match outcome {
        Outcome::Intact { entries, bytes, signature } => {
            let signature = match signature {
                Signature::Unsigned => Value::Null,
                Signature::UnsignedAllowed => json!({"checked": true, "authentic": false, "unsigned": true}),
                Signature::Unchecked(s) => s.json(false, false),
                Signature::Authentic(s) => s.json(true, true),
            };
            json!({"file": file, "intact": true, "entries": entries, "payload_bytes": bytes, "problems": [],
                   "signature": signature})
        }
        Outcome::Corrupt { entries, problems } => {
            let problems: Vec<Value> = problems
                .iter()
                .map(|p| json!({"entry": p.entry, "name": p.name, "what": p.what, "rule": p.rule}))
                .collect();
            json!({"file": file, "intact": false, "entries": entries, "problems": problems})
        }
        Outcome::NotAuthentic(r) => json!({
            "file": file,
            "intact": false,
            "rule": r.rule,
            "error": r.words,
            "signature": r.signer.as_ref().map(|s| s.json(true, false)),
            "exit_code": Kind::Invalid.exit_code(),
        }),
        Outcome::Unusable(e) => {
            json!({"file": file, "intact": false, "error": e.to_string(), "exit_code": e.kind().exit_code()})
        }
    }
}
