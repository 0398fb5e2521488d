//! [`NativeContainer`]: an open container (a memory-mapped file or a private copy of some bytes).

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tpack::{Container, Dtype, Entry, MappedFile, OpenError, Packing};

use crate::errors::{format_error, os_error, Kind};
use crate::meta;
use crate::source::{AlignedBuf, Bytes, Parsed};
use crate::view::PayloadView;

/// An open, structurally valid container. `close()` drops its hold on the bytes; arrays already handed out
/// keep them (and a file's map) alive until they are gone.
#[pyclass(module = "tpack._native")]
pub struct NativeContainer {
    parsed: Option<Parsed>,
}

/// Maps `path` and validates its structure (every rule but the payload checksums).
#[pyfunction]
pub fn open_file(py: Python<'_>, path: PathBuf) -> PyResult<NativeContainer> {
    let file = match MappedFile::open(&path) {
        Ok(file) => file,
        Err(OpenError::Io(e)) => return Err(os_error(&e, Some(&path))),
        Err(OpenError::Format(e)) => return Err(format_error(py, e, Kind::Format, None, None)),
    };
    parse(py, Bytes::Mapped(file))
}

/// Validates a private, 64-byte-aligned copy of `data`.
#[pyfunction]
pub fn open_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<NativeContainer> {
    parse(py, Bytes::Heap(AlignedBuf::copy_from(data.as_bytes())))
}

fn parse(py: Python<'_>, bytes: Bytes) -> PyResult<NativeContainer> {
    match Parsed::new(Arc::new(bytes)) {
        Ok(parsed) => Ok(NativeContainer { parsed: Some(parsed) }),
        Err(e) => Err(format_error(py, e, Kind::Format, None, None)),
    }
}

/// `(kind, block elements, block bytes)` for a packing: `("element", 1, n)`, `("block", e, b)`, `("bytes", 1, 1)`.
fn packing_tuple(packing: Packing) -> (&'static str, u64, u64) {
    match packing {
        Packing::Element(n) => ("element", 1, n),
        Packing::Block { block_elems, block_bytes } => ("block", block_elems, block_bytes),
        Packing::Bytes => ("bytes", 1, 1),
    }
}

/// Every dtype this build knows: `(code, name, packing)` in code order, for the Python side's tables.
#[pyfunction]
pub fn dtype_info() -> Vec<(u16, &'static str, (&'static str, u64, u64))> {
    Dtype::ALL.iter().filter_map(|d| Some((d.code(), d.name()?, packing_tuple(d.packing()?)))).collect()
}

impl NativeContainer {
    fn parsed(&self) -> PyResult<&Parsed> {
        self.parsed.as_ref().ok_or_else(|| PyValueError::new_err("I/O operation on a closed tpack container"))
    }

    fn entry_at<'c>(container: &Container<'c>, position: usize) -> PyResult<Entry<'c>> {
        container.entry(position).ok_or_else(|| PyIndexError::new_err("entry position out of range"))
    }
}

#[pymethods]
impl NativeContainer {
    /// Drops this object's hold on the bytes. Idempotent.
    fn close(&mut self) {
        self.parsed = None;
    }

    #[getter]
    fn closed(&self) -> bool {
        self.parsed.is_none()
    }

    /// `(major, minor)` of the file.
    #[getter]
    fn version(&self) -> PyResult<(u16, u16)> {
        Ok(self.parsed()?.container().version())
    }

    #[getter]
    fn compat_flags(&self) -> PyResult<u64> {
        Ok(self.parsed()?.container().compat_flags())
    }

    /// 0 for a file, 1 for a container nested in it, …
    #[getter]
    fn depth(&self) -> PyResult<u8> {
        Ok(self.parsed()?.container().depth())
    }

