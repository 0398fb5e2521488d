//! TensorFlow checkpoints and SavedModel variables: a tensor bundle, `<prefix>.index` (an SSTable of
//! `BundleEntryProto` records, module [`table`] and [`bundle`]) with the tensors' bytes in
//! `<prefix>.data-NNNNN-of-MMMMM`. Read without TensorFlow and without running anything of the model: the
//! graph (`saved_model.pb`) is not read at all.
//!
//! - Every numeric tensor becomes an entry named by its bundle key (in a SavedModel or a TF2 checkpoint, the
//!   object path, `model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE`); its bytes are checked against the
//!   entry's CRC-32C, and shared with the mapped data file, not copied.
//! - A partitioned tensor (stored as slices, as `MaxShardSizePolicy` writes a variable larger than a shard) is
//!   put together from its slices, which must tile it exactly; that copy is the one the reader makes.
//! - Strings, resources and variants (the checkpoint's object graph, a lookup table's keys, an iterator's
//!   state) are not tensors of numbers: they are left out, with a note. Types tpack has no type for
//!   (complex128, the quantized `qint` types, 2- and 4-bit integers kept a byte per element) are refused.
//!
//! [`locate`] finds the index from what a user names: a SavedModel directory, its `variables` directory, a
//! checkpoint directory (its `checkpoint` file names the latest checkpoint), or a checkpoint prefix.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use prost::Message;
use tpack::format::{Packing, DEFAULT_ALIGNMENT};

use super::tpack::{OutEntry, Payload};
use super::{Format, Import, Model};
use crate::error::{CliError, Result};

mod bundle;
mod table;

use bundle::{BundleEntry, BundleHeader, Kind};

/// The TensorFlow tensor bundle format.
#[derive(Debug)]
pub(crate) struct TensorFlow;

/// The bundle version this reader implements (`kTensorBundleVersion`); a file whose `min_consumer` is higher
/// needs a newer reader.
const BUNDLE_VERSION: i32 = 1;

/// How many left-out keys a note names before it counts the rest.
const NOTE_NAMES: usize = 4;

/// Whether `bytes` is a tensor bundle index: an SSTable (its magic number last) whose first record has the
/// empty key (the bundle header, which sorts first).
pub(crate) fn sniff(bytes: &[u8]) -> bool {
    bytes.len() >= 48 && bytes.ends_with(&table::MAGIC) && bytes.starts_with(&[0, 0])
}

/// The index file of the bundle `input` names, if it names one other than by its path: a SavedModel
/// directory (`variables/variables.index`), a `variables` directory, a checkpoint directory (the latest
/// checkpoint its `checkpoint` file names), or a checkpoint prefix (`ckpt-3` for `ckpt-3.index`).
#[must_use]
pub(crate) fn locate(input: &Path) -> Option<PathBuf> {
    if input.is_dir() {
        let candidates = [input.join("variables").join("variables.index"), input.join("variables.index")];
        if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
            return Some(found);
        }
        let latest = latest_checkpoint(&std::fs::read_to_string(input.join("checkpoint")).ok()?)?;
        return Some(with_suffix(&input.join(latest), ".index")).filter(|p| p.is_file());
    }
    if input.exists() {
        return None;
    }
    Some(with_suffix(input, ".index")).filter(|p| p.is_file())
}

/// The SavedModel directory whose variables bundle `index` is (`DIR/variables/variables.index`, with
/// `DIR/saved_model.pb` beside `variables`).
fn saved_model_of(index: &Path) -> Option<&Path> {
    let variables = index.parent().filter(|_| index.file_name() == Some("variables.index".as_ref()))?;
    let dir = variables.parent().filter(|_| variables.file_name() == Some("variables".as_ref()))?;
    dir.join("saved_model.pb").is_file().then_some(dir)
}

