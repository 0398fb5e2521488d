//! [`PayloadView`]: what numpy is handed to view a payload in place.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::source::Bytes;

/// Read-only payload bytes exposed through numpy's `__array_interface__` (version 3).
///
/// `numpy.asarray(view)` makes an array over these bytes without copying them and keeps the view as the
/// array's `base`; the view holds the container's bytes (the file's memory map) alive, so the map outlives
/// `Container.close()` for as long as any array over it exists. The interface is used rather than the
/// buffer protocol, which the stable ABI of Python 3.9 (abi3-py39) does not have.
#[pyclass(frozen, module = "tpack._native")]
pub struct PayloadView {
    /// Keeps `address..address + len` valid.
    _owner: Arc<Bytes>,
    address: usize,
    len: usize,
    typestr: String,
    shape: Vec<u64>,
}

impl PayloadView {
    /// A view of `bytes` (which `owner` owns) as `shape` elements of `typestr`; `None` unless the shape's
    /// size in bytes is exactly `bytes.len()`, so that numpy can never read outside the payload.
    pub fn new(owner: Arc<Bytes>, bytes: &[u8], typestr: &str, shape: Vec<u64>) -> Option<Self> {
        let item: u64 = typestr.get(2..)?.parse().ok()?;
        let valid_kind = matches!(typestr.get(..2)?, "|u" | "<u" | "|i" | "<i" | "<f" | "<c" | "|b");
        let size = shape.iter().try_fold(item, |acc, &d| acc.checked_mul(d))?;
        (valid_kind && size == u64::try_from(bytes.len()).ok()?).then(|| Self {
            _owner: owner,
            address: bytes.as_ptr() as usize,
            len: bytes.len(),
            typestr: typestr.to_owned(),
            shape,
        })
    }
}

#[pymethods]
impl PayloadView {
    /// numpy's array interface: the payload's address (read-only), its shape and element type.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("version", 3)?;
        dict.set_item("data", (self.address, true))?;
        dict.set_item("shape", pyo3::types::PyTuple::new(py, &self.shape)?)?;
        dict.set_item("typestr", &self.typestr)?;
        Ok(dict)
    }

    /// The payload's length in bytes.
    fn __len__(&self) -> usize {
        self.len
    }
}
