//! ONNX external data (`data_location = EXTERNAL`): a tensor's bytes in another file, named by the
//! `external_data` entries `location` (a path relative to the model's directory), `offset` and `length`
//! (decimal byte counts; `checksum`, a SHA-1 some writers add, is not checked).
//!
//! Resolved only inside the model's directory (CVE-2024-27318 was `onnx.load` following `../` out of it):
//! refused are an absolute location, one with a `..` component or a backslash, one whose real path (symlinks
//! followed) lies outside the directory, one that is not a regular file, and a range past the file's end.
//! Each file is mapped once and shared by the tensors in it.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use bytes::Bytes;

use super::proto::StringStringEntryProto;

/// The external files of one model, mapped as they are first used.
#[derive(Debug)]
pub(crate) struct ExternalFiles {
    /// The model's directory, as given.
    dir: PathBuf,
    /// Each file read, by its location as written in the model.
    maps: HashMap<String, Bytes>,
}

impl ExternalFiles {
    /// The external files of a model in the directory `dir`.
    pub(crate) fn new(dir: &Path) -> Self {
        Self { dir: dir.to_path_buf(), maps: HashMap::new() }
    }

    /// The `len` bytes the `external_data` entries `fields` name.
    ///
    /// # Errors
    /// Why they cannot be read, in words.
    pub(crate) fn data(&mut self, fields: &[StringStringEntryProto], len: u64) -> Result<Bytes, String> {
        let (mut location, mut offset, mut length) = (None, None, None);
        for f in fields {
            let key = f.key.as_deref().unwrap_or_default();
            let value = f.value.as_deref().unwrap_or_default();
            let slot = match key {
                "location" => &mut location,
                "offset" => &mut offset,
                "length" => &mut length,
                "checksum" | "basepath" => continue,
                other => {
                    return Err(format!("has the external-data key {other:?}, which ONNX does not define"))
                }
            };
            if slot.replace(value).is_some() {
                return Err(format!("gives the external-data key {key:?} twice"));
            }
        }
        let location = location.ok_or("is EXTERNAL but gives no location")?;
        let number = |what: &str, text: Option<&str>| -> Result<Option<u64>, String> {
            text.map(|t| {
                t.parse::<u64>().map_err(|_| format!("has the external-data {what} {t:?}, not a byte count"))
            })
            .transpose()
        };
        let offset = number("offset", offset)?.unwrap_or(0);
        // Where the data lies is checked before anything else about it.
        let file = self.file(location)?;
        if let Some(length) = number("length", length)? {
            if length != len {
                return Err(format!(
                    "has external data of {length} bytes ({location:?}) where its shape needs {len}"
                ));
            }
        }
        let end = offset.saturating_add(len);
        let range =
            usize::try_from(offset).ok().zip(usize::try_from(end).ok()).filter(|&(_, e)| e <= file.len());
        let Some((start, end)) = range else {
            return Err(format!(
                "has external data at offset {offset}, {len} bytes, past its end: {location:?} has {} bytes",
                file.len()
            ));
        };
        Ok(file.slice(start..end))
    }

    /// The file at `location`, mapped, checked to lie inside the model's directory.
    fn file(&mut self, location: &str) -> Result<Bytes, String> {
        if let Some(map) = self.maps.get(location) {
            return Ok(map.clone());
        }
        let path = Path::new(location);
        if location.is_empty() {
            return Err("has an empty external-data location".to_owned());
        }
        if path.is_absolute() || location.starts_with('/') {
            return Err(format!(
                "has the absolute external-data location {location:?}; ONNX external data lies in the model's directory"
            ));
        }
        let drive = location.as_bytes().get(1) == Some(&b':')
            && location.as_bytes().first().is_some_and(u8::is_ascii_alphabetic);
        if location.contains('\\') || drive {
            return Err(format!(
                "has the external-data location {location:?}, a Windows path (a backslash or a drive letter)"
            ));
        }
        if path.components().any(|c| matches!(c, Component::ParentDir)) {
            return Err(format!(
                "has the external-data location {location:?}, with a '..' component, which would leave the model's \
                 directory (CVE-2024-27318)"
            ));
        }
        let joined = self.dir.join(path);
        let cannot =
            |e: std::io::Error| format!("has external data in {location:?}, which cannot be read: {e}");
        let real = joined.canonicalize().map_err(cannot)?;
        let dir = self.dir.canonicalize().map_err(cannot)?;
        if !real.starts_with(&dir) {
            return Err(format!(
                "has external data in {location:?}, a symbolic link that leads outside the model's directory"
            ));
        }
        if !real.metadata().map_err(cannot)?.is_file() {
            return Err(format!("has external data in {location:?}, which is not a regular file"));
        }
        let map =
            crate::fsutil::map(&real).map_err(|e| format!("has external data that cannot be read: {e}"))?;
        let bytes = Bytes::from_owner(map);
        self.maps.insert(location.to_owned(), bytes.clone());
        Ok(bytes)
    }
}