/// The checkpoint a `checkpoint` file (a text-format `CheckpointState`) names as the latest, when it is a
/// plain name or a path below its directory.
fn latest_checkpoint(state: &str) -> Option<PathBuf> {
    let line = state.lines().find_map(|l| l.trim().strip_prefix("model_checkpoint_path:"))?;
    let name = line.trim().strip_prefix('"')?.strip_suffix('"')?;
    let path = PathBuf::from(name);
    let below = path.components().all(|c| matches!(c, std::path::Component::Normal(_)));
    (below && !name.is_empty()).then_some(path)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The data files of a bundle, mapped as they are first used.
struct Shards {
    /// The bundle's prefix: the index's path without `.index`.
    prefix: PathBuf,
    count: u32,
    maps: HashMap<u32, Bytes>,
    /// The bytes of the files mapped so far, and of the tensors and slices read from them: TensorFlow writes
    /// each tensor's bytes once, so the second never exceeds the first. Checked so that records sharing
    /// bytes cannot make the reader check (and put together) more than the files hold.
    mapped: u64,
    claimed: u64,
}

impl Shards {
    /// Shard `id`'s file, mapped.
    fn get(&mut self, id: i32) -> std::result::Result<Bytes, String> {
        let id = u32::try_from(id).ok().filter(|&i| i < self.count).ok_or_else(|| {
            format!("is stored in data file {id}, and the bundle has {} (numbered from 0)", self.count)
        })?;
        if let Some(map) = self.maps.get(&id) {
            return Ok(map.clone());
        }
        let path = with_suffix(&self.prefix, &format!(".data-{id:05}-of-{:05}", self.count));
        let map = crate::fsutil::map(&path)
            .map_err(|e| format!("is stored in a data file that cannot be read: {e}"))?;
        let bytes = Bytes::from_owner(map);
        self.mapped = self.mapped.saturating_add(bytes.len() as u64);
        self.maps.insert(id, bytes.clone());
        Ok(bytes)
    }

    /// The `size` bytes at `offset` of shard `id`, checked against the masked CRC-32C `crc`.
    fn bytes(&mut self, id: i32, offset: i64, size: u64, crc: u32) -> std::result::Result<Bytes, String> {
        let file = self.get(id)?;
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(start, len)| Some(start..start.checked_add(len)?))
            .filter(|r| r.end <= file.len());
        let Some(range) = range else {
            return Err(format!(
                "is stored at offset {offset}, {size} bytes, past the end of data file {id} ({} bytes)",
                file.len()
            ));
        };
        self.claimed = self.claimed.saturating_add(size);
        if self.claimed > self.mapped {
            return Err(format!(
                "is stored in bytes another tensor uses too: the tensors claim {} bytes of data files that hold {}, \
                 which TensorFlow never writes",
                self.claimed, self.mapped
            ));
        }
        let data = file.slice(range);
        let computed = table::masked_crc32c(&data);
        if computed != crc {
            return Err(format!(
                "has bytes whose CRC-32C is {computed:#010x} where the index stores {crc:#010x}: the data file is \
                 damaged or does not belong to this index"
            ));
        }
        Ok(data)
    }
}

/// Reads one bundle.
struct Reader<'r> {
    records: &'r [table::Record],
    index: &'r [u8],
    shards: Shards,
}

