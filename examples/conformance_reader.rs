//! The Rust reader speaking the conformance protocol of `spec/conformance/README.md`:
//! `conformance_reader FILE` prints the canonical JSON decoding (spec §13) and exits 0 for a valid container,
//! or prints the broken rule's id first and exits 1. It exits 2, having read nothing, for a path that is not a
//! regular file (a FIFO, `/dev/zero`) or a file above `MAX_INPUT_LEN`.
//!
//! `conformance_reader --verify-signature KEYS.json POLICY.json FILE` is the kit's protocol for signed
//! containers (spec §14.6): `ok` and exit 0, or the first broken rule's id and exit 1; exit 2 for a key set or
//! policy that is not the kit's JSON.

#[path = "../tests/support/json.rs"]
mod json;

use std::io::Read;
use std::process::ExitCode;

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

/// One trusted key of KEYS.json, owned: `(algorithm, key id, raw public key or None, subject or None)`.
type KeyItem = (tpack::auth::Algorithm, [u8; 32], Option<Vec<u8>>, Option<String>);

fn unhex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return Err(format!("not hex: {text:?}"));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|e| format!("not hex: {text:?}: {e}")))
        .collect()
}

fn load_json(path: &str) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))
}

fn optional_string(value: &serde_json::Value) -> Result<Option<String>, String> {
    match value {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) => Ok(Some(s.clone())),
        other => Err(format!("expected a string or null, got {other}")),
    }
}

/// KEYS.json: `[{"algorithm": 1, "public_key": "<hex>" or null, "key_id": "<hex>", "subject": null}]`.
fn load_keys(path: &str) -> Result<Vec<KeyItem>, String> {
    let doc = load_json(path)?;
    let items = doc.as_array().ok_or_else(|| format!("{path}: expected a list of keys"))?;
    items
        .iter()
        .map(|item| {
            let algorithm = item["algorithm"]
                .as_u64()
                .and_then(tpack::auth::Algorithm::from_code)
                .ok_or_else(|| format!("{path}: algorithm must be 1 or 2"))?;
            let key_id: [u8; 32] =
                unhex(item["key_id"].as_str().ok_or_else(|| format!("{path}: no key_id"))?)?
                    .try_into()
                    .map_err(|_| format!("{path}: a key_id is 32 bytes"))?;
            let public_key = optional_string(&item["public_key"])?.map(|h| unhex(&h)).transpose()?;
            Ok((algorithm, key_id, public_key, optional_string(&item["subject"])?))
        })
        .collect()
}

/// The kit's `--verify-signature`: parse, authenticate (R58..R63), verify (R37, R64, R50, nested).
fn verify_signature(keys_path: &str, policy_path: &str, path: &str) -> ExitCode {
    use tpack::auth::{Policy, SoftwareCrypto, TrustedKey};
    let inputs = load_keys(keys_path).and_then(|keys| Ok((keys, load_json(policy_path)?)));
    let (items, policy) = match inputs {
        Ok(inputs) => inputs,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let subject = match optional_string(&policy["subject"]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{policy_path}: subject: {e}");
            return ExitCode::from(2);
        }
    };
    let keys: Vec<TrustedKey<'_>> = items
        .iter()
        .map(|(algorithm, key_id, public_key, subject)| TrustedKey {
            key_id: *key_id,
            algorithm: *algorithm,
            public_key: public_key.as_deref(),
            subject: subject.as_deref(),
        })
        .collect();
    let policy = Policy {
        keys: &keys,
        require_signature: policy["require_signature"].as_bool().unwrap_or(false),
        min_counter: policy["min_counter"].as_u64().unwrap_or(0),
        subject: subject.as_deref(),
    };
    let bytes = match read_input(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let result = tpack::Container::parse(&bytes)
        .and_then(|c| c.authenticate(&policy, &SoftwareCrypto))
        .and_then(|a| a.verify(&SoftwareCrypto));
    match result {
        Ok(()) => {
            println!("ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{} {e}", e.rule().id());
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, keys, policy, file] = args.as_slice() {
        if flag == "--verify-signature" {
            return verify_signature(keys, policy, file);
        }
    }
    let [_, path] = args.as_slice() else {
        eprintln!("usage: conformance_reader FILE\n       conformance_reader --verify-signature KEYS.json POLICY.json FILE");
        return ExitCode::from(2);
    };
    let bytes = match read_input(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match tpack::Container::parse(&bytes).and_then(|c| c.verify().map(|()| c)) {
        Ok(c) => {
            println!("{}", json::decode(&c));
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{} {e}", e.rule().id());
            ExitCode::from(1)
        }
    }
}
