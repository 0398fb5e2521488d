//! Metadata values between the core's [`MetaValue`] and Python.
//!
//! Reading gives native Python values (int, float, bool, str, bytes, lists); with `typed`, each value comes
//! with its spec type name, recursively inside `array[]`. Writing takes `(type name, value)` pairs, which
//! `tpack/_meta.py` infers from Python and numpy values, into the core's [`OwnedMetaValue`].

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tpack::format::MAX_ARRAY_DEPTH;
use tpack::{MetaType, MetaValue, OwnedMetaValue, UnwritableValue};

/// The spec name of a value type, or its code for a type of a newer minor version.
pub fn type_name(py: Python<'_>, ty: MetaType) -> PyResult<Bound<'_, PyAny>> {
    match ty.name() {
        Some(name) => Ok(name.into_pyobject(py)?.into_any()),
        None => Ok(ty.code().into_pyobject(py)?.into_any()),
    }
}

fn list<'py, T, I>(py: Python<'py>, items: I) -> PyResult<Bound<'py, PyAny>>
where
    I: IntoIterator<Item = T>,
    T: IntoPyObject<'py>,
    I::IntoIter: ExactSizeIterator,
{
    Ok(PyList::new(py, items)?.into_any())
}

/// `value` as a Python value; with `typed`, the items of an `array[]` are `(type, value)` pairs.
pub fn to_py<'py>(py: Python<'py>, value: MetaValue<'_>, typed: bool) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        MetaValue::U64(v) => v.into_pyobject(py)?.into_any(),
        MetaValue::I64(v) => v.into_pyobject(py)?.into_any(),
        MetaValue::F64(v) => v.into_pyobject(py)?.into_any(),
        MetaValue::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        MetaValue::String(v) => v.into_pyobject(py)?.into_any(),
        MetaValue::Bytes(v) => PyBytes::new(py, v).into_any(),
        MetaValue::U64Array(v) => list(py, v.iter().map(|x| x.get()))?,
        MetaValue::I64Array(v) => list(py, v.iter().map(|x| x.get()))?,
        MetaValue::F64Array(v) => list(py, v.iter().map(|x| x.get()))?,
        MetaValue::StringArray(v) => PyList::new(py, v.collect::<Vec<_>>())?.into_any(),
        MetaValue::U8(v) => v.into_pyobject(py)?.into_any(),
        MetaValue::I8(v) => v.into_pyobject(py)?.into_any(),
        MetaValue::U16(v) => v.into_pyobject(py)?.into_any(),
        MetaValue::I16(v) => v.into_pyobject(py)?.into_any(),
        MetaValue::U32(v) => v.into_pyobject(py)?.into_any(),
        MetaValue::I32(v) => v.into_pyobject(py)?.into_any(),
        // Widening is exact, except that a signalling NaN comes out quiet (the CPU's conversion).
        MetaValue::F32(v) => f64::from(v).into_pyobject(py)?.into_any(),
        MetaValue::U8Array(v) => list(py, v.iter().copied())?,
        MetaValue::I8Array(v) => list(py, v.iter().copied())?,
        MetaValue::U16Array(v) => list(py, v.iter().map(|x| x.get()))?,
        MetaValue::I16Array(v) => list(py, v.iter().map(|x| x.get()))?,
        MetaValue::U32Array(v) => list(py, v.iter().map(|x| x.get()))?,
        MetaValue::I32Array(v) => list(py, v.iter().map(|x| x.get()))?,
        MetaValue::F32Array(v) => list(py, v.iter().map(|x| f64::from(x.get())))?,
        MetaValue::BoolArray(v) => list(py, v.iter().copied())?,
        MetaValue::ArrayArray(items) => {
            let out = PyList::empty(py);
            for item in items {
                let converted = to_py(py, item, typed)?;
                if typed {
                    out.append(PyTuple::new(py, [type_name(py, item.value_type())?, converted])?)?;
                } else {
                    out.append(converted)?;
                }
            }
            out.into_any()
        }
        MetaValue::Unknown { bytes, .. } => PyBytes::new(py, bytes).into_any(),
        // `MetaValue` is non-exhaustive; a variant added later is read as nothing rather than a panic.
        _ => py.None().into_bound(py),
    })
}

