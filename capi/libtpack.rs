//! `libtpack.a` and `libtpack.so`: the C API of `tpack-capi-rlib` (capi/src) as the C libraries of a host. Every
//! `tpack_*` function of `include/tpack.h` is exported from here; this crate adds nothing. With the `std` feature
//! (the default, and the one these libraries are built with) a panic is caught at every entry point.
#![no_std]

pub use tpack_capi::*;
