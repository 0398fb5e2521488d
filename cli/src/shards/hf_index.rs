//! Hugging Face's sharded models: `model.safetensors.index.json` (or, for PyTorch shards,
//! `pytorch_model.bin.index.json`) and the shards it names, as `transformers`' `save_pretrained` and
//! `huggingface_hub`'s `save_torch_state_dict` write them:
//! `{"metadata": {"total_size": N, …}, "weight_map": {"tensor name": "model-00001-of-00003.safetensors", …}}`.
//! Which of the two an index is, its name says; every shard must then be a file of that format.

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

use super::shard::Shard;
use crate::error::{CliError, Kind, Result};
use crate::formats::safetensors::INDEX_SUFFIX;
use crate::formats::{Format, Model};

/// The name ending of an index of PyTorch shards (`pytorch_model.bin.index.json`).
pub(crate) const BIN_INDEX_SUFFIX: &str = ".bin.index.json";

/// The format of the shards the index at `path` names: PyTorch for a `*.bin.index.json`, else safetensors.
#[must_use]
pub(crate) fn shard_format(path: &Path) -> Format {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if name.ends_with(BIN_INDEX_SUFFIX) {
        Format::Pytorch
    } else {
        Format::Safetensors
    }
}

/// "sharded safetensors index" or "sharded PyTorch index", for messages about the index at `path`.
fn what_index(path: &Path) -> String {
    format!("sharded {} index", shard_format(path).name())
}

/// The largest index read: as large as the largest safetensors header the `safetensors` crate reads. A real
/// index is about 100 bytes per tensor.
const MAX_INDEX_LEN: u64 = 100_000_000;

/// The index's metadata key for the sum of the tensors' bytes.
const TOTAL_SIZE: &str = "total_size";

/// What an index says of `metadata.total_size`, the sum of every tensor's bytes. Loaders ignore it
/// (`transformers` reads only the `weight_map`), tools that drop tensors leave it stale and some writers
/// omit it: it is checked, and a missing, unreadable or stale one is a note, never a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TotalSize {
    /// Absent.
    Missing,
    /// A byte count.
    Bytes(u64),
    /// Present but no byte count: its JSON text.
    NotACount(String),
}

/// A parsed index: which shard holds each tensor.
#[derive(Debug)]
pub(crate) struct Index {
    /// `metadata.total_size`.
    pub(crate) total_size: TotalSize,
    /// The other `metadata` entries, as tpack string metadata: a JSON string as itself, any other value as
    /// its JSON text.
    pub(crate) metadata: Vec<(String, String)>,
    /// The shard file names, each once, in natural order (`model-00002-…` before `model-00010-…`).
    pub(crate) files: Vec<String>,
    /// Each tensor name and the index in `files` of the shard that holds it, sorted by name.
    pub(crate) weight_map: BTreeMap<String, usize>,
}

