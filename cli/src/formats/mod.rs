//! The file formats the tool reads and writes, one module each, behind one shape.
//!
//! tpack is the hub: a foreign format is read into a [`Model`] (entries and metadata in tpack's terms) that
//! [`tpack::write`] streams into a container ([`Import`]), or written from a verified container ([`Export`]).
//! `tpack convert` dispatches once on the pair of formats; a new foreign format is one new module that
//! implements either trait, plus a line in [`IMPORTS`] or [`EXPORTS`] and one in [`Format::sniff`].
//!
//! Rejected: a direct reader-to-writer path for every pair of formats. It multiplies with each format, and
//! every conversion would need its own validation; through tpack, each format is validated once, on its side.

use std::path::Path;

use ::tpack::{Container, OwnedMetaValue};

use crate::error::Result;

pub(crate) mod gguf;
pub(crate) mod numpy;
pub(crate) mod onnx;
pub(crate) mod pytorch;
pub(crate) mod safetensors;
pub(crate) mod tensorflow;
pub(crate) mod tpack;

use self::tpack::OutEntry;

/// A file format the tool knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A tpack container.
    Tpack,
    /// A safetensors file.
    Safetensors,
    /// A GGUF file.
    Gguf,
    /// A PyTorch checkpoint: a `torch.save` zip archive or legacy stream, or a TorchScript archive.
    Pytorch,
    /// A NumPy `.npy` file (one array).
    Npy,
    /// A NumPy `.npz` file (a zip archive of `.npy` arrays).
    Npz,
    /// An ONNX model.
    Onnx,
    /// A TensorFlow tensor bundle: a checkpoint, or a SavedModel's variables (found by its `.index` file).
    TensorFlow,
}

impl Format {
    /// The format's usual name.
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Tpack => "tpack",
            Format::Safetensors => "safetensors",
            Format::Gguf => "GGUF",
            Format::Pytorch => "PyTorch",
            Format::Npy => "NumPy .npy",
            Format::Npz => "NumPy .npz",
            Format::Onnx => "ONNX",
            Format::TensorFlow => "TensorFlow checkpoint",
        }
    }

    /// The format an output path's extension asks for, if it names one.
    #[must_use]
    pub(crate) fn of_extension(path: &Path) -> Option<Format> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("tpack") => Some(Format::Tpack),
            Some("safetensors") => Some(Format::Safetensors),
            Some("gguf") => Some(Format::Gguf),
            Some("npy") => Some(Format::Npy),
            Some("npz") => Some(Format::Npz),
            Some("onnx") => Some(Format::Onnx),
            _ => None,
        }
    }

    /// The format a file starting with `head` is in, told by each format's own test, if one matches.
    #[must_use]
    pub(crate) fn sniff(head: &[u8]) -> Option<Format> {
        // Most specific first: the safetensors test (byte 8 is `{`) also passes for a GGUF file whose tensor
        // count ends in the byte 0x7b.
        let tests: [(Format, Sniff); 8] = [
            (Format::Tpack, tpack::sniff),
            (Format::Gguf, gguf::sniff),
            (Format::Pytorch, pytorch::sniff),
            (Format::Npy, numpy::sniff_npy),
            // A zip archive whose first member is a .npy array (PyTorch's first record is `<name>/data.pkl`).
            (Format::Npz, numpy::sniff_npz),
            // Three bytes of protobuf, where the safetensors test reads one.
            (Format::Onnx, onnx::sniff),
            // An SSTable's magic number at the end, the bundle header's empty key at the start.
            (Format::TensorFlow, tensorflow::sniff),
            (Format::Safetensors, safetensors::sniff),
        ];
        tests.into_iter().find(|(_, test)| test(head)).map(|(format, _)| format)
    }
}

/// A format's test of a file's first bytes.
type Sniff = fn(&[u8]) -> bool;

/// The first bytes of a zip archive (a local file header), which is what `torch.save` writes since PyTorch
/// 1.6 (`.pt`, `.pth`, and many `.bin` checkpoints).
const ZIP_MAGIC: &[u8] = b"PK\x03\x04";

/// The PROTO opcode that starts a pickle of protocol 2 or later, as older PyTorch checkpoints are.
const PICKLE_PROTO: u8 = 0x80;

/// The pickle protocols a PROTO opcode may name (Python 3.8 writes 5).
const PICKLE_PROTOCOLS: std::ops::RangeInclusive<u8> = 2..=5;

/// What tpack reads of PyTorch's files, the second half of the sentence about a pickle or zip it does not read.
const PYTORCH_READ: &str = "tpack reads the checkpoints torch.save and torch.jit.save write (a zip archive with a \
                            <name>/data.pkl record, or a legacy stream starting with PyTorch's magic number), and \
                            never runs any other pickle";

