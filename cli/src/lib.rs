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
//! ([`parse_shard_size`]), the error type, the signal handling the binary installs ([`signals`]), and
//! `fuzz_read`, through which the fuzz targets reach the NumPy, ONNX and TensorFlow readers. The GGUF parser is its own
//! crate, `tpack-gguf`; safetensors files are read by the `safetensors` crate, `.npz` archives by `zip`, and
//! ONNX protobuf by `prost` (with types generated from the official `onnx.proto`; TensorFlow's few bundle
//! messages declared for prost by hand), CRC-32C by `crc32c`.

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

/// For the fuzz targets (`fuzz/fuzz_targets/npy.rs`, `onnx.rs`): reads `bytes` as a file of `format`, named
/// `path` (whose directory an ONNX file's external data is looked for in), with that format's importer, and
/// checks what it promises: every entry's payload has the length its declaration gives, which is the byte
/// length its dtype and shape give. Returns the number of entries.
///
/// # Errors
/// What the importer refuses; [`Kind::Input`] for a format the tool does not read.
///
/// # Panics
/// When an entry's payload does not have its declared length: a bug in the importer.
#[doc(hidden)]
pub fn fuzz_read(format: Format, path: &std::path::Path, bytes: &[u8]) -> Result<usize> {
    use formats::tpack::Payload;
    let import = formats::importer(format)
        .ok_or_else(|| CliError::input(format!("tpack does not read {} files", format.name())))?;
    let model = import.read(path, bytes)?;
    for e in &model.entries {
        let have = match &e.payload {
            Payload::Bytes(b) | Payload::Swapped { bytes: b, .. } => b.len(),
            Payload::Shared(b) => b.len(),
            Payload::Owned(b) => b.len(),
            Payload::File(_) => usize::MAX,
        };
        assert_eq!(have as u64, e.length, "entry {:?}: payload length", e.name);
        assert_eq!(e.dtype.byte_len(&e.shape).ok(), Some(e.length), "entry {:?}: dtype and shape", e.name);
    }
    Ok(model.entries.len())
}