/// The index that `input` names, if it names one: `input` itself when its name ends in `.json`, or the one
/// `*.safetensors.index.json` in the directory `input` — or, when it has none, the one `*.bin.index.json`
/// (Hugging Face repositories often hold both; safetensors shards are the ones read without a pickle).
///
/// # Errors
/// [`Kind::Input`]: `input` is a directory with no index or with several; [`Kind::Io`]: it cannot be listed.
pub(crate) fn locate(input: &Path) -> Result<Option<PathBuf>> {
    if input.is_dir() {
        let listing = std::fs::read_dir(input).map_err(|e| CliError::io("cannot list", input, &e))?;
        let mut names: Vec<String> = listing.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
        names.sort_by(|a, b| crate::natural::cmp(a, b));
        let mut found: Vec<&String> = names.iter().filter(|name| name.ends_with(INDEX_SUFFIX)).collect();
        if found.is_empty() {
            found = names.iter().filter(|name| name.ends_with(BIN_INDEX_SUFFIX)).collect();
        }
        return match found.as_slice() {
            [one] => Ok(Some(input.join(one))),
            [] => {
                let model = names
                    .iter()
                    .find(|n| n.ends_with(".safetensors") || n.ends_with(".gguf") || n.ends_with(".bin"));
                let hint = match model {
                    Some(m) => format!(" (to convert one file, name it: {})", input.join(m).display()),
                    None => String::new(),
                };
                Err(CliError::input(format!(
                    "{} is a directory with no sharded model index (*{INDEX_SUFFIX} or *{BIN_INDEX_SUFFIX}) in it; \
                     give convert a model file, an index, or the directory that holds an index{hint}",
                    input.display()
                )))
            }
            several => Err(CliError::input(format!(
                "{} holds {} {}es ({}); give convert the one to read",
                input.display(),
                several.len(),
                what_index(Path::new(several[0].as_str())),
                several.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        };
    }
    let json = input.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("json"));
    Ok(json.then(|| input.to_path_buf()))
}

/// Whether `name` is a plain file name: one path component, not `.` or `..`, no separator of any platform
/// (`/`, `\`, and `:` of Windows drives), no NUL. Shards must lie next to their index, so an index can never make convert read outside its directory
/// (a shard that is a symlink is followed: Hugging Face's cache links every shard to a blob elsewhere).
fn plain_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    let one = matches!((parts.next(), parts.next()), (Some(Component::Normal(_)), None));
    one && !name.contains(['/', '\\', ':', '\0'])
}

/// Parses the index `text` (the content of `path`, which messages name), checking its structure completely:
/// an object with a `weight_map` object of tensor names to plain file names, and an optional `metadata` object
/// (whose `total_size`, if it is no byte count, is kept as [`TotalSize::NotACount`]). Repeated keys are
/// refused, as they are in safetensors headers.
///
/// # Errors
/// [`Kind::Input`] naming the index and what is wrong.
pub(crate) fn parse(path: &Path, text: &[u8]) -> Result<Index> {
    let bad = |why: String| {
        CliError::input(format!("{} is not a valid {}: {why}", path.display(), what_index(path)))
    };
    let text = std::str::from_utf8(text).map_err(|e| bad(format!("it is not UTF-8 text ({e})")))?;
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("it is not JSON ({e})")))?;
    crate::json_strict::check_no_duplicate_keys(text)
        .map_err(|why| bad(format!("it is ambiguous: {why}")))?;
    let top = value.as_object().ok_or_else(|| bad("it is not a JSON object".to_owned()))?;
    let map = top
        .get("weight_map")
        .ok_or_else(|| bad("it has no \"weight_map\"".to_owned()))?
        .as_object()
        .ok_or_else(|| bad("its \"weight_map\" is not an object".to_owned()))?;
    if map.is_empty() {
        return Err(bad("its \"weight_map\" names no tensors".to_owned()));
    }
    let mut names: Vec<&str> = Vec::new();
    for (tensor, file) in map {
        let file = file.as_str().ok_or_else(|| {
            bad(format!("the \"weight_map\" entry of tensor {tensor:?} is not a file name (a JSON string)"))
        })?;
        if !plain_name(file) {
            return Err(bad(format!(
                "tensor {tensor:?} is mapped to {file:?}, which is not a plain file name; shards must lie in the \
                 index's own directory (no directories, no \"..\", no absolute paths)"
            )));
        }
        names.push(file);
    }
    names.sort_by(|a, b| crate::natural::cmp(a, b));
    names.dedup();
    let files: Vec<String> = names.iter().map(|&n| n.to_owned()).collect();
    let position: HashMap<&str, usize> = names.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let weight_map = map
        .iter()
        .map(|(tensor, file)| {
            (tensor.clone(), file.as_str().and_then(|f| position.get(f)).copied().unwrap_or(0))
        })
        .collect();

    let mut total_size = TotalSize::Missing;
    let mut metadata = Vec::new();
    match top.get("metadata") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Object(m)) => {
            for (key, v) in m {
                if key == TOTAL_SIZE {
                    // transformers writes an integer; an integral float is the same count.
                    let n = v.as_u64().or_else(|| {
                        v.as_f64()
                            .filter(|f| f.fract() == 0.0 && (0.0..9.007_199_254_740_992e15).contains(f))
                            .map(|f| f as u64)
                    });
                    total_size = n.map_or_else(|| TotalSize::NotACount(v.to_string()), TotalSize::Bytes);
                } else {
                    let text = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    metadata.push((key.clone(), text));
                }
            }
        }
        Some(_) => return Err(bad("its \"metadata\" is not an object".to_owned())),
    }
    Ok(Index { total_size, metadata, files, weight_map })
}

