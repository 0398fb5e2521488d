//! [`Shard`]: one file of a shard set, which the set's readers (`hf_index`, `gguf_split`) open and the set
//! holds; a module of its own so that they take it from here, not from the set that uses them.

use std::path::PathBuf;

/// One file of a shard set, mapped for as long as the set lives.
#[derive(Debug)]
pub(crate) struct Shard {
    /// Its path, as messages name it.
    pub(crate) path: PathBuf,
    /// Its content.
    pub(crate) map: memmap2::Mmap,
}
