//! Shared by the integration tests and the conformance example.
#![allow(dead_code)]

pub mod cases;
pub mod entry;
pub mod json;
pub mod manifest;
pub mod raw;
pub mod sinks;