impl Reader<'_> {
    fn value(&self, r: &table::Record) -> &[u8] {
        &self.index[r.value.clone()]
    }

    /// The entry under `key`, decoded.
    fn entry(&self, key: &[u8]) -> std::result::Result<Option<BundleEntry>, String> {
        let Ok(i) = self.records.binary_search_by(|r| r.key.as_slice().cmp(key)) else { return Ok(None) };
        BundleEntry::decode(self.value(&self.records[i]))
            .map(Some)
            .map_err(|e| format!("has an index record that is not a BundleEntryProto ({e})"))
    }

    /// The shape of `e`, with its byte length for `dtype`.
    fn shape(e: &BundleEntry, dtype: tpack::Dtype) -> std::result::Result<(Vec<u64>, u64), String> {
        let shape = e.shape.clone().unwrap_or_default();
        if shape.unknown_rank {
            return Err("has a shape of unknown rank".to_owned());
        }
        let dims = shape
            .dim
            .iter()
            .map(|d| u64::try_from(d.size).map_err(|_| format!("has the dimension {}", d.size)))
            .collect::<std::result::Result<Vec<u64>, String>>()?;
        let len =
            dtype.byte_len(&dims).map_err(|e| format!("has a shape {dims:?} tpack cannot hold: {e}"))?;
        Ok((dims, len))
    }

    /// The bytes of the tensor `key` (`e`, of `dtype` and byte length `len`), from its data file or put
    /// together from its slices.
    fn data(
        &mut self,
        key: &[u8],
        e: &BundleEntry,
        dtype: tpack::Dtype,
        dims: &[u64],
        len: u64,
    ) -> std::result::Result<Bytes, String> {
        if e.slices.is_empty() {
            if u64::try_from(e.size).ok() != Some(len) {
                return Err(format!("is stored in {} bytes where its shape {dims:?} needs {len}", e.size));
            }
            return self.shards.bytes(e.shard_id, e.offset, len, e.crc32c);
        }
        let Some(Packing::Element(width)) = dtype.packing() else {
            return Err("is partitioned, and its type has no fixed element size".to_owned());
        };
        let width = usize::try_from(width).map_err(|_| "has too wide an element".to_owned())?;
        let mut parts = Vec::with_capacity(e.slices.len());
        let mut total = 0u64;
        for s in &e.slices {
            let extents = extents(s, dims)?;
            let encoded: Vec<(i64, i64)> = s
                .extent
                .iter()
                .zip(&extents)
                .map(|(x, &(start, n))| (start as i64, if x.length.is_some() { n as i64 } else { -1 }))
                .collect();
            let part = self.entry(&bundle::slice_key(key, &encoded))?.ok_or_else(|| {
                format!("is partitioned, and its slice {extents:?} (start, length per dimension) is missing")
            })?;
            if part.dtype != e.dtype {
                return Err(format!(
                    "has a slice of DataType {} in a tensor of DataType {}",
                    part.dtype, e.dtype
                ));
            }
            let count = extents.iter().try_fold(1u64, |n, &(_, l)| n.checked_mul(l));
            let part_len = count.and_then(|c| c.checked_mul(width as u64));
            let Some(part_len) = part_len.filter(|&n| u64::try_from(part.size).ok() == Some(n)) else {
                return Err(format!("has a slice {extents:?} stored in {} bytes", part.size));
            };
            total = total.saturating_add(part_len);
            parts.push((extents, self.shards.bytes(part.shard_id, part.offset, part_len, part.crc32c)?));
        }
        if total != len {
            return Err(format!(
                "is partitioned into slices of {total} bytes in all where its shape {dims:?} needs {len}"
            ));
        }
        let mut whole = Tiling::new(dims, width, len)?;
        for (extents, bytes) in &parts {
            whole.place(extents, bytes)?;
        }
        whole.finish()
    }
}

/// The `(start, length)` of each dimension of the slice `s` of a tensor of shape `dims`, checked to lie
/// inside it.
fn extents(s: &bundle::TensorSlice, dims: &[u64]) -> std::result::Result<Vec<(u64, u64)>, String> {
    if s.extent.len() != dims.len() {
        return Err(format!("has a slice of rank {} in a tensor of rank {}", s.extent.len(), dims.len()));
    }
    s.extent
        .iter()
        .zip(dims)
        .map(|(x, &dim)| {
            let start = u64::try_from(x.start).ok();
            let length = match x.length {
                Some(l) => u64::try_from(l).ok(),
                None => Some(dim).filter(|_| x.start == 0),
            };
            start.zip(length).filter(|&(s, l)| s.checked_add(l).is_some_and(|end| end <= dim)).ok_or_else(
                || format!("has a slice from {} of length {:?} in a dimension of {dim}", x.start, x.length),
            )
        })
        .collect()
}

/// A partitioned tensor being put together: its bytes, and which elements a slice has given.
struct Tiling {
    dims: Vec<usize>,
    width: usize,
    bytes: Vec<u8>,
    given: Vec<bool>,
}