/// Why `bytes`, the content of `path`, is in none of the formats the tool reads, in one sentence that says
/// what the file is, if that can be told, and what to do.
#[must_use]
pub(crate) fn not_a_model_file(path: &Path, bytes: &[u8]) -> String {
    let path = path.display();
    match bytes {
        [] => format!(
            "{path} is empty (0 bytes), so it holds no model; the download or copy that made it probably failed, so \
             make it again"
        ),
        [PICKLE_PROTO, protocol, ..] if PICKLE_PROTOCOLS.contains(protocol) => {
            format!("{path} is a Python pickle (protocol {protocol}) but not a PyTorch checkpoint; {PYTORCH_READ}")
        }
        _ if bytes.starts_with(ZIP_MAGIC) => {
            format!("{path} is a zip archive but not a PyTorch checkpoint (its first record is not one torch.save writes); {PYTORCH_READ}")
        }
        _ => format!(
            "{path} is not a tpack, safetensors, GGUF, PyTorch, NumPy, ONNX or TensorFlow file (its bytes match none \
             of them); convert reads safetensors, GGUF, NumPy .npy and .npz, and ONNX files, PyTorch and TensorFlow \
             checkpoints and tpack containers"
        ),
    }
}

/// A model in tpack's terms, read from a file or a manifest: what [`tpack::write`] streams into a container.
#[derive(Debug)]
pub(crate) struct Model<'a> {
    /// Compatible-feature flags for the header (0 for a model read from a foreign format).
    pub(crate) compat_flags: u64,
    /// Entries in the order they are written, their payloads borrowed from the input.
    pub(crate) entries: Vec<OutEntry<'a>>,
    /// Metadata records (the writer orders them by key).
    pub(crate) metadata: Vec<(String, OwnedMetaValue)>,
    /// What the reader noticed that the user should know, one sentence each (printed as `note:` lines).
    pub(crate) notes: Vec<String>,
}

/// A foreign format that `tpack convert` reads into a container.
pub(crate) trait Import {
    /// Which format this is.
    fn format(&self) -> Format;

    /// Reads and validates the whole of `bytes` (the content of `path`, which messages name) as entries and
    /// metadata, with payloads borrowed from `bytes`. Nothing is written.
    ///
    /// # Errors
    /// [`crate::Kind::Input`]: the file is not valid in this format, or holds what tpack cannot store.
    fn read<'a>(&self, path: &Path, bytes: &'a [u8]) -> Result<Model<'a>>;
}

/// A foreign format that `tpack convert` writes from a container.
pub(crate) trait Export {
    /// Which format this is.
    fn format(&self) -> Format;

    /// The names of the files [`Export::write`] writes for `container` when asked for the file `name`: `name`
    /// itself, or the names of its shards. Told before any work, so that existing files are found first.
    ///
    /// # Errors
    /// [`crate::Kind::Input`]: the options cannot be met (this format has no shards, say).
    fn file_names(
        &self,
        container: &Container<'_>,
        name: &str,
        options: &ExportOptions,
    ) -> Result<Vec<String>> {
        let _ = container;
        if options.max_shard_size.is_some() {
            return Err(crate::error::CliError::input(format!(
                "--max-shard-size is not supported for {} output",
                self.format().name()
            )));
        }
        Ok(vec![name.to_owned()])
    }

    /// Whether a file of the name asked for, left beside the shards written instead, would be read in their
    /// place (so that, with `--force`, a sharded write removes it, and without, refuses to go on).
    fn shadows_shards(&self) -> bool {
        false
    }

    /// Writes `container`, already verified and read from `input` (which messages name), in this format as
    /// the files [`Export::file_names`] names, in the directory `dir`. Whatever this format cannot store is
    /// refused before any file is created.
    ///
    /// # Errors
    /// [`crate::Kind::Input`]: an entry or value this format cannot store; [`crate::Kind::Io`]: writing failed.
    fn write(
        &self,
        input: &Path,
        container: &Container<'_>,
        dir: &Path,
        name: &str,
        options: &ExportOptions,
    ) -> Result<Exported>;
}

/// How `tpack convert` asks an [`Export`] to write.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExportOptions {
    /// `--max-shard-size`: split the output into files of at most this many bytes of tensor data.
    pub(crate) max_shard_size: Option<u64>,
}

/// What an [`Export`] wrote, for the report.
#[derive(Debug, Default)]
pub(crate) struct Exported {
    /// Tensors written.
    pub(crate) entries: usize,
    /// Metadata values written.
    pub(crate) metadata: usize,
    /// What the output format could not keep, one sentence each.
    pub(crate) notes: Vec<String>,
    /// The files written in the directory given, in order (shards in shard order).
    pub(crate) files: Vec<String>,
}

/// The foreign formats `tpack convert` reads, in the order the help and messages list them.
pub(crate) const IMPORTS: &[&dyn Import] = &[
    &safetensors::Safetensors,
    &gguf::Gguf,
    &pytorch::Pytorch,
    &numpy::Npy,
    &numpy::Npz,
    &onnx::Onnx,
    &tensorflow::TensorFlow,
];

