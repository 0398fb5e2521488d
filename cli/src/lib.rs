//! The `tpack` command-line tool as a library: each command is a module under `commands/` whose `run`
//! returns the text to print or a [`CliError`] in plain words; each file format is a module under
//! `formats/`; `tpack convert` runs one way through `pipeline/` (source → output plan → sink → report), and a
//! model stored in several files is read as one source by `shards/`. Key files are read by `keys`, who signed
//! a container is told by `signer`, and OpenSSF model-signing bundles are written by `oms`. Metadata values
//! are walked lazily from whatever they were read from (`meta_view`), and spelled as JSON in one place
//! (`metadata_json`: `render` and `parse`) and as words in `describe`. `main.rs` only parses arguments and
//! prints.
//!
//! Public are only the entry points the binary, the end-to-end tests and the memory benchmark call: one
//! `run_*` function per command (with its options), the [`Format`] that `convert --to` names, the
//! [`KeyAlgorithm`] of `keygen`, the `--max-shard-size` parser
//! ([`parse_shard_size`]), the error type, and the signal
//! handling the binary installs ([`signals`]). The GGUF
//! parser is its own crate, `tpack-gguf`; safetensors files are read by the `safetensors` crate.

mod commands;
mod describe;
mod error;
mod formats;
mod fsutil;
mod json_fields;
mod json_strict;
mod keys;
mod manifest;
mod meta_view;
mod metadata_json;
mod natural;
mod oms;
mod output;
mod pipeline;
mod progress;
mod safe_names;
mod shard_size;
mod shards;
pub mod signals;
mod signer;
mod suggest;
mod text;
mod tree;

pub use commands::convert::run as run_convert;
pub use commands::inspect::{run as run_inspect, run_with as run_inspect_with, Options as InspectOptions};
pub use commands::keygen::run as run_keygen;
pub use commands::pack::run as run_pack;
pub use commands::sign::{run as run_sign, Options as SignOptions};
pub use commands::unpack::run as run_unpack;
pub use commands::verify::{run as run_verify, run_files as run_verify_files, Options as VerifyOptions};
pub use error::{CliError, Kind, Result};
pub use formats::Format;
/// The signature algorithms `tpack keygen --algorithm` names.
pub use tpack::auth::Algorithm as KeyAlgorithm;

/// Parses a `--max-shard-size` value: `123`, `500MB`, `2GB` (powers of 1000, as Hugging Face counts),
/// `500MiB`, `1.5GiB` (powers of 1024).
///
/// # Errors
/// A sentence saying why `text` is not a size.
pub fn parse_shard_size(text: &str) -> std::result::Result<u64, String> {
    shard_size::parse_size(text)
}
