//! The Rust reader speaking the conformance protocol of `spec/conformance/README.md`:
//! `conformance_reader FILE` prints the canonical JSON decoding (spec §13) and exits 0 for a valid container,
//! or prints the broken rule's id first and exits 1.

#[path = "../tests/support/json.rs"]
mod json;

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: conformance_reader FILE");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
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
