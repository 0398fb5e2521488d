//! `tpack._native`: the Rust half of the `tpack` Python package.
//!
//! It is thin (STYLE.md, habit 10): it parses and verifies with the core crate, hands numpy read-only views
//! of payload bytes, turns metadata into Python values and back, drives the streaming writer, and hands keys
//! and policies to the core's signing and verification. Dtype tables for numpy, dequantization and the
//! user-facing API live in `python/tpack/`.
//!
//! Nothing here panics on any input: untrusted bytes only reach the core's parser, sizes go through checked
//! arithmetic, and every failure becomes a Python exception.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

mod container;
mod convert;
mod errors;
mod keys;
mod load;
mod meta;
mod save;
mod source;
mod view;

use pyo3::prelude::*;

/// The extension module. `tpack/__init__.py` is its only intended user.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<container::NativeContainer>()?;
    m.add_class::<view::PayloadView>()?;
    m.add_function(wrap_pyfunction!(container::open_file, m)?)?;
    m.add_function(wrap_pyfunction!(container::open_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(container::open_file_for_load, m)?)?;
    m.add_function(wrap_pyfunction!(save::write_file, m)?)?;
    m.add_function(wrap_pyfunction!(save::write_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(container::dtype_info, m)?)?;
    m.add_function(wrap_pyfunction!(keys::generate_key, m)?)?;
    m.add_function(wrap_pyfunction!(keys::public_key_from_pem, m)?)?;
    m.add_function(wrap_pyfunction!(keys::public_key_from_raw, m)?)?;
    m.add_function(wrap_pyfunction!(keys::algorithm_name, m)?)?;
    m.add_function(wrap_pyfunction!(convert::convert, m)?)?;
    m.add_function(wrap_pyfunction!(convert::inspect_json, m)?)?;
    Ok(())
}