    /// The container's length in bytes.
    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        Ok(self.parsed()?.container().as_bytes().len())
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.parsed()?.container().len())
    }

    /// Entry names in table order.
    fn names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.parsed()?.container().entries().map(|e| e.name()))
    }

    /// The table position of `name` (a binary search of the stored index), or `None`.
    fn find(&self, name: &str) -> PyResult<Option<usize>> {
        Ok(self.parsed()?.container().get(name).map(|e| e.position()))
    }

    /// `(position, name, dtype code, dtype name or None, shape, offset, length, alignment, target or None,
    /// checksum, packing or None)` of the entry at `position`.
    #[allow(clippy::type_complexity)]
    fn entry<'py>(&self, py: Python<'py>, position: usize) -> PyResult<Bound<'py, PyTuple>> {
        let container = self.parsed()?.container();
        let e = Self::entry_at(&container, position)?;
        let dtype = e.dtype();
        let packing = dtype.packing().or_else(|| container.geometry(dtype)).map(packing_tuple);
        let shape = PyTuple::new(py, e.shape().dims())?;
        (
            e.position(),
            e.name(),
            dtype.code(),
            dtype.name(),
            shape,
            e.offset(),
            e.byte_len(),
            e.alignment(),
            e.target(),
            e.checksum(),
            packing,
        )
            .into_pyobject(py)
    }

    /// A read-only view of entry `position`'s payload as `shape` elements of numpy `typestr`.
    ///
    /// # Errors
    /// `ValueError` unless the shape's size in bytes is exactly the payload's length.
    fn payload(&self, position: usize, typestr: &str, shape: Vec<u64>) -> PyResult<PayloadView> {
        let parsed = self.parsed()?;
        let container = parsed.container();
        let e = Self::entry_at(&container, position)?;
        PayloadView::new(Arc::clone(parsed.owner()), e.payload(), typestr, shape).ok_or_else(|| {
            PyValueError::new_err("the view's type and shape do not cover the payload exactly")
        })
    }

    /// Asks the kernel to read entry `position`'s pages ahead of use (`madvise(MADV_WILLNEED)`); nothing for
    /// a container in memory.
    fn prefetch(&self, position: usize) -> PyResult<()> {
        let parsed = self.parsed()?;
        let entry = Self::entry_at(&parsed.container(), position)?;
        match &**parsed.owner() {
            Bytes::Mapped(file) => file.prefetch(&entry).map_err(|e| os_error(&e, None)),
            Bytes::Heap(_) => Ok(()),
        }
    }

    /// The container entry `position` holds, sharing these bytes.
    fn nested(&self, position: usize) -> PyResult<NativeContainer> {
        let parsed = self.parsed()?;
        Self::entry_at(&parsed.container(), position)?;
        match parsed.nested(position) {
            Some(nested) => Ok(NativeContainer { parsed: Some(nested) }),
            None => Err(PyValueError::new_err("the entry is not a nested container (dtype CONTAINER)")),
        }
    }

    /// Metadata records in key order: `(key, type, value)`; `type` is the spec name, or the code of a type
    /// of a newer minor version.
    fn metadata<'py>(&self, py: Python<'py>, typed: bool) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for (key, value) in self.parsed()?.container().metadata() {
            let ty = meta::type_name(py, value.value_type())?;
            out.append((key, ty, meta::to_py(py, value, typed)?))?;
        }
        Ok(out)
    }

    /// Checks padding and payload checksums (R37, R50), nested containers included, in table order, and
    /// raises for the first problem. `progress(done, total)` (bytes), if given, is called every few megabytes
    /// and after each entry; an exception it raises stops the verification. Without it, the GIL is released.
    #[pyo3(signature = (progress=None))]
    fn verify(&self, py: Python<'_>, progress: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let container = self.parsed()?.container();
        let failed = match progress {
            None => py.detach(|| {
                container.verification().find_map(|v| v.result().err().map(|e| (v.entry.position(), e)))
            }),
            Some(callback) => {
                let total = container.entries().map(|e| e.byte_len()).fold(0u64, u64::saturating_add);
                let done = Cell::new(0u64);
                let raised: RefCell<Option<PyErr>> = RefCell::new(None);
                let report = |n: u64| {
                    done.set(done.get().saturating_add(n));
                    let mut raised = raised.borrow_mut();
                    if raised.is_none() {
                        if let Err(e) = callback.call1((done.get(), total)) {
                            *raised = Some(e);
                        }
                    }
                };
                let mut failed = None;
                for v in container.verification().with_progress(report) {
                    if let Some(e) = raised.borrow_mut().take() {
                        return Err(e);
                    }
                    if let Err(e) = v.result() {
                        failed = Some((v.entry.position(), e));
                        break;
                    }
                }
                if let Some(e) = raised.borrow_mut().take() {
                    return Err(e);
                }
                failed
            }
        };
        match failed {
            None => Ok(()),
            Some((position, e)) => {
                let entry = u32::try_from(position).ok();
                Err(format_error(py, e, Kind::Integrity, entry, Some(&container)))
            }
        }
    }
}
