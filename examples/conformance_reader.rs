//! The Rust reader speaking the conformance protocol of `spec/conformance/README.md`:
//! `conformance_reader FILE` prints the canonical JSON decoding (spec §13) and exits 0 for a valid container,
//! or prints the broken rule's id first and exits 1. It exits 2, having read nothing, for a path that is not a
//! regular file (a FIFO, `/dev/zero`) or a file above `MAX_INPUT_LEN`.

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

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: conformance_reader FILE");
        return ExitCode::from(2);
    };
    let bytes = match read_input(&path) {
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