impl Tiling {
    /// An empty tensor of shape `dims` and `width`-byte elements, `len` bytes in all. The caller has
    /// checked that its slices' bytes exist and add up to `len`, so the allocation is what the files hold.
    fn new(dims: &[u64], width: usize, len: u64) -> std::result::Result<Tiling, String> {
        let too_large = || "is too large to put together in memory".to_owned();
        let dims = dims
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| too_large()))
            .collect::<Result<Vec<_>, _>>()?;
        let len = usize::try_from(len).map_err(|_| too_large())?;
        let count = len.checked_div(width).unwrap_or(0);
        Ok(Tiling { dims, width, bytes: vec![0; len], given: vec![false; count] })
    }

    /// Copies a slice of `extents`, whose bytes are `data` in row-major order, into place.
    fn place(&mut self, extents: &[(u64, u64)], data: &[u8]) -> std::result::Result<(), String> {
        let rank = self.dims.len();
        let count: u64 = extents.iter().map(|&(_, l)| l).product();
        if count == 0 {
            return Ok(());
        }
        // Runs along the innermost dimension, one per index of the outer ones.
        // Every extent lies inside its dimension (`extents`), so these fit in usize as the dimensions do.
        let (run_start, run_len) = extents.last().copied().map_or((0, 1), |(s, l)| (s as usize, l as usize));
        let mut at = vec![0u64; rank.saturating_sub(1)];
        let mut src = 0usize;
        loop {
            let mut flat = 0usize;
            for d in 0..rank.saturating_sub(1) {
                flat = flat * self.dims[d] + (extents[d].0 + at[d]) as usize;
            }
            let inner = self.dims.last().copied().unwrap_or(1);
            let first = flat * inner + run_start;
            if self.given[first..first + run_len].iter().any(|&g| g) {
                return Err("is partitioned into slices that overlap".to_owned());
            }
            self.given[first..first + run_len].fill(true);
            let n = run_len * self.width;
            self.bytes[first * self.width..first * self.width + n].copy_from_slice(&data[src..src + n]);
            src += n;
            // The next index of the outer dimensions, innermost fastest.
            let mut d = rank.saturating_sub(1);
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                at[d] += 1;
                if at[d] < extents[d].1 {
                    break;
                }
                at[d] = 0;
            }
        }
    }

    fn finish(self) -> std::result::Result<Bytes, String> {
        if self.given.iter().any(|&g| !g) {
            return Err("is partitioned into slices that leave part of it out".to_owned());
        }
        Ok(Bytes::from(self.bytes))
    }
}

impl Import for TensorFlow {
    fn format(&self) -> Format {
        Format::TensorFlow
    }

