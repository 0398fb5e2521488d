//! The Rust reader speaking the conformance protocol of `spec/conformance/README.md`:
//! `conformance_reader FILE` prints the canonical JSON decoding (spec §13, with the `signature` object of a
//! signed container) and exits 0 for a valid container, or prints the broken rule's id first and exits 1.
//!
//! `conformance_reader --verify-signature KEYS.json POLICY.json FILE` verifies FILE's signature (spec §14)
//! with the trusted keys and the policy given: it prints `ok` and exits 0, or prints the first rule broken
//! (structural, then R58–R63, then entry by entry R37, R64, R50) and exits 1. KEYS.json is
//! `[{"algorithm": 1, "public_key": "<hex>" or null, "key_id": "<hex>", "subject": null}]`, POLICY.json
//! `{"require_signature": true, "min_counter": 7, "subject": null}`.
//!
//! It exits 2, having read nothing, for a path that is not a regular file (a FIFO, `/dev/zero`) or a file above
//! `MAX_INPUT_LEN`, and for a key set or policy it cannot read.

#[path = "../tests/support/json.rs"]
mod json;

use std::io::Read;
use std::process::ExitCode;

use serde_json::Value;
use tpack::auth::{Algorithm, Policy, SoftwareCrypto, TrustedKey};
use tpack::Container;

/// The largest file read, 1 GiB: the whole file is read into memory, and the vectors are a few KiB.
const MAX_INPUT_LEN: u64 = 1 << 30;

/// The bytes of the regular file at `path`. Its length is taken before it is opened (so a FIFO is refused,
/// not opened and waited on), and at most that many bytes and one more are read: a file that grows while it
/// is read is refused too, instead of being read to whatever end it may have.
fn read_input(path: &str) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    if !meta.is_file() {
        let kind =
            if meta.is_dir() { "a directory" } else { "not a regular file (a device, FIFO or socket?)" };
        return Err(format!("{path} is {kind}: only regular files are read"));
    }
    if meta.len() > MAX_INPUT_LEN {
        return Err(format!("{path} is {} bytes, above the {MAX_INPUT_LEN}-byte limit", meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(meta.len() + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {path}: {e}"))?;
    if bytes.len() as u64 != meta.len() {
        return Err(format!(
            "{path} changed while it was read: {} bytes by its metadata, {} read",
            meta.len(),
            bytes.len()
        ));
    }
    Ok(bytes)
}

/// A trusted key of KEYS.json, its hex decoded.
struct KeySpec {
    key_id: [u8; 32],
    algorithm: Algorithm,
    public_key: Option<Vec<u8>>,
    subject: Option<String>,
}

/// POLICY.json.
struct PolicySpec {
    require_signature: bool,
    min_counter: u64,
    subject: Option<String>,
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

/// `value[field]`: a string, or `None` for null.
fn optional_string(value: &Value, field: &str) -> Result<Option<String>, String> {
    match &value[field] {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        other => Err(format!("{field} is {other}, not a string or null")),
    }
}

fn read_json(path: &str) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path} is not JSON: {e}"))
}

fn read_keys(path: &str) -> Result<Vec<KeySpec>, String> {
    let keys = read_json(path)?;
    let keys = keys.as_array().ok_or_else(|| format!("{path}: not a list of keys"))?;
    let key = |k: &Value| -> Result<KeySpec, String> {
        let code = k["algorithm"].as_u64().ok_or("algorithm is not an integer")?;
        let algorithm = Algorithm::from_code(code).ok_or_else(|| format!("algorithm {code} is unknown"))?;
        let key_id = k["key_id"].as_str().and_then(from_hex).ok_or("key_id is not hex")?;
        let key_id = key_id.try_into().map_err(|_| "key_id is not 32 bytes")?;
        let public_key = match optional_string(k, "public_key")? {
            Some(hex) => Some(from_hex(&hex).ok_or("public_key is not hex")?),
            None => None,
        };
        Ok(KeySpec { key_id, algorithm, public_key, subject: optional_string(k, "subject")? })
    };
    keys.iter().enumerate().map(|(i, k)| key(k).map_err(|e| format!("{path}: key {i}: {e}"))).collect()
}

fn read_policy(path: &str) -> Result<PolicySpec, String> {
    let policy = read_json(path)?;
    let require_signature = policy["require_signature"]
        .as_bool()
        .ok_or_else(|| format!("{path}: require_signature is not a bool"))?;
    let min_counter =
        policy["min_counter"].as_u64().ok_or_else(|| format!("{path}: min_counter is not an integer"))?;
    let subject = optional_string(&policy, "subject").map_err(|e| format!("{path}: {e}"))?;
    Ok(PolicySpec { require_signature, min_counter, subject })
}

/// The authenticated verification of spec §14, in its order.
///
/// # Errors
/// The first rule broken: structural (parse), then R58–R63 (`authenticate`), then R37, R64, R50 entry by entry.
fn verify_signature(bytes: &[u8], keys: &[KeySpec], policy: &PolicySpec) -> Result<(), tpack::Error> {
    let trusted: Vec<TrustedKey<'_>> = keys
        .iter()
        .map(|k| TrustedKey {
            key_id: k.key_id,
            algorithm: k.algorithm,
            public_key: k.public_key.as_deref(),
            subject: k.subject.as_deref(),
        })
        .collect();
    let policy = Policy {
        keys: &trusted,
        require_signature: policy.require_signature,
        min_counter: policy.min_counter,
        subject: policy.subject.as_deref(),
    };
    Container::parse(bytes)?.authenticate(&policy, &SoftwareCrypto)?.verify(&SoftwareCrypto)
}

const USAGE: &str =
    "usage: conformance_reader FILE | conformance_reader --verify-signature KEYS.json POLICY.json FILE";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, verification) = match args.as_slice() {
        [path] if path != "--verify-signature" => (path, None),
        [flag, keys, policy, path] if flag == "--verify-signature" => {
            match read_keys(keys).and_then(|k| Ok((k, read_policy(policy)?))) {
                Ok(spec) => (path, Some(spec)),
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            }
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let bytes = match read_input(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let result = match &verification {
        Some((keys, policy)) => verify_signature(&bytes, keys, policy).map(|()| println!("ok")),
        None => Container::parse(&bytes).and_then(|c| c.verify().map(|()| println!("{}", json::decode(&c)))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("{} {e}", e.rule().id());
            ExitCode::from(1)
        }
    }
}
