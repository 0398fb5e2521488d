//! llama.cpp's split GGUF: `NAME-00001-of-00003.gguf` … `NAME-00003-of-00003.gguf`, as `llama-gguf-split` and
//! gguf-py's `GGUFWriter(split_max_tensors=…/split_max_size=…)` write them. Each split is a complete GGUF file
//! with the keys `split.no` (u16, 0-based), `split.count` (u16) and `split.tensors.count` (i32, the tensors of
//! all splits together); the first split holds the model's metadata (and may hold no tensors), the others
//! only the split keys. llama.cpp finds the other splits by name, from the first one's.

use std::path::{Path, PathBuf};

use tpack_gguf::{Gguf, GgufValue};

use super::shard::Shard;
use crate::error::{CliError, Kind, Result};
use crate::formats::gguf::{KEY_ORDER, UNPADDED};
use crate::formats::Model;
use tpack::{MetaValue, OwnedMetaValue};

/// The split's 0-based number.
pub(crate) const SPLIT_NO: &str = "split.no";
/// How many splits there are.
pub(crate) const SPLIT_COUNT: &str = "split.count";
/// How many tensors all splits hold together.
pub(crate) const SPLIT_TENSORS_COUNT: &str = "split.tensors.count";
/// The prefix of the keys that describe the split, not the model: dropped from the merged metadata.
pub(crate) const SPLIT_KEYS: &str = "split.";

/// What a split says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Split {
    /// `split.no`.
    no: u64,
    /// `split.count`.
    count: u64,
    /// `split.tensors.count`, if present.
    tensors: Option<u64>,
}

/// A non-negative integer metadata value of any width (llama.cpp writes u16 and i32; other writers may not).
fn integer(v: &GgufValue<'_>) -> Option<u64> {
    match *v {
        GgufValue::U8(x) => Some(u64::from(x)),
        GgufValue::U16(x) => Some(u64::from(x)),
        GgufValue::U32(x) => Some(u64::from(x)),
        GgufValue::U64(x) => Some(x),
        GgufValue::I8(x) => u64::try_from(x).ok(),
        GgufValue::I16(x) => u64::try_from(x).ok(),
        GgufValue::I32(x) => u64::try_from(x).ok(),
        GgufValue::I64(x) => u64::try_from(x).ok(),
        _ => None,
    }
}

/// The split keys of `file` (the content of `path`), or `None` for a file that is no split (no
/// `split.count`).
fn split_of(path: &Path, file: &Gguf<'_>) -> Result<Option<Split>> {
    let key = |k: &str| -> Result<Option<u64>> {
        match file.get(k) {
            None => Ok(None),
            Some(v) => integer(v).map(Some).ok_or_else(|| {
                CliError::input(format!("{}: metadata {k:?} is not a non-negative integer", path.display()))
            }),
        }
    };
    let Some(count) = key(SPLIT_COUNT)? else {
        return Ok(None);
    };
    let no = key(SPLIT_NO)?.ok_or_else(|| {
        CliError::input(format!(
            "{}: it has {SPLIT_COUNT} but no {SPLIT_NO}, so it is no valid split",
            path.display()
        ))
    })?;
    if count == 0 || no >= count {
        return Err(CliError::input(format!(
            "{}: its {SPLIT_NO} is {no} and its {SPLIT_COUNT} {count}, which no split can have",
            path.display()
        )));
    }
    Ok(Some(Split { no, count, tensors: key(SPLIT_TENSORS_COUNT)? }))
}

/// The end of the name of split `no` (0-based) of `count`, as llama.cpp names splits.
fn suffix(no: u64, count: u64) -> String {
    format!("-{:05}-of-{count:05}.gguf", no + 1)
}

/// The path of split `no` of `count` next to `first`, whose name is `prefix` + the first split's suffix.
fn sibling(first: &Path, prefix: &str, no: u64, count: u64) -> PathBuf {
    first.with_file_name(format!("{prefix}{}", suffix(no, count)))
}

/// What the splits must share with the first: the format version, the byte order and the alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    version: u32,
    big_endian: bool,
    alignment: u64,
}