/// Reads the index at `path` and maps every shard it names, checking that each exists and is a file of the
/// index's format ([`shard_format`]; what each holds is checked by [`check`], after each is read).
///
/// # Errors
/// [`Kind::Input`]: the index is invalid, or a shard is not of its format; [`Kind::Io`]: the index or a
/// shard is missing or cannot be read.
pub(crate) fn open(path: &Path) -> Result<(Index, Vec<Shard>)> {
    let length = std::fs::metadata(path).map_err(|e| CliError::io("cannot open", path, &e))?.len();
    if length > MAX_INDEX_LEN {
        return Err(CliError::input(format!(
            "{} is not a valid {}: it is {length} bytes long, more than the {MAX_INDEX_LEN} an index may be",
            path.display(),
            what_index(path)
        )));
    }
    let text = std::fs::read(path).map_err(|e| CliError::io("cannot read", path, &e))?;
    let index = parse(path, &text)?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut shards = Vec::with_capacity(index.files.len());
    for (i, file) in index.files.iter().enumerate() {
        let shard_path = dir.join(file);
        if let Err(e) = shard_path.metadata() {
            let mapped: Vec<&str> =
                index.weight_map.iter().filter(|(_, &f)| f == i).map(|(t, _)| t.as_str()).collect();
            let example = mapped.first().copied().unwrap_or_default();
            return Err(if e.kind() == std::io::ErrorKind::NotFound {
                CliError::new(
                    Kind::Io,
                    format!(
                        "{} maps {} tensors (such as {example:?}) to {file}, but {} does not exist; the shard set \
                         is incomplete, so download or copy the missing shard",
                        path.display(),
                        mapped.len(),
                        shard_path.display()
                    ),
                )
            } else {
                CliError::io("cannot open", &shard_path, &e)
            });
        }
        let map = crate::fsutil::map(&shard_path)?;
        let format = shard_format(path);
        if Format::sniff(&map) != Some(format) {
            let what = match Format::sniff(&map) {
                Some(other) => format!("it is a {} file", other.name()),
                None if map.is_empty() => "it is empty".to_owned(),
                None => format!("its first bytes are not those of a {} file", format.name()),
            };
            return Err(CliError::input(format!(
                "{}: shard {} is not a {} file ({what})",
                path.display(),
                shard_path.display(),
                format.name()
            )));
        }
        shards.push(Shard { path: shard_path, map });
    }
    Ok((index, shards))
}

/// Checks that the index at `path` and the models read from its `shards` agree: every tensor is in exactly
/// one shard, the one the index maps it to, and no shard holds a tensor the index does not name. The first
/// disagreement is the error. `total_size` is compared with the sum of the tensors' bytes too, but only for
/// the report: a missing, unreadable or stale one is a note (see [`TotalSize`]).
///
/// # Errors
/// [`Kind::Input`] naming the index, the shard and the tensor.
pub(crate) fn check(
    path: &Path,
    index: &Index,
    shards: &[Shard],
    models: &[Model<'_>],
) -> Result<Vec<String>> {
    let disagree = |why: String| CliError::input(format!("{}: {why}", path.display()));
    let shown = |i: usize| shards.get(i).map(|s| s.path.display().to_string()).unwrap_or_default();
    let mut holders: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, model) in models.iter().enumerate() {
        for e in &model.entries {
            holders.entry(e.name.as_ref()).or_default().push(i);
        }
    }
    for (i, model) in models.iter().enumerate() {
        for e in &model.entries {
            let name = e.name.as_ref();
            let mapped = index.weight_map.get(name).copied();
            if let Some([first, second, ..]) = holders.get(name).map(Vec::as_slice) {
                let says = match mapped {
                    Some(f) => format!("the index maps it to {}", shown(f)),
                    None => "the index does not name it".to_owned(),
                };
                return Err(disagree(format!(
                    "tensor {name:?} is in two shards, {} and {}; {says}",
                    shown(*first),
                    shown(*second)
                )));
            }
            match mapped {
                None => {
                    return Err(disagree(format!(
                        "shard {} holds tensor {name:?}, which the index does not name; the index and its shards \
                         disagree (one of them is stale or was edited)",
                        shown(i)
                    )))
                }
                Some(f) if f != i => {
                    return Err(disagree(format!(
                        "shard {} holds tensor {name:?}, but the index maps it to {}",
                        shown(i),
                        shown(f)
                    )))
                }
                Some(_) => {}
            }
        }
    }
    if let Some((name, &f)) = index.weight_map.iter().find(|(name, _)| !holders.contains_key(name.as_str())) {
        return Err(disagree(format!(
            "the index maps tensor {name:?} to {}, but that shard has no tensor of that name",
            shown(f)
        )));
    }
    let sum: u64 = models.iter().flat_map(|m| &m.entries).map(|e| e.length).sum();
    Ok(total_size_note(&index.total_size, sum).into_iter().collect())
}

