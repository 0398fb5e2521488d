//! `tpack verify`: full structural and checksum verification of one or more files, naming every corrupt
//! entry.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{CliError, Kind, Result};
use crate::formats::tpack::{check, open, Problem};
use crate::fsutil::size_words;
use crate::text::{escape, quoted};

/// Schema tag of `verify --json` output (see docs/cli.md).
pub const JSON_SCHEMA: &str = "tpack-verify/1";

/// Runs `tpack verify` on one file: `Ok(report)` when it is intact.
///
/// # Errors
/// [`Kind::Invalid`] listing every corrupt entry, or the structural rule the file breaks; [`Kind::Io`] when it
/// cannot be read.
pub fn run(path: &Path, quiet: bool) -> Result<String> {
    let mut out = Vec::new();
    run_files(&[path.to_path_buf()], false, quiet, &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// What verifying one file found.
enum Outcome {
    Intact { entries: usize, bytes: u64 },
    Corrupt { entries: usize, problems: Vec<Problem> },
    Unusable(CliError),
}

/// Runs `tpack verify FILE…`: each file's result is written to `out` as soon as it is known, while the
/// progress bar (one for all files, on stderr) is still up; the bar goes when the last result is written.
/// With `json`, one `tpack-verify/1` document is written at the end instead.
///
/// With one file, the text report of a file that is not intact is the error itself (nothing is written to
/// `out`); with several, every file gets a line in `out` and the error only counts and names them.
///
/// # Errors
/// When any file is not intact: the kind of the first such file ([`Kind::Invalid`] for a corrupt or
/// invalid one, [`Kind::Io`] for one that cannot be read).
pub fn run_files(paths: &[PathBuf], json: bool, quiet: bool, out: &mut dyn Write) -> Result<String> {
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
                    let mut seen = 0u64;
                    let problems = check(&container, &mut |n| {
                        seen += n;
                        bar.inc(n);
                    });
                    // The rest of the file (header, tables, padding) counts as done too.
                    bar.inc((map.len() as u64).saturating_sub(seen));
                    let entries = container.len();
                    if problems.is_empty() {
                        Outcome::Intact { entries, bytes: container.entries().map(|e| e.byte_len()).sum() }
                    } else {
                        Outcome::Corrupt { entries, problems }
                    }
                }
            },
        };
        if !json && (several || matches!(outcome, Outcome::Intact { .. })) {
            let line = text_report(path, &outcome);
            // A closed pipe (`tpack verify … | head`) is not an error worth a message.
            bar.suspend(|| {
                let _ = writeln!(out, "{line}");
            });
        }
        results.push((path, outcome));
    }
    if json {
        let files: Vec<Value> = results.iter().map(|(p, o)| json_report(p, o)).collect();
        let intact = results.iter().all(|(_, o)| matches!(o, Outcome::Intact { .. }));
        let doc = json!({"schema": JSON_SCHEMA, "intact": intact, "files": files});
        bar.suspend(|| {
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        });
    }
    bar.finish_and_clear();
    let failed: Vec<(&PathBuf, &Outcome)> =
        results.iter().filter(|(_, o)| !matches!(o, Outcome::Intact { .. })).map(|(p, o)| (*p, o)).collect();
    let Some(&(first_path, first)) = failed.first() else {
        return Ok(String::new());
    };
    let kind = match first {
        Outcome::Unusable(e) => e.kind(),
        _ => Kind::Invalid,
    };
    if !several && !json {
        return Err(CliError::new(kind, text_report(first_path, first)));
    }
    let names: Vec<String> =
        failed.iter().map(|(p, _)| escape(&p.display().to_string()).into_owned()).collect();
    Err(CliError::new(
        kind,
        format!("{} of {} files are not intact: {}", failed.len(), results.len(), names.join(", ")),
    ))
}

/// One file's result in words: the intact line, or every problem.
fn text_report(path: &Path, outcome: &Outcome) -> String {
    let file = escape(&path.display().to_string()).into_owned();
    match outcome {
        Outcome::Intact { entries, bytes } => {
            format!(
                "{file}: intact: {entries} entries, {} of payload, every checksum matches",
                size_words(*bytes)
            )
        }
        Outcome::Corrupt { entries, problems } => {
            let mut message =
                format!("{file} is corrupt: {} of {entries} entries fail verification", problems.len());
            for p in problems {
                let _ = write!(message, "\n  entry {} {}: {}", p.entry, quoted(&p.name), p.what);
            }
            message
        }
        Outcome::Unusable(e) => e.to_string(),
    }
}

fn json_report(path: &Path, outcome: &Outcome) -> Value {
    let file = path.display().to_string();
    match outcome {
        Outcome::Intact { entries, bytes } => {
            json!({"file": file, "intact": true, "entries": entries, "payload_bytes": bytes, "problems": []})
        }
        Outcome::Corrupt { entries, problems } => {
            let problems: Vec<Value> =
                problems.iter().map(|p| json!({"entry": p.entry, "name": p.name, "what": p.what})).collect();
            json!({"file": file, "intact": false, "entries": entries, "problems": problems})
        }
        Outcome::Unusable(e) => {
            json!({"file": file, "intact": false, "error": e.to_string(), "exit_code": e.kind().exit_code()})
        }
    }
}
