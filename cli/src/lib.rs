//! The `tpack` command-line tool as a library: each command is a module under `commands/` whose `run`
//! returns the text to print or a [`CliError`] in plain words; each file format is a module under
//! `formats/`. `main.rs` only parses arguments and prints.
//!
//! Public are only the entry points the binary, the end-to-end tests and the memory benchmark call: one
//! `run_*` function per command, the [`Format`] that `convert --to` names, the error type, and the signal
//! handling the binary installs ([`signals`]). The GGUF
//! parser is its own crate, `tpack-gguf`; safetensors files are read by the `safetensors` crate.

mod commands;
mod describe;
mod error;
mod formats;
mod fsutil;
mod json_strict;
mod manifest;
mod natural;
mod output;
mod owned_value;
mod progress;
mod safe_names;
mod shard_size;
pub mod signals;
mod suggest;
mod text;
mod tree;

pub use commands::convert::run as run_convert;
pub use commands::inspect::{run as run_inspect, run_with as run_inspect_with, Options as InspectOptions};
pub use commands::pack::run as run_pack;
pub use commands::unpack::run as run_unpack;
pub use commands::verify::{run as run_verify, run_files as run_verify_files};
pub use error::{CliError, Kind, Result};
pub use formats::Format;
