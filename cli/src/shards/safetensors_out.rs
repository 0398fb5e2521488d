//! `tpack convert IN.tpack OUT.safetensors --max-shard-size SIZE`: a sharded safetensors model as
//! `transformers`' `save_pretrained` writes one: `{prefix}-00001-of-0000N.safetensors` … and
//! `{prefix}.safetensors.index.json`, where `prefix` is OUT's name without its extension.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::plan::hf_shards;
use crate::commands::convert::{check_intact, check_output_path, export_file};
use crate::error::{CliError, Result};
use crate::formats::safetensors::{dropped_targets, Safetensors, Tensor};
use crate::formats::tpack;
use crate::fsutil::{check_overwrite, size_short, size_words};
use crate::output::StagingDir;

/// The name of shard `i` (1-based) of `n`, as `huggingface_hub` formats it (`-{i:05d}-of-{n:05d}`).
#[must_use]
pub(crate) fn shard_name(prefix: &str, i: usize, n: usize) -> String {
    format!("{prefix}-{i:05}-of-{n:05}.safetensors")
}

/// The name of the index of the shards named after `prefix`.
#[must_use]
pub(crate) fn index_name(prefix: &str) -> String {
    format!("{prefix}{}", super::hf_index::INDEX_SUFFIX)
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

/// Writes the verified `bytes` (the container `input`) as safetensors shards of at most `limit` bytes next
/// to `output`, planned as Hugging Face plans them ([`hf_shards`]), with their index. A model that fits in
/// one shard is written as the one file `output`, with no index, as Hugging Face writes it. Every shard has
/// the whole `__metadata__`, so each stays a self-describing safetensors file.
///
/// All files are written in a staging directory and renamed into place together at the end (the index last);
/// an existing shard or index is replaced only with `force`. With `force`, a file `output` left from an
/// unsharded save is removed, as the index would otherwise sit beside a stale copy that loaders prefer.
///
/// # Errors
/// An invalid or corrupt container, an entry safetensors cannot hold, an existing file without `force`, I/O.
pub(crate) fn from_tpack(
    input: &Path,
    bytes: &[u8],
    output: &Path,
    limit: u64,
    force: bool,
    quiet: bool,
) -> Result<String> {
    let container = tpack::open(input, bytes)?;
    let tensors = Safetensors::tensors(input, &container)?;
    let sizes: Vec<u64> = tensors.iter().map(|t| t.data.len() as u64).collect();
    let plan = hf_shards(&sizes, limit);
    if plan.len() <= 1 {
        check_intact(input, &container, quiet)?;
        return export_file(&Safetensors, input, &container, output);
    }
    let prefix = output.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let count = plan.len();
    let mut names: Vec<String> = (1..=count).map(|i| shard_name(prefix, i, count)).collect();
    names.push(index_name(prefix));
    for name in &names {
        let path = dir.join(name);
        check_output_path(input, &path)?;
        check_overwrite(&path, force)?;
    }
    check_intact(input, &container, quiet)?;

    let metadata = Safetensors::metadata(&container);
    let staging = StagingDir::create(output)
        .map_err(|e| CliError::io("cannot create a directory next to", output, &e))?;
    let mut slots: Vec<Option<Tensor<'_>>> = tensors.into_iter().map(Some).collect();
    let mut weight_map: BTreeMap<&str, &str> = BTreeMap::new();
    let mut largest = 0u64;
    for (shard, name) in plan.iter().zip(&names) {
        let part: Vec<Tensor<'_>> = shard.iter().filter_map(|&i| slots.get_mut(i)?.take()).collect();
        largest = largest.max(part.iter().map(|t| t.data.len() as u64).sum());
        for t in &part {
            weight_map.insert(t.name, name);
        }
        Safetensors::write_file(input, part, &metadata, &staging.path().join(name))?;
    }
    let index = names.last().map(String::as_str).unwrap_or_default();
    let index_path = dir.join(index);
    let text = index_json(sizes.iter().sum(), &weight_map);
    let mut file = staging.create_file(index).map_err(|e| CliError::io("cannot create", &index_path, &e))?;
    file.write_all(text.as_bytes()).map_err(|e| CliError::io("cannot write", &index_path, &e))?;
    drop(file);
    staging.commit_into(&names, &dir).map_err(|e| CliError::io("cannot save", &index_path, &e))?;

    let mut report = format!(
        "converted {} ({} tensors, {} metadata values) to {count} safetensors shards ({} to {}, the largest {}) \
         and their index {}\n",
        input.display(),
        weight_map.len(),
        metadata.len(),
        dir.join(&names[0]).display(),
        names.get(count - 1).map(String::as_str).unwrap_or_default(),
        size_short(largest),
        index_path.display()
    );
    if largest > limit {
        report.push_str(&format!(
            "note: a tensor larger than the limit of {} has a shard of its own, as Hugging Face does\n",
            size_words(limit)
        ));
    }
    if force && output.symlink_metadata().is_ok_and(|m| m.is_file()) {
        std::fs::remove_file(output).map_err(|e| CliError::io("cannot remove", output, &e))?;
        report.push_str(&format!(
            "note: removed {}, the unsharded file the shards replace (loaders would prefer it to the index)\n",
            output.display()
        ));
    }
    if let Some(note) = dropped_targets(&container) {
        report.push_str(&format!("note: {note}\n"));
    }
    Ok(report)
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
