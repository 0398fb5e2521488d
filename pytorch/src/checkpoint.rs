//! The three files PyTorch writes, read into named tensors and values: `torch.save`'s zip archive
//! (`<name>/data.pkl`, `<name>/data/<key>`, `<name>/byteorder`), its legacy stream
//! (`_use_new_zipfile_serialization=False`) and TorchScript archives (`torch.jit.save`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::bytes::{to_usize, u64_at};
use crate::element::Element;
use crate::error::{escaped, Error, Result};
use crate::flatten::{flatten, Leaves, Scalar};
use crate::pickle::{unpickle, StorageRef, Value};
use crate::{view, zip};

/// The number a legacy file's first pickle holds.
pub const LEGACY_MAGIC: i128 = 0x1950_a86a_20f9_469c_fc6c;
/// The protocol version a legacy file's second pickle holds.
const LEGACY_PROTOCOL: i128 = 1001;
/// How a legacy file starts: PROTO 2, then LONG1 of 10 bytes holding [`LEGACY_MAGIC`].
pub const LEGACY_HEAD: &[u8] = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";

/// Which of PyTorch's files a checkpoint was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A `torch.save` zip archive (PyTorch 1.6 and later; `.pt`, `.pth`, `pytorch_model.bin`).
    Zip,
    /// A legacy `torch.save` stream.
    Legacy,
    /// A TorchScript archive (`torch.jit.save`).
    TorchScript,
}

impl Kind {
    /// The kind in words.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Zip => "torch.save zip archive",
            Kind::Legacy => "legacy torch.save file",
            Kind::TorchScript => "TorchScript archive",
        }
    }
}

/// One tensor of a checkpoint.
#[derive(Debug, Clone)]
pub struct Tensor<'a> {
    /// Its name, flattened with dots.
    pub name: String,
    /// Its element type.
    pub element: Element,
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// Its elements in row-major order: a view of the input when the tensor is contiguous in its storage,
    /// else a copy.
    pub data: Cow<'a, [u8]>,
    /// Whether `data` is big-endian (an archive whose `byteorder` record says `big`).
    pub big_endian: bool,
    /// Whether another tensor of the checkpoint is a view of the same storage (tied weights, views).
    pub shares_storage: bool,
}

/// What a checkpoint holds.
#[derive(Debug)]
pub struct Checkpoint<'a> {
    /// Which file it was.
    pub kind: Kind,
    /// Its tensors, in the order the pickle names them.
    pub tensors: Vec<Tensor<'a>>,
    /// Plain values (ints, floats, strings, bools) by flattened name.
    pub values: Vec<(String, Scalar<'a>)>,
    /// Names of values that are neither (bytes, ints beyond 64 bits, ...), left out.
    pub skipped: Vec<String>,
}

/// The records a PyTorch archive may start with, after its `<name>/`: `torch.save` writes `data.pkl` first,
/// `torch.jit.save` its tensors, code or constants.
const FIRST_RECORDS: [&str; 4] = ["data.pkl", "data/", "code/", "constants"];

/// Whether `bytes` look like a checkpoint this crate reads: a legacy stream's head, or a zip archive whose
/// first record is one a PyTorch archive starts with (`<name>/data.pkl`, ...). Only the first local header is
/// read, so a damaged archive is still told to be PyTorch's and [`read`] says what is wrong with it; an
/// `.npz` (whose records are `<array>.npy`) is not.
#[must_use]
pub fn sniff(bytes: &[u8]) -> bool {
    bytes.starts_with(LEGACY_HEAD) || zip::first_name(bytes).is_some_and(is_first_record)
}

/// Whether `name` is `<name>/` and one of [`FIRST_RECORDS`].
fn is_first_record(name: &[u8]) -> bool {
    let Some(slash) = name.iter().position(|&b| b == b'/') else {
        return false;
    };
    let rest = name.get(slash.saturating_add(1)..).unwrap_or_default();
    slash > 0 && FIRST_RECORDS.iter().any(|r| rest.starts_with(r.as_bytes()))
}

/// Reads a checkpoint of any of the three kinds.
///
/// # Errors
/// What the zip reader, the pickle machine or the checks of this module refuse; [`Error::Checkpoint`] for
/// bytes that are none of the three.
pub fn read(bytes: &[u8]) -> Result<Checkpoint<'_>> {
    if zip::is_zip(bytes) {
        read_archive(bytes)
    } else if bytes.starts_with(LEGACY_HEAD) {
        read_legacy(bytes)
    } else {
        Err(Error::Checkpoint("neither a zip archive nor a legacy torch.save stream".to_owned()))
    }
}

