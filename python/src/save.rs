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

/// What a failure is about, so that its exception can name it: a declared entry or a metadata record, by
/// position in what Python handed over.
#[derive(Clone, Copy)]
enum About {
    Tensor(usize),
    Key(usize),
}

/// A failure and, when known, what it is about.
struct Failed<E> {
    failure: Failure<E>,
    about: Option<About>,
}

impl<E> Failed<E> {
    fn about(failure: impl Into<Failure<E>>, about: About) -> Self {
        Failed { failure: failure.into(), about: Some(about) }
    }
}

impl<E> From<WriteError<E>> for Failed<E> {
    fn from(e: WriteError<E>) -> Self {
        Failed { failure: Failure::Write(e), about: None }
    }
}

/// The exception for `failed`, by the core's class of a writer error (so a new kind of writer error needs no
/// line here, and a new class fails to compile until it has an exception), naming the tensor or metadata key
/// it is about: the one being declared or written when it failed, else the entry the core's error names.
fn to_py_err<E: std::fmt::Debug>(
    py: Python<'_>,
    failed: Failed<E>,
    entries: &[Decl],
    metadata: &[(String, OwnedMetaValue)],
    io: impl FnOnce(&E) -> PyErr,
) -> PyErr {
    let (error, named) = match failed.failure {
        Failure::Python(e) => (e, None),
        Failure::Write(e) => match e.class() {
            WriteErrorClass::Io(inner) => (io(inner), None),
            WriteErrorClass::Format(rule) => {
                let entry = rule.context().entry.and_then(|i| usize::try_from(i).ok());
                (format_error(py, rule, Kind::Format, None, None), entry.map(About::Tensor))
            }
            WriteErrorClass::TooLarge => (PyOverflowError::new_err(e.to_string()), None),
            WriteErrorClass::BufferFull(_) | WriteErrorClass::Misuse { .. } | WriteErrorClass::Poisoned => {
                (PyValueError::new_err(e.to_string()), None)
            }
        },
    };
    let name = match failed.about.or(named) {
        Some(About::Tensor(i)) => entries.get(i).map(|e| ("tensor", e.0.as_str())),
        Some(About::Key(i)) => metadata.get(i).map(|m| ("metadata key", m.0.as_str())),
        None => None,
    };
    match name {
        Some((subject, name)) => naming(py, error, subject, name),
        None => error,
    }
}

/// `error` again, saying which `subject` (`"tensor"`, `"metadata key"`) called `name` it is about
/// (`tpack._errors._naming`: a `TpackError` keeps its rule and context).
fn naming(py: Python<'_>, error: PyErr, subject: &str, name: &str) -> PyErr {
    let value = error.value(py).clone();
    match py.import("tpack._errors").and_then(|m| m.getattr("_naming")?.call1((value, subject, name))) {
        Ok(named) => PyErr::from_value(named),
        Err(e) => e,
    }
}

/// Declares, signs if asked, writes and ends every entry on `w`.
fn feed<S: Write, M: Mode>(
    w: &mut Writer<S, VecBookkeeping, M>,
    entries: &[Decl],
    metadata: &[(String, OwnedMetaValue)],
    sign: Option<&(SigningKey, SignOptions)>,
    chunks: &Bound<'_, PyAny>,
) -> Result<(), Failed<S::Error>> {
    for (i, (name, dtype, shape, alignment, target)) in entries.iter().enumerate() {
        let dtype = Dtype::from_name(dtype).ok_or_else(|| {
            Failed::about(PyValueError::new_err(format!("unknown tpack dtype {dtype:?}")), About::Tensor(i))
        })?;
        let mut decl = EntryDecl::new(name, dtype, shape).with_alignment(*alignment);
        decl.target = *target;
        w.declare(decl).map_err(|e| Failed::about(e, About::Tensor(i)))?;
    }
    for (i, (key, value)) in metadata.iter().enumerate() {
        w.metadata(key, value.as_value()).map_err(|e| Failed::about(e, About::Key(i)))?;
    }
    if let Some((key, options)) = sign {
        w.sign(key, options)?;
    }
    let iterator = chunks.try_iter().map_err(|e| Failed { failure: Failure::Python(e), about: None })?;
    // The tensor whose chunks are coming: what a failure while producing or writing them is about.
    let mut current = 0usize;
    for chunk in iterator {
        let about = About::Tensor(current);
        let chunk = chunk.map_err(|e| Failed::about(e, about))?;
        if chunk.is_none() {
            w.end_entry().map_err(|e| Failed::about(e, about))?;
            current = current.saturating_add(1);
        } else {
            let bytes = chunk.cast::<PyBytes>().map_err(|e| Failed::about(PyErr::from(e), about))?;
            w.write(bytes.as_bytes()).map_err(|e| Failed::about(e, about))?;
        }
    }
    Ok(())
}

/// The metadata Python typed, each value converted for the writer; an error names its key.
fn read_metadata(
    py: Python<'_>,
    metadata: Vec<(String, Bound<'_, PyAny>)>,
) -> PyResult<Vec<(String, OwnedMetaValue)>> {
    metadata
        .into_iter()
        .map(|(key, value)| match meta::from_py(&value) {
            Ok(value) => Ok((key, value)),
            Err(e) => Err(naming(py, e, "metadata key", &key)),
        })
        .collect()
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
    let metadata = read_metadata(py, metadata)?;
    let sign = sign.map(signing).transpose()?;
    let mut file = AtomicFile::create(&path).map_err(|e| os_error(&e, Some(&path)))?;
    let written = {
        let mut w = SeekWriter::new(file.sink(), VecBookkeeping);
        feed(&mut w, &entries, &metadata, sign.as_ref(), &chunks)
            .and_then(|()| w.finish().map(drop).map_err(Failed::from))
    };
    // On error `file` is dropped here, which deletes the temporary file: the destination is untouched.
    written.map_err(|f| to_py_err(py, f, &entries, &metadata, |e| os_error(e, Some(&path))))?;
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
    let metadata = read_metadata(py, metadata)?;
    let sign = sign.map(signing).transpose()?;
    let mut w = StreamWriter::new(Vec::new(), VecBookkeeping);
    let written = feed(&mut w, &entries, &metadata, sign.as_ref(), &chunks)
        .and_then(|()| w.finish().map_err(Failed::from));
    let bytes = written.map_err(|f| to_py_err(py, f, &entries, &metadata, |e| match *e {}))?;
    Ok(PyBytes::new(py, &bytes))
}
