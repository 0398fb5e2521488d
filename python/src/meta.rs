//! Metadata values between the core's [`MetaValue`] and Python.
//!
//! Reading gives native Python values (int, float, bool, str, bytes, lists); with `typed`, each value comes
//! with its spec type name, recursively inside `array[]`. Writing takes `(type name, value)` pairs, which
//! `tpack/_meta.py` infers from Python and numpy values.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tpack::zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use tpack::{ArrayArray, MetaType, MetaValue, StringArray};
use typed_arena::Arena;

/// The deepest `array[]` nesting the format allows (spec §7.1), checked before recursing into Python input.
const MAX_ARRAY_DEPTH: u32 = 8;

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

/// A metadata value to write, owning its data.
pub enum Owned {
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    Str(String),
    Bytes(Vec<u8>),
    U64s(Vec<U64>),
    I64s(Vec<I64>),
    F64s(Vec<F64>),
    Strs(Vec<String>),
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    U8s(Vec<u8>),
    I8s(Vec<i8>),
    U16s(Vec<U16>),
    I16s(Vec<I16>),
    U32s(Vec<U32>),
    I32s(Vec<I32>),
    F32s(Vec<F32>),
    Bools(Vec<bool>),
    Arrays(Vec<Owned>),
}

impl Owned {
    /// Reads a `(type name, value)` pair; an `array[]` value is a list of such pairs.
    pub fn from_py(pair: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::from_py_at(pair, 1)
    }

    fn from_py_at(pair: &Bound<'_, PyAny>, depth: u32) -> PyResult<Self> {
        let (ty, v): (String, Bound<'_, PyAny>) = pair.extract()?;
        Ok(match ty.as_str() {
            "u64" => Owned::U64(v.extract()?),
            "i64" => Owned::I64(v.extract()?),
            "f64" => Owned::F64(v.extract()?),
            "bool" => Owned::Bool(v.extract()?),
            "string" => Owned::Str(v.extract()?),
            "bytes" => Owned::Bytes(v.cast::<PyBytes>()?.as_bytes().to_vec()),
            "u64[]" => Owned::U64s(v.extract::<Vec<u64>>()?.into_iter().map(U64::new).collect()),
            "i64[]" => Owned::I64s(v.extract::<Vec<i64>>()?.into_iter().map(I64::new).collect()),
            "f64[]" => Owned::F64s(v.extract::<Vec<f64>>()?.into_iter().map(F64::new).collect()),
            "string[]" => Owned::Strs(v.extract()?),
            "u8" => Owned::U8(v.extract()?),
            "i8" => Owned::I8(v.extract()?),
            "u16" => Owned::U16(v.extract()?),
            "i16" => Owned::I16(v.extract()?),
            "u32" => Owned::U32(v.extract()?),
            "i32" => Owned::I32(v.extract()?),
            "f32" => Owned::F32(v.extract()?),
            "u8[]" => Owned::U8s(v.extract()?),
            "i8[]" => Owned::I8s(v.extract()?),
            "u16[]" => Owned::U16s(v.extract::<Vec<u16>>()?.into_iter().map(U16::new).collect()),
            "i16[]" => Owned::I16s(v.extract::<Vec<i16>>()?.into_iter().map(I16::new).collect()),
            "u32[]" => Owned::U32s(v.extract::<Vec<u32>>()?.into_iter().map(U32::new).collect()),
            "i32[]" => Owned::I32s(v.extract::<Vec<i32>>()?.into_iter().map(I32::new).collect()),
            "f32[]" => Owned::F32s(v.extract::<Vec<f32>>()?.into_iter().map(F32::new).collect()),
            "bool[]" => Owned::Bools(v.extract()?),
            "array[]" => {
                if depth > MAX_ARRAY_DEPTH {
                    return Err(PyValueError::new_err("metadata arrays nest at most 8 levels of array[]"));
                }
                let mut items = Vec::new();
                for item in v.try_iter()? {
                    items.push(Self::from_py_at(&item?, depth.saturating_add(1))?);
                }
                Owned::Arrays(items)
            }
            _ => return Err(PyValueError::new_err(format!("unknown metadata type {ty:?}"))),
        })
    }
}

/// Where the borrowed slices of a lowered value live while it is written.
#[derive(Default)]
pub struct Lowering<'a> {
    strings: Arena<Vec<&'a str>>,
    arrays: Arena<Vec<MetaValue<'a>>>,
}

impl<'a> Lowering<'a> {
    /// The core's view of `value`.
    pub fn lower(&'a self, value: &'a Owned) -> MetaValue<'a> {
        match value {
            Owned::U64(v) => MetaValue::U64(*v),
            Owned::I64(v) => MetaValue::I64(*v),
            Owned::F64(v) => MetaValue::F64(*v),
            Owned::Bool(v) => MetaValue::Bool(*v),
            Owned::Str(v) => MetaValue::String(v),
            Owned::Bytes(v) => MetaValue::Bytes(v),
            Owned::U64s(v) => MetaValue::U64Array(v),
            Owned::I64s(v) => MetaValue::I64Array(v),
            Owned::F64s(v) => MetaValue::F64Array(v),
            Owned::Strs(v) => {
                let items = self.strings.alloc(v.iter().map(String::as_str).collect());
                MetaValue::StringArray(StringArray::new(items))
            }
            Owned::U8(v) => MetaValue::U8(*v),
            Owned::I8(v) => MetaValue::I8(*v),
            Owned::U16(v) => MetaValue::U16(*v),
            Owned::I16(v) => MetaValue::I16(*v),
            Owned::U32(v) => MetaValue::U32(*v),
            Owned::I32(v) => MetaValue::I32(*v),
            Owned::F32(v) => MetaValue::F32(*v),
            Owned::U8s(v) => MetaValue::U8Array(v),
            Owned::I8s(v) => MetaValue::I8Array(v),
            Owned::U16s(v) => MetaValue::U16Array(v),
            Owned::I16s(v) => MetaValue::I16Array(v),
            Owned::U32s(v) => MetaValue::U32Array(v),
            Owned::I32s(v) => MetaValue::I32Array(v),
            Owned::F32s(v) => MetaValue::F32Array(v),
            Owned::Bools(v) => MetaValue::BoolArray(v),
            Owned::Arrays(items) => {
                let items = self.arrays.alloc(items.iter().map(|item| self.lower(item)).collect());
                MetaValue::ArrayArray(ArrayArray::new(items))
            }
        }
    }
}
