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

use ::tpack::Container;

use crate::error::Result;
use crate::manifest::OwnedValue;

pub(crate) mod gguf;
pub(crate) mod safetensors;
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
}

impl Format {
    /// The format's usual name.
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Tpack => "tpack",
            Format::Safetensors => "safetensors",
            Format::Gguf => "GGUF",
        }
    }

    /// The format an output path's extension asks for, if it names one.
    #[must_use]
    pub(crate) fn of_extension(path: &Path) -> Option<Format> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("tpack") => Some(Format::Tpack),
            Some("safetensors") => Some(Format::Safetensors),
            Some("gguf") => Some(Format::Gguf),
            _ => None,
        }
    }

    /// The format a file starting with `head` is in, told by each format's own test, if one matches.
    #[must_use]
    pub(crate) fn sniff(head: &[u8]) -> Option<Format> {
        // Most specific first: the safetensors test (byte 8 is `{`) also passes for a GGUF file whose tensor
        // count ends in the byte 0x7b.
        let tests: [(Format, Sniff); 3] = [
            (Format::Tpack, tpack::sniff),
            (Format::Gguf, gguf::sniff),
            (Format::Safetensors, safetensors::sniff),
        ];
        tests.into_iter().find(|(_, test)| test(head)).map(|(format, _)| format)
    }
}

/// A format's test of a file's first bytes.
type Sniff = fn(&[u8]) -> bool;

/// A model in tpack's terms, read from a file or a manifest: what [`tpack::write`] streams into a container.
#[derive(Debug)]
pub(crate) struct Model<'a> {
    /// Compatible-feature flags for the header (0 for a model read from a foreign format).
    pub(crate) compat_flags: u64,
    /// Entries in the order they are written, their payloads borrowed from the input.
    pub(crate) entries: Vec<OutEntry<'a>>,
    /// Metadata records (the writer orders them by key).
    pub(crate) metadata: Vec<(String, OwnedValue)>,
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

    /// Writes `container`, already verified and read from `input` (which messages name), to `output` in this
    /// format. Whatever this format cannot store is refused before `output` is created.
    ///
    /// # Errors
    /// [`crate::Kind::Input`]: an entry or value this format cannot store; [`crate::Kind::Io`]: writing failed.
    fn write(&self, input: &Path, container: &Container<'_>, output: &Path) -> Result<Exported>;
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
}

/// The foreign formats `tpack convert` reads, in the order the help and messages list them.
pub(crate) const IMPORTS: &[&dyn Import] = &[&safetensors::Safetensors, &gguf::Gguf];

/// The foreign formats `tpack convert` writes.
pub(crate) const EXPORTS: &[&dyn Export] = &[&safetensors::Safetensors];

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
        for other in [&b""[..], b"GGU", b"12345678", b"12345678[]"] {
            assert_eq!(Format::sniff(other), None, "{other:?}");
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
