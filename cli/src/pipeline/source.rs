//! The source of a conversion: what IN names, one file or a shard set, in any format the tool reads, and
//! what reading it gives ([`Input`]).

use std::path::{Path, PathBuf};

use ::tpack::Container;

use crate::error::{CliError, Result};
use crate::formats::{importer, not_a_model_file, tensorflow, tpack, Format, Model};
use crate::shards::{Found, ShardSet};

/// What IN names, opened: every file of it mapped for as long as the source lives.
#[derive(Debug)]
pub(crate) enum Source {
    /// One file, in the format its first bytes tell (none, if they match no format).
    File {
        /// Its path, as messages name it.
        path: PathBuf,
        /// Its content.
        map: memmap2::Mmap,
        /// Its format, if its first bytes tell one.
        format: Option<Format>,
    },
    /// A model stored in several files.
    Set(ShardSet),
}

/// What a source holds, read: a foreign one validated completely, a container's structure validated (its
/// payloads are verified by [`Source::verify`], once the output plan has been checked).
pub(crate) enum Input<'a> {
    /// A model read from a foreign format (one file or a set), its payloads borrowed from the source.
    Model(Model<'a>),
    /// A tpack container.
    Container(Container<'a>),
}

impl Source {
    /// Opens what `input` names: a TensorFlow checkpoint by its directory or prefix (its `.index` file), a shard set (a Hugging Face index or its directory, or the first split of a
    /// split GGUF; its index or split keys are read to find its files), else the one file `input`, of which
    /// nothing is read beyond what tells its format.
    ///
    /// # Errors
    /// What [`ShardSet::find`] refuses, [`crate::Kind::Io`] when `input` cannot be mapped.
    pub(crate) fn open(input: &Path) -> Result<Source> {
        // A TensorFlow checkpoint is named by its directory or its prefix as often as by its index file.
        let located = tensorflow::locate(input);
        let input = located.as_deref().unwrap_or(input);
        Ok(match ShardSet::find(input)? {
            Found::Set(set) => Source::Set(set),
            Found::File(map) => {
                let format = Format::sniff(&map);
                Source::File { path: input.to_path_buf(), map, format }
            }
        })
    }

    /// The path that names the source in messages and the report: the file, the index or the first split.
    #[must_use]
    pub(crate) fn origin(&self) -> &Path {
        match self {
            Source::File { path, .. } => path,
            Source::Set(set) => set.origin(),
        }
    }

    /// Every file the source reads, which no output may be.
    #[must_use]
    pub(crate) fn files(&self) -> Vec<&Path> {
        match self {
            Source::File { path, .. } => vec![path.as_path()],
            Source::Set(set) => set.files().collect(),
        }
    }

    /// The source's format.
    ///
    /// # Errors
    /// [`crate::Kind::Input`]: a file in no format the tool reads, saying what it is if that can be told.
    pub(crate) fn format(&self) -> Result<Format> {
        match self {
            Source::File { format: Some(format), .. } => Ok(*format),
            Source::File { path, map, format: None } => Err(CliError::input(not_a_model_file(path, map))),
            Source::Set(set) => Ok(set.format()),
        }
    }

    /// How many shards the source has: `None` for one file.
    #[must_use]
    pub(crate) fn shards(&self) -> Option<usize> {
        match self {
            Source::File { .. } => None,
            Source::Set(set) => Some(set.len()),
        }
    }

    /// Reads the source: a foreign file by its format's reader and a shard set by its readers, checked and
    /// merged, each validated completely; a container's structure (every rule but the payload checksums).
    ///
    /// # Errors
    /// [`crate::Kind::Invalid`] for an invalid container, [`crate::Kind::Input`] for an invalid foreign file or
    /// set, or one whose format the tool does not read.
    pub(crate) fn read(&self) -> Result<Input<'_>> {
        match self {
            Source::Set(set) => set.read().map(Input::Model),
            Source::File { path, map, .. } => match self.format()? {
                Format::Tpack => tpack::open(path, map).map(Input::Container),
                foreign => {
                    let import = importer(foreign).ok_or_else(|| {
                        CliError::input(format!(
                            "{}: tpack does not read {} files",
                            path.display(),
                            foreign.name()
                        ))
                    })?;
                    import.read(path, map).map(Input::Model)
                }
            },
        }
    }

    /// Verifies what [`Source::read`] left to verify: every payload of a container (padding and checksums,
    /// nested containers too, as `tpack verify` does). A foreign input was validated completely when read.
    /// `quiet` hides the progress.
    ///
    /// # Errors
    /// [`crate::Kind::Invalid`] naming the first corrupt entry.
    pub(crate) fn verify(&self, input: &Input<'_>, quiet: bool) -> Result<()> {
        match input {
            Input::Container(container) => check_intact(self.origin(), container, quiet),
            Input::Model(_) => Ok(()),
        }
    }
}

/// Verifies `container` (read from `input`) completely: the first corrupt entry is the error.
///
/// # Errors
/// [`crate::Kind::Invalid`] naming the first corrupt entry.
fn check_intact(input: &Path, container: &Container<'_>, quiet: bool) -> Result<()> {
    let bar = crate::progress::bytes(container.entries().map(|e| e.byte_len()).sum(), "verifying", quiet);
    let problems = tpack::check(container, &mut |n| bar.inc(n));
    bar.finish_and_clear();
    match problems.first() {
        Some(p) => Err(CliError::invalid(format!(
            "{} is corrupt, so it is not converted: entry {} {:?}: {} (`tpack verify` lists every problem)",
            input.display(),
            p.entry,
            p.name,
            p.what
        ))),
        None => Ok(()),
    }
}