    /// Every numeric tensor in key order, named by its key; strings, resources and variants left out with a
    /// note; no metadata.
    fn read<'a>(&self, input: &Path, bytes: &'a [u8]) -> Result<Model<'a>> {
        let refuse = |why: String| CliError::input(format!("{}: {why}", input.display()));
        let records = table::records(bytes).map_err(|why| refuse(format!("the index {why}")))?;
        let header = match records.first() {
            Some(r) if r.key.is_empty() => BundleHeader::decode(&bytes[r.value.clone()])
                .map_err(|e| refuse(format!("the bundle header is not a BundleHeaderProto ({e})")))?,
            _ => {
                return Err(refuse(
                    "is an SSTable but not a TensorFlow tensor bundle index (it has no header record)"
                        .to_owned(),
                ))
            }
        };
        if header.endianness != 0 {
            return Err(refuse(
                "is a big-endian tensor bundle; tpack reads the little-endian ones every common machine writes"
                    .to_owned(),
            ));
        }
        let min_consumer = header.version.as_ref().map_or(0, |v| v.min_consumer);
        if min_consumer > BUNDLE_VERSION {
            return Err(refuse(format!(
                "needs a reader of tensor bundle version {min_consumer}; tpack reads version {BUNDLE_VERSION}"
            )));
        }
        let count = u32::try_from(header.num_shards)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| refuse(format!("the bundle header gives {} data files", header.num_shards)))?;
        let prefix =
            input.to_str().and_then(|s| s.strip_suffix(".index")).map(PathBuf::from).ok_or_else(|| {
                refuse("is not named <prefix>.index, so its data files cannot be found".to_owned())
            })?;
        let mut reader = Reader {
            records: &records,
            index: bytes,
            shards: Shards { prefix, count, maps: HashMap::new(), mapped: 0, claimed: 0 },
        };
        let mut entries = Vec::new();
        let mut skipped = Vec::new();
        // Slice keys start with a 0 byte (OrderedCode's 0); they are read through their tensor's entry.
        for r in records.iter().skip(1).filter(|r| r.key.first() != Some(&0)) {
            let name = String::from_utf8(r.key.clone()).map_err(|_| {
                refuse(format!(
                    "the key {:?} is not UTF-8, which tpack's names are",
                    String::from_utf8_lossy(&r.key)
                ))
            })?;
            let at = |why: String| refuse(format!("tensor {name:?} {why}"));
            let e = BundleEntry::decode(reader.value(r))
                .map_err(|e| at(format!("has an index record that is not a BundleEntryProto ({e})")))?;
            let dtype = match bundle::kind(e.dtype) {
                Kind::Stored(dtype) => dtype,
                Kind::Skipped(what) => {
                    skipped.push(format!("{name} ({what})"));
                    continue;
                }
                Kind::Refused(what) => {
                    return Err(at(format!(
                        "has the type {what} (DataType {}), which tpack has no type for",
                        e.dtype
                    )))
                }
            };
            let (dims, len) = Reader::shape(&e, dtype).map_err(at)?;
            let data = reader.data(&r.key, &e, dtype, &dims, len).map_err(at)?;
            entries.push(OutEntry {
                name: Cow::Owned(name),
                dtype,
                shape: dims,
                alignment: DEFAULT_ALIGNMENT,
                target: None,
                length: len,
                payload: Payload::Shared(data),
            });
        }
        let mut notes = Vec::new();
        if entries.is_empty() && saved_model_of(input).is_some() {
            notes.push(
                "the SavedModel's variables hold no tensor of numbers; weights that are constants of its graph \
                 (in saved_model.pb) are not read"
                    .to_owned(),
            );
        }
        if !skipped.is_empty() {
            let shown = skipped.iter().take(NOTE_NAMES).cloned().collect::<Vec<_>>().join(", ");
            let more = skipped.len().saturating_sub(NOTE_NAMES);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            let values = if skipped.len() == 1 { "value that is" } else { "values that are" };
            notes.push(format!("left out {} {values} not a tensor of numbers: {shown}{more}", skipped.len()));
        }
        Ok(Model { compat_flags: 0, entries, metadata: Vec::new(), notes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_checkpoint_is_read_from_the_state_file_and_stays_below_it() {
        let state = "model_checkpoint_path: \"ckpt-3\"\nall_model_checkpoint_paths: \"ckpt-1\"\n";
        assert_eq!(latest_checkpoint(state), Some(PathBuf::from("ckpt-3")));
        assert_eq!(latest_checkpoint("model_checkpoint_path: \"../x\""), None);
        assert_eq!(latest_checkpoint("model_checkpoint_path: \"/etc/x\""), None);
        assert_eq!(latest_checkpoint("nothing"), None);
    }

    /// A slice: its extents and its bytes.
    type Part<'a> = (&'a [(u64, u64)], &'a [u8]);

    fn tile(dims: &[u64], parts: &[Part<'_>]) -> std::result::Result<Vec<u8>, String> {
        let len = parts.iter().map(|(_, d)| d.len() as u64).sum();
        let mut t = Tiling::new(dims, 1, len)?;
        for (extents, data) in parts {
            t.place(extents, data)?;
        }
        t.finish().map(|b| b.to_vec())
    }

    #[test]
    fn slices_are_put_together_row_major_and_must_tile_exactly() {
        // A 2x3 tensor as a left 2x2 block and a right 2x1 column.
        let left: &[(u64, u64)] = &[(0, 2), (0, 2)];
        let right: &[(u64, u64)] = &[(0, 2), (2, 1)];
        assert_eq!(tile(&[2, 3], &[(left, &[1, 2, 4, 5]), (right, &[3, 6])]).unwrap(), [1, 2, 3, 4, 5, 6]);
        // The caller checks that the slices add up to the tensor; these add up but overlap, or fall short.
        let top: &[(u64, u64)] = &[(0, 1), (0, 3)];
        assert!(tile(&[2, 3], &[(left, &[1, 2, 4, 5]), (top, &[1, 2, 3])]).unwrap_err().contains("overlap"));
        let mut short = Tiling::new(&[2, 3], 1, 6).unwrap();
        short.place(left, &[1, 2, 4, 5]).unwrap();
        assert!(short.finish().unwrap_err().contains("leave part of it out"));
        // Rank 1 and rank 3.
        assert_eq!(tile(&[4], &[(&[(2, 2)], &[3, 4]), (&[(0, 2)], &[1, 2])]).unwrap(), [1, 2, 3, 4]);
        let lower: &[(u64, u64)] = &[(1, 1), (0, 2), (0, 2)];
        let upper: &[(u64, u64)] = &[(0, 1), (0, 2), (0, 2)];
        assert_eq!(
            tile(&[2, 2, 2], &[(lower, &[5, 6, 7, 8]), (upper, &[1, 2, 3, 4])]).unwrap(),
            [1, 2, 3, 4, 5, 6, 7, 8]
        );
    }
}