/// The note on an index's `total_size` when it is not `sum`, the bytes its shards' tensors hold.
fn total_size_note(total_size: &TotalSize, sum: u64) -> Option<String> {
    let why = match total_size {
        TotalSize::Bytes(total) if *total == sum => return None,
        TotalSize::Bytes(total) => format!("is {total} bytes, but the shards' tensors hold {sum} bytes"),
        TotalSize::Missing => "is missing".to_owned(),
        TotalSize::NotACount(text) => format!("is {text}, not a byte count"),
    };
    Some(format!(
        "the index's metadata.total_size {why}; loaders do not read it (transformers reads only the weight_map, \
         which agrees with the shards), so the model is converted all the same"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> std::result::Result<Index, String> {
        parse(Path::new("i.json"), text.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn an_index_as_transformers_writes_it() {
        let i = parsed(
            r#"{"metadata": {"total_size": 28, "total_parameters": 7, "format": "pt"},
                "weight_map": {"b": "model-00002-of-00010.safetensors", "a": "model-00010-of-00010.safetensors",
                               "c": "model-00002-of-00010.safetensors"}}"#,
        )
        .unwrap();
        assert_eq!(i.total_size, TotalSize::Bytes(28));
        assert_eq!(i.files, ["model-00002-of-00010.safetensors", "model-00010-of-00010.safetensors"]);
        assert_eq!(
            i.weight_map.iter().map(|(k, &v)| (k.as_str(), v)).collect::<Vec<_>>(),
            [("a", 1), ("b", 0), ("c", 0)]
        );
        assert_eq!(
            i.metadata,
            [("format".to_owned(), "pt".to_owned()), ("total_parameters".to_owned(), "7".to_owned())]
        );
        assert_eq!(
            parsed(r#"{"metadata": {"total_size": 28.0}, "weight_map": {"a": "x"}}"#).unwrap().total_size,
            TotalSize::Bytes(28)
        );
        assert_eq!(parsed(r#"{"weight_map": {"a": "x"}}"#).unwrap().total_size, TotalSize::Missing);
        for (text, kept) in [("-1", "-1"), ("\"5\"", "\"5\""), ("null", "null"), ("2.5", "2.5")] {
            let index = format!(r#"{{"metadata": {{"total_size": {text}}}, "weight_map": {{"a": "x"}}}}"#);
            assert_eq!(parsed(&index).unwrap().total_size, TotalSize::NotACount(kept.to_owned()), "{text}");
        }
    }

    #[test]
    fn file_names_outside_the_index_directory_are_refused() {
        for name in [
            "../x.safetensors",
            "/etc/passwd",
            "sub/x.safetensors",
            "..",
            ".",
            "",
            "a\\b",
            "C:x",
            "c:",
            "a\u{0}b",
        ] {
            let text = serde_json::json!({"weight_map": {"t": name}}).to_string();
            let e = parsed(&text).unwrap_err();
            assert!(e.contains("is not a plain file name"), "{name:?}: {e}");
        }
        assert!(plain_name("model-00001-of-00002.safetensors") && plain_name("..x") && plain_name("x.."));
    }

    #[test]
    fn malformed_indexes_are_refused_in_words() {
        for (text, why) in [
            ("[]", "it is not a JSON object"),
            ("{", "it is not JSON"),
            ("{}", "it has no \"weight_map\""),
            (r#"{"weight_map": []}"#, "is not an object"),
            (r#"{"weight_map": {}}"#, "names no tensors"),
            (r#"{"weight_map": {"a": 1}}"#, "is not a file name"),
            (r#"{"weight_map": {"a": "x", "a": "y"}}"#, "it is ambiguous"),
            (r#"{"metadata": 1, "weight_map": {"a": "x"}}"#, "\"metadata\" is not an object"),
        ] {
            let e = parsed(text).unwrap_err();
            assert!(
                e.starts_with("i.json is not a valid sharded safetensors index: ") && e.contains(why),
                "{text}: {e}"
            );
        }
        let e = parse(Path::new("i.json"), b"\xff").unwrap_err().to_string();
        assert!(e.contains("not UTF-8"), "{e}");
    }

    #[test]
    fn a_total_size_that_is_not_the_sum_is_a_note() {
        assert_eq!(total_size_note(&TotalSize::Bytes(12), 12), None);
        let stale = total_size_note(&TotalSize::Bytes(11), 12).unwrap();
        assert!(
            stale.starts_with("the index's metadata.total_size is 11 bytes, but the shards' tensors hold 12")
        );
        assert!(total_size_note(&TotalSize::Missing, 12).unwrap().contains("total_size is missing;"));
        let text = total_size_note(&TotalSize::NotACount("\"5\"".into()), 12).unwrap();
        assert!(text.contains("total_size is \"5\", not a byte count;"), "{text}");
    }
}
