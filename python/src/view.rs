//! [`PayloadView`]: what numpy is handed to view a payload in place.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use tpack::PrivatePayload;

use crate::source::Bytes;

/// What keeps a view's bytes valid, and whether they may be written.
// The fields are held, never read: holding them is what keeps the bytes mapped.
#[allow(dead_code)]
pub enum Backing {
    /// The container's bytes (a file's read-only map, or a heap copy): read-only.
    Shared(Arc<Bytes>),
    /// One payload's private copy-on-write mapping, owned by this view alone: writable, and writes never
    /// reach the file. No Rust reference to its bytes outlives [`PayloadView::private`]: Python writes through
    /// the address only.
    Private(PrivatePayload),
}

/// Payload bytes exposed through numpy's `__array_interface__` (version 3).
///
/// `numpy.asarray(view)` makes an array over these bytes without copying them and keeps the view as the
/// array's `base`; the view holds its [`Backing`] alive (the file's map, or a private mapping), so the map
/// outlives `Container.close()` for as long as any array over it exists. The interface is used rather than the
/// buffer protocol, which the stable ABI of Python 3.9 (abi3-py39) does not have.
#[pyclass(frozen, module = "tpack._native")]
pub struct PayloadView {
    /// Keeps `address..address + len` valid.
    backing: Backing,
    address: usize,
    len: usize,
    typestr: String,
    shape: Vec<u64>,
}

/// Whether `shape` elements of numpy `typestr` are exactly `len` bytes, of a kind numpy views as numbers.
fn covers(typestr: &str, shape: &[u64], len: usize) -> Option<bool> {
    let item: u64 = typestr.get(2..)?.parse().ok()?;
    let valid_kind = matches!(typestr.get(..2)?, "|u" | "<u" | "|i" | "<i" | "<f" | "<c" | "|b");
    let size = shape.iter().try_fold(item, |acc, &d| acc.checked_mul(d))?;
    Some(valid_kind && size == u64::try_from(len).ok()?)
}

impl PayloadView {
    /// A read-only view of `bytes` (which `owner` owns) as `shape` elements of `typestr`; `None` unless the
    /// shape's size in bytes is exactly `bytes.len()`, so that numpy can never read outside the payload.
    pub fn new(owner: Arc<Bytes>, bytes: &[u8], typestr: &str, shape: Vec<u64>) -> Option<Self> {
        covers(typestr, &shape, bytes.len())?.then(|| Self {
            backing: Backing::Shared(owner),
            address: bytes.as_ptr() as usize,
            len: bytes.len(),
            typestr: typestr.to_owned(),
            shape,
        })
    }

    /// A writable view of a private payload mapping, which it owns from now on; `None` unless the shape covers
    /// it exactly, as for [`PayloadView::new`].
    pub fn private(mut payload: PrivatePayload, typestr: &str, shape: Vec<u64>) -> Option<Self> {
        let bytes = payload.as_bytes_mut();
        let (address, len) = (bytes.as_mut_ptr() as usize, bytes.len());
        // Moving the mapping into the view does not move its pages: the address stays valid.
        covers(typestr, &shape, len)?.then(|| Self {
            backing: Backing::Private(payload),
            address,
            len,
            typestr: typestr.to_owned(),
            shape,
        })
    }

    fn read_only(&self) -> bool {
        matches!(self.backing, Backing::Shared(_))
    }
}

#[pymethods]
impl PayloadView {
    /// numpy's array interface: the payload's address (read-only unless the view is a private mapping), its
    /// shape and element type.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("version", 3)?;
        dict.set_item("data", (self.address, self.read_only()))?;
        dict.set_item("shape", pyo3::types::PyTuple::new(py, &self.shape)?)?;
        dict.set_item("typestr", &self.typestr)?;
        Ok(dict)
    }

    /// The payload's length in bytes.
    fn __len__(&self) -> usize {
        self.len
    }

    /// Whether numpy may write through this view (a private copy-on-write mapping).
    #[getter]
    fn writable(&self) -> bool {
        !self.read_only()
    }
}
