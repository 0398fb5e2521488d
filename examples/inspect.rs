//! Validates a tpack container completely (structure and every payload checksum) and prints what it holds.
//!
//! `cargo run --example inspect --features std -- [FILE]`; without FILE it reads the bundled example
//! `spec/vectors/valid/example.tpack`.

use std::process::ExitCode;

use tpack::{Container, MetaValue};

const BUNDLED: &str = "spec/vectors/valid/example.tpack";

fn main() -> ExitCode {
    let path = std::env::args().nth(1).unwrap_or_else(|| BUNDLED.to_owned());
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let container = match Container::parse(&bytes).and_then(|c| c.verify().map(|()| c)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {path} is not a valid tpack container: {e}");
            return ExitCode::from(1);
        }
    };
    let (major, minor) = container.version();
    println!(
        "{path}: tpack {major}.{minor}, {} bytes, {} entries, all checksums match",
        bytes.len(),
        container.len()
    );
    for entry in container.entries() {
        let dtype =
            entry.dtype().name().map_or_else(|| format!("code {}", entry.dtype().code()), str::to_owned);
        let target = entry.target().map_or(String::new(), |t| format!(" -> load at {t:#x}"));
        println!(
            "  {:<32} {:<9} {:<16} {:>10} bytes @ {:#x} (align {}){target}",
            entry.name(),
            dtype,
            format!("{:?}", entry.shape().dims()),
            entry.byte_len(),
            entry.offset(),
            entry.alignment(),
        );
    }
    for (key, value) in container.metadata() {
        let shown = match value {
            MetaValue::String(s) => format!("{s:?}"),
            MetaValue::StringArray(items) => format!("{:?}", items.collect::<Vec<_>>()),
            MetaValue::U64Array(a) => {
                format!("{:?}", a.iter().map(|v| v.get()).collect::<Vec<_>>())
            }
            MetaValue::I64Array(a) => {
                format!("{:?}", a.iter().map(|v| v.get()).collect::<Vec<_>>())
            }
            MetaValue::F64Array(a) => {
                format!("{:?}", a.iter().map(|v| v.get()).collect::<Vec<_>>())
            }
            other => format!("{other:?}"),
        };
        println!("  meta {key} = {shown}");
    }
    ExitCode::SUCCESS
}