/// The folder every record of a PyTorch archive is in: the `<name>` of its one `<name>/data.pkl`.
fn archive_prefix<'a>(entries: &[zip::ZipEntry<'a>]) -> Result<&'a str> {
    let mut found =
        entries.iter().filter_map(|e| e.name.strip_suffix("/data.pkl")).filter(|p| !p.contains('/'));
    let prefix = found.next().ok_or_else(|| {
        Error::Checkpoint(
            "the archive has no <name>/data.pkl record, so it is not a PyTorch checkpoint".to_owned(),
        )
    })?;
    if found.next().is_some() {
        return Err(Error::Checkpoint("the archive has two <name>/data.pkl records".to_owned()));
    }
    Ok(prefix)
}

fn read_archive(bytes: &[u8]) -> Result<Checkpoint<'_>> {
    let entries = zip::entries(bytes)?;
    let prefix = archive_prefix(&entries)?;
    let mut records = HashMap::new();
    for e in &entries {
        let Some(rest) = e.name.strip_prefix(prefix).and_then(|r| r.strip_prefix('/')) else {
            return Err(Error::Checkpoint(format!(
                "record \"{}\" is outside the archive's folder \"{}/\"",
                escaped(e.name),
                escaped(prefix)
            )));
        };
        records.insert(rest, *e);
    }
    // Only the records read must be stored: TorchScript deflates its source code, which is not read.
    let record = |name: &str| records.get(name).map(zip::ZipEntry::content).transpose();
    let big_endian = match record("byteorder")? {
        None | Some(b"little") => false,
        Some(b"big") => true,
        Some(other) => {
            return Err(Error::Checkpoint(format!(
                "its byteorder record says \"{}\", neither little nor big",
                escaped(&String::from_utf8_lossy(other))
            )))
        }
    };
    let script = records.contains_key("constants.pkl");
    let mut out = Assembly::new(bytes.len(), big_endian);
    let data = unpickle("data.pkl", record("data.pkl")?.unwrap_or_default())?;
    let mut leaves = Leaves::default();
    flatten(&data.value, "", &mut leaves)?;
    out.add(leaves, &|key| record(&format!("data/{key}")), true)?;
    if script {
        let constants = unpickle("constants.pkl", record("constants.pkl")?.unwrap_or_default())?;
        let mut leaves = Leaves::default();
        flatten(&constants.value, "constants", &mut leaves)?;
        // Only tensors: a constant string or number is part of the compiled code, not of the model's state.
        leaves.values.clear();
        leaves.skipped.clear();
        out.add(leaves, &|key| record(&format!("constants/{key}")), false)?;
    }
    out.finish(if script { Kind::TorchScript } else { Kind::Zip })
}

fn read_legacy(bytes: &[u8]) -> Result<Checkpoint<'_>> {
    let mut at = 0usize;
    let mut next = |what: &str| -> Result<crate::pickle::Unpickled<'_>> {
        let rest = bytes.get(at..).unwrap_or_default();
        let p = unpickle(what, rest)?;
        at = at.saturating_add(p.consumed);
        Ok(p)
    };
    if !matches!(next("the magic number pickle")?.value, Value::Int(LEGACY_MAGIC)) {
        return Err(Error::Checkpoint("its first pickle is not PyTorch's magic number".to_owned()));
    }
    match next("the protocol pickle")?.value {
        Value::Int(LEGACY_PROTOCOL) => {}
        Value::Int(other) => {
            return Err(Error::Checkpoint(format!(
                "legacy protocol version {other} is not {LEGACY_PROTOCOL}"
            )))
        }
        other => return Err(Error::Checkpoint(format!("its protocol version is a {}", other.type_name()))),
    }
    let sys_info = next("the system-info pickle")?;
    if !little_endian(&sys_info.value) {
        return Err(Error::Checkpoint(
            "it was written on a big-endian machine (sys_info little_endian is not True), which the legacy reader \
             does not read"
                .to_owned(),
        ));
    }
    let object = next("the object pickle")?;
    let keys = next("the storage-keys pickle")?;
    let storages: HashMap<&str, &StorageRef<'_>> = object.storages.iter().map(|s| (s.key, &**s)).collect();
    let Value::List(list) = &keys.value else {
        return Err(Error::Checkpoint(format!(
            "its storage keys are a {}, not a list",
            keys.value.type_name()
        )));
    };
    let mut data = HashMap::new();
    for key in list.items().iter() {
        let Value::Str(key) = key else {
            return Err(Error::Checkpoint(format!("a storage key is a {}, not a str", key.type_name())));
        };
        let storage = storages.get(key).ok_or_else(|| {
            Error::Checkpoint(format!("storage \"{}\" is listed but no tensor names it", escaped(key)))
        })?;
        let count = u64_at(bytes, at)
            .ok_or_else(|| Error::Checkpoint(format!("the file ends before storage \"{}\"", escaped(key))))?;
        if count != storage.numel {
            return Err(Error::Checkpoint(format!(
                "storage \"{}\" holds {count} elements, but its tensors' persistent id says {}",
                escaped(key),
                storage.numel
            )));
        }
        let start = at.saturating_add(8);
        let len = count.checked_mul(storage.element.size()).and_then(to_usize);
        let stop = len.and_then(|l| start.checked_add(l)).filter(|&s| s <= bytes.len());
        let Some(stop) = stop else {
            return Err(Error::Checkpoint(format!(
                "storage \"{}\" declares {count} elements of {} bytes, more than the {} bytes left in the file",
                escaped(key),
                storage.element.size(),
                bytes.len().saturating_sub(start)
            )));
        };
        if data.insert(*key, bytes.get(start..stop).unwrap_or_default()).is_some() {
            return Err(Error::Checkpoint(format!("storage \"{}\" is listed twice", escaped(key))));
        }
        at = stop;
    }
    if at != bytes.len() {
        return Err(Error::Checkpoint(format!(
            "{} bytes follow the last storage",
            bytes.len().saturating_sub(at)
        )));
    }
    let mut out = Assembly::new(bytes.len(), false);
    let mut leaves = Leaves::default();
    flatten(&object.value, "", &mut leaves)?;
    out.add(leaves, &|key| Ok(data.get(key).copied()), true)?;
    out.finish(Kind::Legacy)
}

