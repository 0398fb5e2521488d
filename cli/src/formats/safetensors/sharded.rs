//! Sharded safetensors output, as `transformers`' `save_pretrained` writes a model: `{prefix}-00001-of-0000N.safetensors`
//! … and `{prefix}.safetensors.index.json`, where `prefix` is OUT's name without its extension. The shards are
//! planned as Hugging Face plans them ([`hf_shards`]); the index is laid out byte for byte as `transformers`
//! dumps it.

use std::collections::BTreeMap;
use std::path::Path;

use super::plan::hf_shards;
use super::{Safetensors, Tensor};
use crate::error::{CliError, Result};
use crate::fsutil::size_words;

/// How the name of an index ends (`model.safetensors.index.json`, `diffusion_pytorch_model.safetensors.index.json`).
pub(crate) const INDEX_SUFFIX: &str = ".safetensors.index.json";

/// The name of shard `i` (1-based) of `n`, as `huggingface_hub` formats it (`-{i:05d}-of-{n:05d}`).
#[must_use]
pub(crate) fn shard_name(prefix: &str, i: usize, n: usize) -> String {
    format!("{prefix}-{i:05}-of-{n:05}.safetensors")
}

/// The name of the index of the shards named after `prefix`.
#[must_use]
pub(crate) fn index_name(prefix: &str) -> String {
    format!("{prefix}{INDEX_SUFFIX}")
}

/// `text` with every non-ASCII character written as a JSON `\uXXXX` escape (UTF-16, lowercase hex), as
/// Python's `json.dumps` writes it by default; `text` must be JSON, whose non-ASCII characters can only be
/// inside strings.
fn ascii_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// The index as `transformers` writes it: `json.dumps(index, indent=2, sort_keys=True) + "\n"`.
#[must_use]
pub(crate) fn index_json(total_size: u64, weight_map: &BTreeMap<&str, &str>) -> String {
    let index = serde_json::json!({"metadata": {"total_size": total_size}, "weight_map": weight_map});
    // serde_json's pretty printer indents by two spaces and separates as Python's indent=2 does (`, ` never
    // appears: items end a line); without `preserve_order` its maps are sorted, as sort_keys=True sorts.
    let text = serde_json::to_string_pretty(&index).unwrap_or_default();
    ascii_json(&text) + "\n"
}

/// The shards of `tensors` of at most `limit` bytes each, as the indexes of the tensors in each.
#[must_use]
pub(crate) fn plan(tensors: &[Tensor<'_>], limit: u64) -> Vec<Vec<usize>> {
    let sizes: Vec<u64> = tensors.iter().map(|t| t.data.len() as u64).collect();
    hf_shards(&sizes, limit)
}

/// The names of the files of a model written as the file `name` in shards of the `plan`: `name` itself for
/// one shard (Hugging Face writes such a model as one file, with no index), else the shards and their index,
/// the index last.
#[must_use]
pub(crate) fn file_names(name: &str, plan: &[Vec<usize>]) -> Vec<String> {
    if plan.len() <= 1 {
        return vec![name.to_owned()];
    }
    let prefix = Path::new(name).file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    let count = plan.len();
    let mut names: Vec<String> = (1..=count).map(|i| shard_name(prefix, i, count)).collect();
    names.push(index_name(prefix));
    names
}

/// Writes `tensors` (read from `input`, which messages name) in the directory `dir` as the shards of `plan`
/// named `names` (from [`file_names`]: the shards, then the index), each with the whole `metadata`, so that
/// each stays a self-describing safetensors file; then the index. Returns the notes for the report.
///
/// # Errors
/// A layout safetensors refuses ([`crate::Kind::Input`]); I/O failures ([`crate::Kind::Io`]).
pub(crate) fn write(
    input: &Path,
    tensors: Vec<Tensor<'_>>,
    metadata: &BTreeMap<String, String>,
    plan: &[Vec<usize>],
    names: &[String],
    limit: u64,
    dir: &Path,
) -> Result<Vec<String>> {
    let total: u64 = tensors.iter().map(|t| t.data.len() as u64).sum();
    let mut slots: Vec<Option<Tensor<'_>>> = tensors.into_iter().map(Some).collect();
    let mut weight_map: BTreeMap<&str, &str> = BTreeMap::new();
    let mut largest = 0u64;
    for (shard, name) in plan.iter().zip(names) {
        let part: Vec<Tensor<'_>> = shard.iter().filter_map(|&i| slots.get_mut(i)?.take()).collect();
        largest = largest.max(part.iter().map(|t| t.data.len() as u64).sum());
        for t in &part {
            weight_map.insert(t.name, name);
        }
        Safetensors::write_file(input, part, metadata, &dir.join(name))?;
    }
    let index = names.last().map(String::as_str).unwrap_or_default();
    let index_path = dir.join(index);
    let text = index_json(total, &weight_map);
    let mut file = tpack::AtomicFile::create(&index_path)
        .map_err(|e| CliError::io("cannot create a file next to", &index_path, &e))?;
    {
        // Flushed here, not on drop, so that a failed write is an error and not lost.
        let mut sink = file.sink();
        embedded_io::Write::write_all(&mut sink, text.as_bytes())
            .and_then(|()| embedded_io::Write::flush(&mut sink))
            .map_err(|e| CliError::io("cannot write", &index_path, &e))?;
    }
    file.commit().map_err(|e| CliError::io("cannot save", &index_path, &e))?;
    let mut notes = vec![format!(
        "{} safetensors shards and their index {index}, as transformers' save_pretrained writes them; the largest \
         shard holds {}",
        plan.len(),
        size_words(largest)
    )];
    if largest > limit {
        notes.push(format!(
            "a tensor larger than the limit of {} has a shard of its own, as Hugging Face does",
            size_words(limit)
        ));
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_hugging_faces() {
        assert_eq!(shard_name("model", 1, 3), "model-00001-of-00003.safetensors");
        assert_eq!(index_name("model"), "model.safetensors.index.json");
    }

    /// The bytes Python's `json.dumps(index, indent=2, sort_keys=True) + "\n"` gives for this index.
    #[test]
    fn the_index_is_laid_out_as_transformers_writes_it() {
        let map = BTreeMap::from([
            ("b", "m-00002-of-00002.safetensors"),
            ("a.é😀", "m-00001-of-00002.safetensors"),
        ]);
        assert_eq!(
            index_json(12, &map),
            "{\n  \"metadata\": {\n    \"total_size\": 12\n  },\n  \"weight_map\": {\n    \
             \"a.\\u00e9\\ud83d\\ude00\": \"m-00001-of-00002.safetensors\",\n    \
             \"b\": \"m-00002-of-00002.safetensors\"\n  }\n}\n"
        );
    }
}
