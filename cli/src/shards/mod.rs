//! Models stored in several files ("shards") as a source: a shard set read and merged into one model. (Sharded
//! output is written by each format's writer: `formats::safetensors`, `formats::gguf`.)
//!
//! Two kinds of shard set are read ([`ShardSet::find`]):
//! - Hugging Face's sharded safetensors or PyTorch models ([`hf_index`]): an index `*.safetensors.index.json` or
//!   `*.bin.index.json` (given as a file, or the directory that holds it) maps each tensor to one of the shard
//!   files next to it;
//! - llama.cpp's split GGUF ([`gguf_split`]): the first split `NAME-00001-of-0000N.gguf`, whose `split.*` keys
//!   say how many splits there are; the others are found by name.
//!
//! Design: the set owns one memory map per shard for as long as it lives. Each shard is read by the one-file
//! reader of its format ([`crate::formats::Import`], unchanged), into a [`Model`] that borrows that shard's
//! map; the set's own checks compare the models with the index or the split keys, and [`merge`] joins them
//! into one model, which the one container writer streams out. So memory stays O(table), every payload is
//! copied once from its map, and the one-file path is untouched. Rejected: a `read_many` on the `Import`
//! trait, which would give every format the set logic of the others.

mod gguf_split;
pub(crate) mod hf_index;
mod merge;
mod shard;

use shard::Shard;

use std::path::{Path, PathBuf};

use ::tpack::OwnedMetaValue;

use crate::error::{CliError, Result};
use crate::formats::{gguf::Gguf, pytorch::Pytorch, safetensors::Safetensors, Format, Import, Model};

/// What ties the shards of a set together.
#[derive(Debug)]
enum SetKind {
    /// A Hugging Face index (the file is [`ShardSet::origin`]).
    Index(hf_index::Index),
    /// A llama.cpp split GGUF (the first split is [`ShardSet::origin`]).
    GgufSplit,
}

/// A model stored in several files, every one of them present and mapped.
#[derive(Debug)]
pub(crate) struct ShardSet {
    /// The file that names the set: the index, or the first split.
    origin: PathBuf,
    kind: SetKind,
    /// The shards in order: the index's files in natural order, or the splits by number.
    shards: Vec<Shard>,
}

/// What a path names: a shard set, or one file, mapped (once: the split check reads the same map).
#[derive(Debug)]
pub(crate) enum Found {
    /// A shard set, every shard present and mapped.
    Set(ShardSet),
    /// One file, which the one-file path reads (and refuses, if it must).
    File(memmap2::Mmap),
}

impl ShardSet {
    /// What `input` names: a shard set, if it names one (a Hugging Face index: a `.json` file, or a directory
    /// that holds one `*.safetensors.index.json`; or the first split of a split GGUF), with every shard
    /// present and mapped; else the one file `input`, mapped.
    ///
    /// # Errors
    /// A missing or unreadable shard, an invalid index, a later split given instead of the first, splits that
    /// disagree: each named; [`crate::Kind::Io`] when `input` cannot be mapped.
    pub(crate) fn find(input: &Path) -> Result<Found> {
        if let Some(index_path) = hf_index::locate(input)? {
            let (index, shards) = hf_index::open(&index_path)?;
            return Ok(Found::Set(ShardSet { origin: index_path, kind: SetKind::Index(index), shards }));
        }
        let map = crate::fsutil::map(input)?;
        // Only a file that is GGUF by its first bytes can be a split.
        if !crate::formats::gguf::sniff(&map) {
            return Ok(Found::File(map));
        }
        Ok(match gguf_split::open(input, map)? {
            Ok(shards) => {
                Found::Set(ShardSet { origin: input.to_path_buf(), kind: SetKind::GgufSplit, shards })
            }
            Err(map) => Found::File(map),
        })
    }

    /// The format of the shards.
    #[must_use]
    pub(crate) fn format(&self) -> Format {
        match self.kind {
            SetKind::Index(_) => hf_index::shard_format(&self.origin),
            SetKind::GgufSplit => Format::Gguf,
        }
    }

    /// The file that names the set: the index, or the first split.
    #[must_use]
    pub(crate) fn origin(&self) -> &Path {
        &self.origin
    }

    /// How many shards the set has.
    #[must_use]
    pub(crate) fn len(&self) -> usize {
        self.shards.len()
    }

    /// Every file of the set: the index (if there is one) and the shards.
    pub(crate) fn files(&self) -> impl Iterator<Item = &Path> {
        let index = matches!(self.kind, SetKind::Index(_)).then_some(self.origin.as_path());
        index.into_iter().chain(self.shards.iter().map(|s| s.path.as_path()))
    }

    /// Reads every shard with its format's reader, checks the set's consistency and merges the shards into
    /// one model, tensors in shard order, with what the user should know about it in its notes.
    ///
    /// # Errors
    /// [`crate::Kind::Input`]: a shard is invalid, or the shards disagree with the index, the split keys or
    /// each other.
    pub(crate) fn read(&self) -> Result<Model<'_>> {
        let mut models = Vec::with_capacity(self.shards.len());
        let mut notes = Vec::new();
        match &self.kind {
            SetKind::Index(index) => {
                let import: &dyn Import = match hf_index::shard_format(&self.origin) {
                    Format::Pytorch => &Pytorch,
                    _ => &Safetensors,
                };
                for s in &self.shards {
                    models.push(import.read(&s.path, &s.map)?);
                }
                notes.extend(hf_index::check(&self.origin, index, &self.shards, &models)?);
                // The index's own metadata (other than total_size) is the model's too: huggingface_hub puts a
                // caller's metadata there when it shards. It joins the shards' under the same rule.
                if let Some(first) = models.first_mut() {
                    first.metadata.extend(
                        index.metadata.iter().map(|(k, v)| (k.clone(), OwnedMetaValue::from(v.as_str()))),
                    );
                }
                if !index.metadata.is_empty() {
                    notes.push(format!(
                        "the index's metadata ({}) is kept as string metadata",
                        index.metadata.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", ")
                    ));
                }
            }
            SetKind::GgufSplit => {
                let alignment = self.first_alignment();
                for (no, s) in self.shards.iter().enumerate() {
                    let mut model = Gguf.read(&s.path, &s.map)?;
                    gguf_split::strip(&mut model, alignment, no == 0);
                    models.push(model);
                }
            }
        }
        let parts = self.shards.iter().map(|s| s.path.as_path()).zip(models).collect();
        let mut model = merge::merge(&self.origin, parts)?;
        if let (SetKind::GgufSplit, Some(declared)) = (&self.kind, gguf_split::declared_tensors(&self.shards))
        {
            let held = model.entries.len() as u64;
            if held != declared {
                return Err(CliError::input(format!(
                    "{}: its {} is {declared}, but its {} splits hold {held} tensors",
                    self.origin.display(),
                    gguf_split::SPLIT_TENSORS_COUNT,
                    self.shards.len()
                )));
            }
        }
        model.notes.extend(notes);
        Ok(model)
    }

    /// The payload alignment of the first split's tensors, as the GGUF reader gives them: its
    /// `general.alignment` (or GGUF's default), at least tpack's default. One above tpack's maximum is refused
    /// when the first split is read.
    fn first_alignment(&self) -> u32 {
        let file = self.shards.first().and_then(|s| tpack_gguf::parse(&s.map).ok());
        let asked = file.and_then(|f| u32::try_from(f.alignment).ok()).unwrap_or(0);
        asked.max(::tpack::format::DEFAULT_ALIGNMENT)
    }
}
