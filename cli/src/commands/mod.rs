//! One module per command; each `run` takes the parsed arguments and returns the report to print.

pub(crate) mod convert;
pub(crate) mod inspect;
pub(crate) mod keygen;
pub(crate) mod pack;
pub(crate) mod sign;
pub(crate) mod unpack;
pub(crate) mod verify;