/// Whether a legacy `sys_info` dict says the writer was little-endian.
fn little_endian(sys_info: &Value<'_>) -> bool {
    let Value::Dict { node, .. } = sys_info else {
        return false;
    };
    let pairs = node.items();
    pairs.iter().any(|(k, v)| matches!((k, v), (Value::Str("little_endian"), Value::Bool(true))))
}

/// Tensors gathered from one or more pickles, with the budget for copies of non-contiguous views.
struct Assembly<'a> {
    tensors: Vec<Tensor<'a>>,
    values: Vec<(String, Scalar<'a>)>,
    skipped: Vec<String>,
    names: HashSet<String>,
    /// (namespace, key) → how many tensors view that storage.
    uses: HashMap<(bool, &'a str), usize>,
    keys: Vec<(bool, &'a str)>,
    budget: u64,
    big_endian: bool,
}

impl<'a> Assembly<'a> {
    /// Copies may total twice the input: each non-contiguous view is at most its storage, unless views
    /// overlap (a stride of 0), which real state dicts do not hold in bulk.
    fn new(input: usize, big_endian: bool) -> Self {
        Assembly {
            tensors: Vec::new(),
            values: Vec::new(),
            skipped: Vec::new(),
            names: HashSet::new(),
            uses: HashMap::new(),
            keys: Vec::new(),
            budget: (input as u64).saturating_mul(2),
            big_endian,
        }
    }

    /// Adds `leaves`, whose storages' bytes `record` finds by key; `space` tells apart storages of
    /// different pickles that share keys.
    fn add(
        &mut self,
        leaves: Leaves<'a>,
        record: &dyn Fn(&str) -> Result<Option<&'a [u8]>>,
        space: bool,
    ) -> Result<()> {
        for (name, t) in leaves.tensors {
            if !self.names.insert(name.clone()) {
                return Err(Error::Checkpoint(format!("two tensors are named \"{}\"", escaped(&name))));
            }
            let s = &t.storage;
            let stored = record(s.key)?.ok_or_else(|| {
                Error::Checkpoint(format!(
                    "tensor \"{}\" is a view of storage \"{}\", which has no record in the file",
                    escaped(&name),
                    escaped(s.key)
                ))
            })?;
            let expected = s.numel.checked_mul(s.element.size());
            if expected != Some(stored.len() as u64) {
                return Err(Error::Checkpoint(format!(
                    "storage \"{}\" is {} bytes, but its persistent id says {} elements of {} ({})",
                    escaped(s.key),
                    stored.len(),
                    s.numel,
                    s.element.dtype_name(),
                    expected.map_or_else(|| "more than 2^64 bytes".to_owned(), |e| format!("{e} bytes"))
                )));
            }
            let data = view::bytes(&t, stored, s.element.size(), &mut self.budget).map_err(|needed| {
                Error::Checkpoint(format!(
                    "tensor \"{}\" needs {needed} bytes (a storage shorter than a view, or more copying of \
                     non-contiguous views than twice the file's size)",
                    escaped(&name)
                ))
            })?;
            let count = self.uses.entry((space, s.key)).or_insert(0);
            *count = count.saturating_add(1);
            self.keys.push((space, s.key));
            self.tensors.push(Tensor {
                name,
                element: s.element,
                shape: t.size.clone(),
                data,
                big_endian: self.big_endian,
                shares_storage: false,
            });
        }
        self.values.extend(leaves.values);
        self.skipped.extend(leaves.skipped);
        Ok(())
    }

    fn finish(mut self, kind: Kind) -> Result<Checkpoint<'a>> {
        for (t, key) in self.tensors.iter_mut().zip(&self.keys) {
            t.shares_storage = self.uses.get(key).is_some_and(|&n| n > 1);
        }
        Ok(Checkpoint { kind, tensors: self.tensors, values: self.values, skipped: self.skipped })
    }
}
