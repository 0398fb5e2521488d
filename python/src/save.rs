//! Writing a container from Python through the core's streaming writer.
//!
//! Python declares every entry and metadata value, then hands the payloads as an iterator of `bytes`
//! chunks, `None` ending each entry; the writer keeps only its bookkeeping, never a payload, so saving a
//! model costs one chunk of memory beyond the model itself. A file is written to a temporary file beside the
//! destination and renamed over it only when complete (`tpack::AtomicFile`). A signed container is signed by
//! the writer as it goes (spec §14): payloads are hashed as they stream through.

use std::path::PathBuf;

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tpack::embedded_io::Write;
use tpack::sign::{SignOptions, SigningKey};
use tpack::write::{
    EntryDecl, Mode, SeekWriter, StreamWriter, VecBookkeeping, WriteError, WriteErrorClass, Writer,
};
use tpack::{AtomicFile, Dtype, OwnedMetaValue};

use crate::errors::{format_error, os_error, Kind};
use crate::keys::{signing, SignDecl};
use crate::meta;

/// One declared entry: name, dtype name, shape, alignment, load address.
type Decl = (String, String, Vec<u64>, u32, Option<u64>);

/// Why writing stopped: the writer refused, or Python code (the chunk iterator) raised.
enum Failure<E> {
    Write(WriteError<E>),
    Python(PyErr),
}

impl<E> From<WriteError<E>> for Failure<E> {
    fn from(e: WriteError<E>) -> Self {
        Failure::Write(e)
    }
}

impl<E> From<PyErr> for Failure<E> {
    fn from(e: PyErr) -> Self {
        Failure::Python(e)
    }
}

/// The exception for `failure`, by the core's class of a writer error (so a new kind of writer error needs no
/// line here, and a new class fails to compile until it has an exception).
fn to_py_err<E: std::fmt::Debug>(py: Python<'_>, failure: Failure<E>, io: impl FnOnce(&E) -> PyErr) -> PyErr {
    let e = match failure {
        Failure::Python(e) => return e,
        Failure::Write(e) => e,
    };
    match e.class() {
        WriteErrorClass::Io(inner) => io(inner),
        WriteErrorClass::Format(rule) => format_error(py, rule, Kind::Format, None, None),
        WriteErrorClass::TooLarge => PyOverflowError::new_err(e.to_string()),
        WriteErrorClass::BufferFull(_) | WriteErrorClass::Misuse { .. } | WriteErrorClass::Poisoned => {
            PyValueError::new_err(e.to_string())
        }
    }
}

/// Declares, signs if asked, writes and ends every entry on `w`.
fn feed<S: Write, M: Mode>(
    w: &mut Writer<S, VecBookkeeping, M>,
    entries: &[Decl],
    metadata: &[(String, OwnedMetaValue)],
    sign: Option<&(SigningKey, SignOptions)>,
    chunks: &Bound<'_, PyAny>,
) -> Result<(), Failure<S::Error>> {
    for (name, dtype, shape, alignment, target) in entries {
        let dtype = Dtype::from_name(dtype)
            .ok_or_else(|| PyValueError::new_err(format!("unknown tpack dtype {dtype:?}")))?;
        let mut decl = EntryDecl::new(name, dtype, shape).with_alignment(*alignment);
        decl.target = *target;
        w.declare(decl)?;
    }
    for (key, value) in metadata {
        w.metadata(key, value.as_value())?;
    }
    if let Some((key, options)) = sign {
        w.sign(key, options)?;
    }
    for chunk in chunks.try_iter()? {
        let chunk = chunk?;
        if chunk.is_none() {
            w.end_entry()?;
        } else {
            w.write(chunk.cast::<PyBytes>().map_err(PyErr::from)?.as_bytes())?;
        }
    }
    Ok(())
}

fn read_metadata(metadata: Vec<(String, Bound<'_, PyAny>)>) -> PyResult<Vec<(String, OwnedMetaValue)>> {
    metadata.into_iter().map(|(key, value)| Ok((key, meta::from_py(&value)?))).collect()
}

/// Writes a container to `path` atomically: the destination changes only once the whole file is written
/// and synced. `sign`: `(private key PEM, counter, subject, embed public key)` to sign it.
#[pyfunction]
#[pyo3(signature = (path, entries, metadata, chunks, sign=None))]
pub fn write_file(
    py: Python<'_>,
    path: PathBuf,
    entries: Vec<Decl>,
    metadata: Vec<(String, Bound<'_, PyAny>)>,
    chunks: Bound<'_, PyAny>,
    sign: Option<SignDecl>,
) -> PyResult<()> {
    let metadata = read_metadata(metadata)?;
    let sign = sign.map(signing).transpose()?;
    let mut file = AtomicFile::create(&path).map_err(|e| os_error(&e, Some(&path)))?;
    let written = {
        let mut w = SeekWriter::new(file.sink(), VecBookkeeping);
        feed(&mut w, &entries, &metadata, sign.as_ref(), &chunks)
            .and_then(|()| w.finish().map(drop).map_err(Failure::from))
    };
    // On error `file` is dropped here, which deletes the temporary file: the destination is untouched.
    written.map_err(|f| to_py_err(py, f, |e| os_error(e, Some(&path))))?;
    file.commit().map_err(|e| os_error(&e, Some(&path)))
}

/// The container's bytes, written in one pass into memory; `sign` as for [`write_file`].
#[pyfunction]
#[pyo3(signature = (entries, metadata, chunks, sign=None))]
pub fn write_bytes<'py>(
    py: Python<'py>,
    entries: Vec<Decl>,
    metadata: Vec<(String, Bound<'py, PyAny>)>,
    chunks: Bound<'py, PyAny>,
    sign: Option<SignDecl>,
) -> PyResult<Bound<'py, PyBytes>> {
    let metadata = read_metadata(metadata)?;
    let sign = sign.map(signing).transpose()?;
    let mut w = StreamWriter::new(Vec::new(), VecBookkeeping);
    let written = feed(&mut w, &entries, &metadata, sign.as_ref(), &chunks)
        .and_then(|()| w.finish().map_err(Failure::from));
    let bytes = written.map_err(|f| to_py_err(py, f, |e| match *e {}))?;
    Ok(PyBytes::new(py, &bytes))
}