/// Reads a `(type name, value)` pair into the core's owned value; an `array[]` value is a list of such pairs.
pub fn from_py(pair: &Bound<'_, PyAny>) -> PyResult<OwnedMetaValue> {
    from_py_at(pair, 1)
}

/// The core's refusal as a `ValueError` (the key is not known here; the caller names the value).
fn unwritable(e: UnwritableValue) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn from_py_at(pair: &Bound<'_, PyAny>, depth: u8) -> PyResult<OwnedMetaValue> {
    let (name, v): (String, Bound<'_, PyAny>) = pair.extract()?;
    let ty = MetaType::from_name(&name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown metadata type {name:?}")))?;
    Ok(match ty {
        MetaType::U64 => v.extract::<u64>()?.into(),
        MetaType::I64 => v.extract::<i64>()?.into(),
        MetaType::F64 => v.extract::<f64>()?.into(),
        MetaType::BOOL => v.extract::<bool>()?.into(),
        MetaType::STRING => v.extract::<String>()?.into(),
        MetaType::BYTES => OwnedMetaValue::bytes(v.cast::<PyBytes>()?.as_bytes()),
        MetaType::U64_ARRAY => v.extract::<Vec<u64>>()?.into(),
        MetaType::I64_ARRAY => v.extract::<Vec<i64>>()?.into(),
        MetaType::F64_ARRAY => v.extract::<Vec<f64>>()?.into(),
        MetaType::STRING_ARRAY => {
            OwnedMetaValue::string_array(v.extract::<Vec<String>>()?).map_err(unwritable)?
        }
        MetaType::U8 => v.extract::<u8>()?.into(),
        MetaType::I8 => v.extract::<i8>()?.into(),
        MetaType::U16 => v.extract::<u16>()?.into(),
        MetaType::I16 => v.extract::<i16>()?.into(),
        MetaType::U32 => v.extract::<u32>()?.into(),
        MetaType::I32 => v.extract::<i32>()?.into(),
        MetaType::F32 => v.extract::<f32>()?.into(),
        MetaType::U8_ARRAY => OwnedMetaValue::u8_array(v.extract::<Vec<u8>>()?),
        MetaType::I8_ARRAY => v.extract::<Vec<i8>>()?.into(),
        MetaType::U16_ARRAY => v.extract::<Vec<u16>>()?.into(),
        MetaType::I16_ARRAY => v.extract::<Vec<i16>>()?.into(),
        MetaType::U32_ARRAY => v.extract::<Vec<u32>>()?.into(),
        MetaType::I32_ARRAY => v.extract::<Vec<i32>>()?.into(),
        MetaType::F32_ARRAY => v.extract::<Vec<f32>>()?.into(),
        MetaType::BOOL_ARRAY => v.extract::<Vec<bool>>()?.into(),
        MetaType::ARRAY_ARRAY => {
            // The core refuses deeper nesting too; this bound keeps a hostile Python list from recursing
            // without end before the core sees it.
            if depth > MAX_ARRAY_DEPTH {
                return Err(PyValueError::new_err("metadata arrays nest at most 8 levels of array[]"));
            }
            let items = v
                .try_iter()?
                .map(|item| from_py_at(&item?, depth.saturating_add(1)))
                .collect::<PyResult<Vec<_>>>()?;
            OwnedMetaValue::array_array(items).map_err(unwritable)?
        }
        // A type this build names but cannot take from Python: none today (`from_name` knows the types of
        // format 1.1, all listed above).
        _ => return Err(PyValueError::new_err(format!("metadata type {name:?} cannot be written"))),
    })
}
