//! ONNX external data (`data_location = EXTERNAL`): a tensor's bytes in another file, named by the
//! `external_data` entries `location` (a path relative to the model's directory), `offset` and `length`
//! (decimal byte counts; `checksum`, a SHA-1 some writers add, is not checked).
//!
//! Resolved only inside the model's directory (CVE-2024-27318 was `onnx.load` following `../` out of it):
//! refused are an absolute location, one with a `..` component or a backslash, one whose real path (symlinks
//! followed) lies outside the directory, one that is not a regular file, and a range past the file's end. The
//! file opened is checked to be the one the path still names inside the directory, so that a directory swapped
//! for a symbolic link between the check and the open is refused, not followed. Each file is mapped once and
//! shared by the tensors in it.

use std::collections::HashMap;
use std::fs::File;
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
        let real = inside(&joined, &self.dir, location)?;
        let file = File::open(&real).map_err(cannot(location))?;
        confirm_opened(&file, &joined, &self.dir, location)?;
        let map = crate::fsutil::map_file(&file, &real)
            .map_err(|e| format!("has external data that cannot be read: {e}"))?;
        let bytes = Bytes::from_owner(map);
        self.maps.insert(location.to_owned(), bytes.clone());
        Ok(bytes)
    }
}

/// The message for an external file that cannot be read.
fn cannot(location: &str) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("has external data in {location:?}, which cannot be read: {e}")
}

/// The real path of `joined` (symbolic links followed), which must be a regular file inside `dir`.
fn inside(joined: &Path, dir: &Path, location: &str) -> Result<PathBuf, String> {
    let real = joined.canonicalize().map_err(cannot(location))?;
    let dir = dir.canonicalize().map_err(cannot(location))?;
    if !real.starts_with(&dir) {
        return Err(format!(
            "has external data in {location:?}, a symbolic link that leads outside the model's directory"
        ));
    }
    if !real.metadata().map_err(cannot(location))?.is_file() {
        return Err(format!("has external data in {location:?}, which is not a regular file"));
    }
    Ok(real)
}

/// Checks that `file`, opened by the path [`inside`] gave for `joined`, is the file `joined` names inside `dir`
/// now: had a directory on that path been swapped for a symbolic link between the check and the open, the open
/// followed it (perhaps out of `dir`), and what it opened is not what the path names once swapped back, or the
/// path now leads outside.
fn confirm_opened(file: &File, joined: &Path, dir: &Path, location: &str) -> Result<(), String> {
    let now = inside(joined, dir, location)?;
    let opened = file.try_clone().and_then(same_file::Handle::from_file).map_err(cannot(location))?;
    if opened != same_file::Handle::from_path(&now).map_err(cannot(location))? {
        return Err(format!(
            "has external data in {location:?}, which changed while it was being opened (a directory or link \
             on its path was replaced)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_opened_outside_the_directory_is_refused_though_the_path_now_leads_inside() {
        // What a swap between the check and the open leaves: the open followed a link out of the directory to
        // `secret`, and the path names an ordinary file inside again. The file opened is refused.
        let root = tempfile::tempdir().unwrap();
        let (model, outside) = (root.path().join("model"), root.path().join("outside"));
        std::fs::create_dir_all(model.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(model.join("sub/data.bin"), b"weights").unwrap();
        std::fs::write(outside.join("data.bin"), b"secret!").unwrap();
        let joined = model.join("sub/data.bin");
        let opened_outside = File::open(outside.join("data.bin")).unwrap();
        let e = confirm_opened(&opened_outside, &joined, &model, "sub/data.bin").unwrap_err();
        assert!(e.contains("changed while it was being opened"), "{e}");
        // The file the path names is accepted.
        let opened = File::open(&joined).unwrap();
        confirm_opened(&opened, &joined, &model, "sub/data.bin").unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_leads_outside_when_confirmed_is_refused() {
        // The swap still in place when the opened file is confirmed: the path itself now leads out.
        let root = tempfile::tempdir().unwrap();
        let (model, outside) = (root.path().join("model"), root.path().join("outside"));
        std::fs::create_dir_all(&model).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("data.bin"), b"secret!").unwrap();
        std::os::unix::fs::symlink(&outside, model.join("sub")).unwrap();
        let opened = File::open(outside.join("data.bin")).unwrap();
        let e = confirm_opened(&opened, &model.join("sub/data.bin"), &model, "sub/data.bin").unwrap_err();
        assert!(e.contains("leads outside the model's directory"), "{e}");
    }
}
