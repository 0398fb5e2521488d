//! The `tpack` command-line tool as a library: each command is a module whose `run` returns the text to print
//! or a [`CliError`] in plain words. `main.rs` only parses arguments and prints.
//!
//! The foreign-format readers live here too, so the fuzz targets can reach them: [`gguf`] is a strict GGUF
//! parser; safetensors files are read by the `safetensors` crate.

pub mod convert;
pub mod describe;
pub mod error;
pub mod fsutil;
pub mod gguf;
pub mod inspect;
pub mod json_strict;
pub mod manifest;
pub mod pack;
pub mod progress;
pub mod safe_names;
pub mod unpack;
pub mod verify;

use std::path::Path;

use tpack::Container;

pub use error::{CliError, Kind, Result};

/// Parses `bytes` (the content of `path`) as a container, or says in words why it is not one — and, for a
/// safetensors or GGUF file, that `tpack convert` is what the user wants.
///
/// # Errors
/// [`Kind::Invalid`] naming the file and the broken rule.
pub fn open_container<'a>(path: &Path, bytes: &'a [u8]) -> Result<Container<'a>> {
    Container::parse(bytes).map_err(|err| {
        let hint = match convert::sniff(bytes) {
            convert::Format::Gguf | convert::Format::Safetensors => {
                format!(
                    " (it looks like a {} file; `tpack convert` reads those)",
                    convert::sniff(bytes).name()
                )
            }
            _ => String::new(),
        };
        CliError::invalid(format!("{} is not a valid tpack file: {err}{hint}", path.display()))
    })
}