/// The foreign formats `tpack convert` writes.
pub(crate) const EXPORTS: &[&dyn Export] =
    &[&safetensors::Safetensors, &gguf::Gguf, &numpy::Npz, &onnx::Onnx];

/// The reader of `format`, if it is a foreign format the tool reads.
pub(crate) fn importer(format: Format) -> Option<&'static dyn Import> {
    IMPORTS.iter().copied().find(|i| i.format() == format)
}

/// The writer of `format`, if it is a foreign format the tool writes.
pub(crate) fn exporter(format: Format) -> Option<&'static dyn Export> {
    EXPORTS.iter().copied().find(|e| e.format() == format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniff_tells_each_format_and_tries_the_specific_tests_first() {
        assert_eq!(Format::sniff(&::tpack::format::MAGIC), Some(Format::Tpack));
        // A GGUF file with 123 tensors has `{` at byte 8, as a safetensors header does.
        let gguf = [&b"GGUF\x03\0\0\0"[..], b"{\0\0\0\0\0\0\0"].concat();
        assert_eq!(Format::sniff(&gguf), Some(Format::Gguf));
        let safetensors = [&2u64.to_le_bytes()[..], b"{}"].concat();
        assert_eq!(Format::sniff(&safetensors), Some(Format::Safetensors));
        assert_eq!(Format::sniff(b"\x93NUMPY\x01\x00v\x00{'descr'"), Some(Format::Npy));
        // A zip whose first record is `<name>/data.pkl`, or a legacy torch.save stream; not any zip or pickle.
        let torch_zip = [&b"PK\x03\x04"[..], &[0; 22], &[10, 0, 0, 0], b"a/data.pkl"].concat();
        assert_eq!(Format::sniff(&torch_zip), Some(Format::Pytorch));
        assert_eq!(Format::sniff(tpack_pytorch::LEGACY_HEAD), Some(Format::Pytorch));
        // A zip whose first member is a .npy array is an .npz.
        let npz = [&b"PK\x03\x04"[..], &[0; 22], &[5, 0, 0, 0], b"a.npy"].concat();
        assert_eq!(Format::sniff(&npz), Some(Format::Npz));
        assert_eq!(Format::sniff(b"\x80\x02}q\x00."), None);
        // An ONNX model whose byte 8 is `{` is still ONNX: its test is the more specific.
        assert_eq!(Format::sniff(b"\x08\x08\x12\x06abcd{"), Some(Format::Onnx));
        for other in [&b""[..], b"GGU", b"12345678", b"12345678[]"] {
            assert_eq!(Format::sniff(other), None, "{other:?}");
        }
    }

    #[test]
    fn files_in_no_format_are_told_apart() {
        let p = Path::new("m.pt");
        assert!(not_a_model_file(p, b"").starts_with("m.pt is empty (0 bytes)"));
        for protocol in 2..=5u8 {
            let m = not_a_model_file(p, &[0x80, protocol, 0x95]);
            assert!(
                m.starts_with(&format!("m.pt is a Python pickle (protocol {protocol}) but not a PyTorch")),
                "{m}"
            );
            assert!(m.contains("never runs any other pickle"), "{m}");
        }
        let zip = not_a_model_file(p, b"PK\x03\x04\x14\0");
        assert!(
            zip.starts_with("m.pt is a zip archive but not a PyTorch checkpoint")
                && zip.contains("torch.save"),
            "{zip}"
        );
        // Protocol 1 and 6 are no PROTO opcodes PyTorch writes; an empty zip (PK\x05\x06) has no checkpoint.
        for other in [&[0x80, 1][..], &[0x80, 6], b"PK\x05\x06", b"hello"] {
            assert!(
                not_a_model_file(p, other)
                    .contains("is not a tpack, safetensors, GGUF, PyTorch, NumPy, ONNX or TensorFlow file"),
                "{other:?}"
            );
        }
    }

    #[test]
    fn extensions_name_formats_in_any_case() {
        for (path, format) in
            [("a.tpack", Format::Tpack), ("b.SafeTensors", Format::Safetensors), ("c/d.GGUF", Format::Gguf)]
        {
            assert_eq!(Format::of_extension(Path::new(path)), Some(format), "{path}");
        }
        assert_eq!(Format::of_extension(Path::new("model.bin")), None);
        assert_eq!(Format::of_extension(Path::new("tpack")), None);
    }

    #[test]
    fn each_registered_format_is_found_by_its_own_format() {
        for import in IMPORTS {
            assert_eq!(importer(import.format()).map(|i| i.format()), Some(import.format()));
        }
        for export in EXPORTS {
            assert_eq!(exporter(export.format()).map(|e| e.format()), Some(export.format()));
        }
        // tpack is the hub, never a foreign format.
        assert!(importer(Format::Tpack).is_none() && exporter(Format::Tpack).is_none());
    }
}
