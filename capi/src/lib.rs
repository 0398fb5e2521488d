//! The C API of tpack: parse, verify and walk a container, authenticate a signed one against a policy, and
//! push-decode a stream, from C or C++, with no allocation.
//!
//! A thin layer over the `tpack` crate: it translates types, ownership and errors, and holds no format logic.
//! Its conventions (after rustls-ffi) are stated once, at the top of `include/tpack.h` (generated from
//! `cbindgen.toml`) and in `docs/c-api.md`:
//!
//! - every fallible function returns a [`tpack_result`]; `TPACK_RESULT_OK` is 0;
//! - outputs go through out-parameters, written only on success; a `tpack_error *out_error` (which may be
//!   NULL) is written only on failure;
//! - every pointer is checked for NULL, and handles for alignment and for having been filled by this library;
//! - handles live in storage the caller provides (`tpack_container`, `tpack_meta_value`, `tpack_decoder`,
//!   complete C types whose size the header states), so nothing is allocated;
//! - strings cross as pointer + length ([`tpack_str`], not NUL-terminated), except the static names
//!   (`tpack_dtype_name`, …), which are NUL-terminated;
//! - with the `std` feature a panic is caught at every entry point and becomes `TPACK_RESULT_PANIC`; without
//!   it (firmware) a panic reaches the firmware's own `#[panic_handler]`.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::as_conversions,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]
// The C names are the API: `tpack_container`, `tpack_result`, …
#![allow(non_camel_case_types)]

#[cfg(feature = "std")]
extern crate std;

mod auth;
mod boundary;
mod codes;
mod container;
mod crypto;
mod decoder;
mod error;
mod message;
mod metadata;
mod names;
mod signed_decoder;
mod view;
mod writer;

pub use auth::*;
pub use boundary::{tpack_bytes, tpack_str, TPACK_NUL_TERMINATED};
pub use codes::*;
pub use container::*;
pub use crypto::*;
pub use decoder::*;
pub use error::*;
pub use message::*;
pub use metadata::*;
pub use names::*;
pub use signed_decoder::*;
pub use writer::*;

/// Panics inside the boundary, to test that the panic is caught: returns `TPACK_RESULT_PANIC` and writes
/// `out_error` (when not NULL) with that result. A test hook: only with the `test-hooks` feature, which only the
/// tests turn on, so no shipped library exports it (`capi/tests/check-exports.sh` checks); not in `tpack.h`
/// (cbindgen.toml excludes it), a test declares it itself.
///
/// # Safety
/// `out_error` is NULL or points to a writable `tpack_error`.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
#[no_mangle]
#[allow(clippy::panic)]
pub unsafe extern "C" fn tpack_test_panic(out_error: *mut tpack_error) -> tpack_result {
    boundary::guard_with_error(out_error, || panic!("tpack_test_panic: a panic on purpose"))
}
