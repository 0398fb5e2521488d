//! `convert` and `inspect` for every format the `tpack` command reads: the CLI's readers and writers
//! (`tpack_cli`), so that Python reads PyTorch, NumPy, ONNX, TensorFlow, GGUF and safetensors files — and
//! refuses hostile ones — exactly as `tpack convert` does, without a second implementation.
//!
//! The GIL is released while a conversion runs; nothing of the input's own code runs (pickles are read by
//! the CLI's restricted machine).

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tpack_cli::{CliError, Format, Kind};

/// The output format a `to=` name asks for: the names `tpack convert --to` takes.
fn target(name: &str) -> PyResult<Format> {
    Ok(match name {
        "tpack" => Format::Tpack,
        "safetensors" => Format::Safetensors,
        "gguf" => Format::Gguf,
        "npz" => Format::Npz,
        "onnx" => Format::Onnx,
        other => {
            return Err(PyValueError::new_err(format!(
                "to={other:?} is not an output format: tpack, safetensors, gguf, npz or onnx"
            )))
        }
    })
}

/// The Python exception for a CLI failure: `tpack.FormatError` for an invalid tpack input, `OSError` for a
/// file that cannot be read or written (or an output that exists without `force`), and `tpack.ConvertError`
/// (a `ValueError`) for an input that cannot be used.
fn raised(py: Python<'_>, e: &CliError) -> PyErr {
    let name = match e.kind() {
        Kind::Invalid => "FormatError",
        Kind::Input => "ConvertError",
        Kind::Io => return PyErr::new::<pyo3::exceptions::PyOSError, _>(e.to_string()),
    };
    match py.import("tpack._errors").and_then(|m| m.getattr(name)).and_then(|c| c.call1((e.to_string(),))) {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// `tpack convert input output`: the report it prints. See `tpack.convert`.
#[pyfunction]
#[pyo3(signature = (input, output, to=None, force=false, max_shard_size=None))]
pub fn convert(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    to: Option<&str>,
    force: bool,
    max_shard_size: Option<u64>,
) -> PyResult<String> {
    let to = to.map(target).transpose()?;
    py.detach(|| tpack_cli::run_convert(&input, &output, to, force, max_shard_size, true))
        .map_err(|e| raised(py, &e))
}

/// `tpack inspect --json path`: the JSON document (schema `tpack-inspect/3`). See `tpack.inspect`.
#[pyfunction]
pub fn inspect_json(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    py.detach(|| tpack_cli::run_inspect(&path, None, true)).map_err(|e| raised(py, &e))
}
