//! NumPy's `.npy` (one array) and `.npz` (a zip archive of `.npy` members) files, read without running any
//! of NumPy's code: the header dict is parsed, never evaluated, and object arrays are refused, never
//! unpickled.
//!
//! - `header`: the `.npy` header (versions 1.0, 2.0 and 3.0) and its dict literal.
//! - `array`: one array as a tpack entry (dtypes, byte order, Fortran order, length).
//! - `archive`: `.npz` members (stored or deflated) and their names.
//! - `export`: tpack → `.npz`, as `numpy.savez` writes it.

use std::borrow::Cow;
use std::path::Path;

use super::{Format, Import, Model};
use crate::error::{CliError, Result};

mod archive;
mod array;
mod export;
mod header;

use array::{Changes, Data};

/// A `.npy` file: one array.
#[derive(Debug)]
pub(crate) struct Npy;

/// A `.npz` file: a zip archive of `.npy` arrays.
#[derive(Debug)]
pub(crate) struct Npz;

/// Whether `head` starts with the `.npy` magic.
pub(crate) fn sniff_npy(head: &[u8]) -> bool {
    head.starts_with(header::MAGIC)
}

/// Offset of the name length in a zip local file header, of the extra field's length, and of the name.
const LOCAL_NAME_LEN: usize = 26;
/// See [`LOCAL_NAME_LEN`].
const LOCAL_NAME: usize = 30;

/// Whether `head` is a zip archive whose first member is a `.npy` array, as every member of an `.npz` is (a
/// PyTorch checkpoint, also a zip archive, starts with `archive/data.pkl`).
pub(crate) fn sniff_npz(head: &[u8]) -> bool {
    let Some(&[lo, hi]) = head.get(LOCAL_NAME_LEN..LOCAL_NAME_LEN + 2) else { return false };
    let name_len = usize::from(u16::from_le_bytes([lo, hi]));
    head.starts_with(b"PK\x03\x04")
        && head
            .get(LOCAL_NAME..LOCAL_NAME + name_len)
            .is_some_and(|name| name.ends_with(archive::MEMBER_SUFFIX.as_bytes()))
}

/// The notes for what the conversion did to the arrays.
fn notes(changes: impl Iterator<Item = Changes>) -> Vec<String> {
    let (mut swapped, mut transposed) = (0usize, 0usize);
    for c in changes {
        swapped += usize::from(c.swapped);
        transposed += usize::from(c.transposed);
    }
    let mut notes = Vec::new();
    if swapped > 0 {
        notes.push(format!(
            "{swapped} big-endian array(s) were byte-swapped: tpack holds elements little-endian, so the values are \
             the same"
        ));
    }
    if transposed > 0 {
        notes.push(format!(
            "{transposed} Fortran-order array(s) were copied into C order: the shape and the values at each index \
             are the same, as numpy.ascontiguousarray gives them"
        ));
    }
    notes
}

impl Import for Npy {
    fn format(&self) -> Format {
        Format::Npy
    }

    /// The one array, named after the file (`weights.npy` → `weights`), as [`array`] converts it; no
    /// metadata (a `.npy` file has none).
    fn read<'a>(&self, input: &Path, bytes: &'a [u8]) -> Result<Model<'a>> {
        let name = input
            .file_stem()
            .map_or(Cow::Borrowed("array"), |s| Cow::Owned(s.to_string_lossy().into_owned()));
        let (entry, changes) = array::entry(name, Data::Mapped(bytes))
            .map_err(|why| CliError::input(format!("{} is refused: {why}", input.display())))?;
        Ok(Model {
            compat_flags: 0,
            entries: vec![entry],
            metadata: Vec::new(),
            notes: notes([changes].into_iter()),
        })
    }
}

impl Import for Npz {
    fn format(&self) -> Format {
        Format::Npz
    }

    /// Every member in archive order, named as `numpy.load` names it (`w.npy` → `w`); no metadata.
    fn read<'a>(&self, input: &Path, bytes: &'a [u8]) -> Result<Model<'a>> {
        let read = archive::entries(bytes)
            .map_err(|why| CliError::input(format!("{} is refused: {why}", input.display())))?;
        let notes = notes(read.iter().map(|(_, c)| *c));
        Ok(Model {
            compat_flags: 0,
            entries: read.into_iter().map(|(e, _)| e).collect(),
            metadata: Vec::new(),
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_tells_npy_and_npz_from_other_zip_archives() {
        assert!(sniff_npy(b"\x93NUMPY\x01\x00"));
        let local = |name: &[u8]| {
            let mut h = b"PK\x03\x04".to_vec();
            h.resize(LOCAL_NAME_LEN, 0);
            h.extend((name.len() as u16).to_le_bytes());
            h.extend([0, 0]);
            h.extend(name);
            h
        };
        assert!(sniff_npz(&local(b"w.npy")));
        assert!(!sniff_npz(&local(b"archive/data.pkl")));
        assert!(!sniff_npz(&local(b"w.npy")[..32]));
        assert!(!sniff_npz(b"PK\x05\x06"));
    }
}