/// If `map` (the content of `input`) is the first split of a split GGUF, maps every other split and checks
/// that each is there, is a GGUF file, and agrees with the first: its `split.no` is its place, its
/// `split.count` and `split.tensors.count` are the first's, and so are its version, byte order and alignment
/// (a split without `general.alignment` takes the first's, as gguf-py and gguf-split write them). A GGUF file
/// that is no split, or that does not parse (the one-file path says why), gives its map back.
///
/// # Errors
/// [`Kind::Input`]: `input` is a later split, is named so that its splits cannot be found, or a split
/// disagrees; [`Kind::Io`]: a split is missing or cannot be read.
pub(crate) fn open(
    input: &Path,
    map: memmap2::Mmap,
) -> Result<std::result::Result<Vec<Shard>, memmap2::Mmap>> {
    let split = match tpack_gguf::parse(&map) {
        Ok(first) => split_of(input, &first)?.map(|split| (split, first)),
        Err(_) => None,
    };
    let Some((split, first)) = split else {
        return Ok(Err(map));
    };
    let name = input.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let own = suffix(split.no, split.count);
    let prefix = name.strip_suffix(&own);
    if split.no != 0 {
        let hint = match prefix {
            Some(p) => format!("; convert its first split, {}", sibling(input, p, 0, split.count).display()),
            None => String::new(),
        };
        return Err(CliError::input(format!(
            "{} is split {} of {} of a split GGUF model; a split model is converted from its first split{hint}",
            input.display(),
            split.no + 1,
            split.count
        )));
    }
    let prefix = prefix.ok_or_else(|| {
        CliError::input(format!(
            "{} is the first of {} splits of a GGUF model, but its name does not end in {own}, so its other \
             splits cannot be found; name the splits as llama.cpp's gguf-split does (NAME{own}, …)",
            input.display(),
            split.count
        ))
    })?;
    let layout = Layout { version: first.version, big_endian: first.big_endian, alignment: first.alignment };
    let explicit_alignment = first.get("general.alignment").is_some();
    drop(first);
    let mut shards = vec![Shard { path: input.to_path_buf(), map }];
    for no in 1..split.count {
        let path = sibling(input, prefix, no, split.count);
        let disagree = |why: String| {
            CliError::input(format!(
                "{}: {why}, but {} is split 1 of {}",
                path.display(),
                input.display(),
                split.count
            ))
        };
        if let Err(e) = path.metadata() {
            return Err(if e.kind() == std::io::ErrorKind::NotFound {
                CliError::new(
                    Kind::Io,
                    format!(
                        "{} is split 1 of {}, but split {} ({}) does not exist; the split set is incomplete, so \
                         download or copy the missing split",
                        input.display(),
                        split.count,
                        no + 1,
                        path.display()
                    ),
                )
            } else {
                CliError::io("cannot open", &path, &e)
            });
        }
        let map = crate::fsutil::map(&path)?;
        if !crate::formats::gguf::sniff(&map) {
            return Err(CliError::input(format!(
                "{}: split {} of {} is not a GGUF file (it does not start with GGUF's magic)",
                path.display(),
                no + 1,
                split.count
            )));
        }
        let file = tpack_gguf::parse(&map)
            .map_err(|e| CliError::input(format!("{} is not a valid GGUF file: {e}", path.display())))?;
        let Some(this) = split_of(&path, &file)? else {
            return Err(disagree(format!("it has no {SPLIT_COUNT}, so it is not a split of this model")));
        };
        if this.no != no {
            return Err(CliError::input(format!(
                "{}: its {SPLIT_NO} is {}, but by its name it is split {} of {} ({SPLIT_NO} {no}); the splits are \
                 misnamed or mixed up",
                path.display(),
                this.no,
                no + 1,
                split.count
            )));
        }
        if this.count != split.count {
            return Err(disagree(format!("its {SPLIT_COUNT} is {}, not {}", this.count, split.count)));
        }
        if let (Some(a), Some(b)) = (this.tensors, split.tensors) {
            if a != b {
                return Err(disagree(format!("its {SPLIT_TENSORS_COUNT} is {a}, not {b}")));
            }
        }
        if file.version != layout.version {
            return Err(disagree(format!("it is GGUF version {}, not {}", file.version, layout.version)));
        }
        if file.big_endian != layout.big_endian {
            let order = |b: bool| if b { "big-endian" } else { "little-endian" };
            return Err(disagree(format!(
                "it is {}, not {}",
                order(file.big_endian),
                order(layout.big_endian)
            )));
        }
        let own_alignment = file.get("general.alignment").is_some();
        if (own_alignment || !explicit_alignment) && file.alignment != layout.alignment {
            return Err(disagree(format!("its alignment is {}, not {}", file.alignment, layout.alignment)));
        }
        drop(file);
        shards.push(Shard { path, map });
    }
    Ok(Ok(shards))
}

/// Prepares the model read from one split for merging: drops the `split.*` keys and the record of a split
/// with no padding ([`UNPADDED`]), which describe the files and not the model (and, but for the `first` split, its record of the key order), and raises each payload alignment to `alignment`, the first split's (so that a split
/// without `general.alignment` keeps the layout the model's `general.alignment` asks for).
pub(super) fn strip(model: &mut Model<'_>, alignment: u32, first: bool) {
    // A split's padding describes that file, not the merged model (which has tensors, so is padded).
    model.metadata.retain(|(key, _)| !key.starts_with(SPLIT_KEYS) && key != UNPADDED);
    // The recorded GGUF key order (`gguf.key_order`) is the first split's, which holds the model's metadata;
    // the later splits' orders list only their split keys and would disagree with it in the merge.
    if first {
        for (key, value) in &mut model.metadata {
            let MetaValue::StringArray(keys) = value.as_value() else { continue };
            if key == KEY_ORDER {
                // Fewer items of a valid string[]: always a valid value, so the error arm is never taken.
                if let Ok(kept) = OwnedMetaValue::string_array(keys.filter(|k| !k.starts_with(SPLIT_KEYS))) {
                    *value = kept;
                }
            }
        }
    } else {
        model.metadata.retain(|(key, _)| key != KEY_ORDER);
    }
    for e in &mut model.entries {
        e.alignment = e.alignment.max(alignment);
    }
}

/// The number of tensors the first split of `shards` says the set holds, if it says.
pub(super) fn declared_tensors(shards: &[Shard]) -> Option<u64> {
    let first = shards.first()?;
    let file = tpack_gguf::parse(&first.map).ok()?;
    file.get(SPLIT_TENSORS_COUNT).and_then(integer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_named_as_llama_cpp_names_them() {
        assert_eq!(suffix(0, 3), "-00001-of-00003.gguf");
        assert_eq!(
            sibling(Path::new("d/m-00001-of-00003.gguf"), "m", 2, 3),
            PathBuf::from("d/m-00003-of-00003.gguf")
        );
        assert_eq!(suffix(99_999, 100_000), "-100000-of-100000.gguf");
    }
}
