//! Turning the core's errors into the Python exceptions of `tpack/_errors.py`.
//!
//! The exception classes are plain Python classes (attributes, docstrings, pickling); this module only
//! gathers the fields and calls `tpack._errors._from_native`.

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tpack::{Container, Error, ErrorContext};

/// Which family an error belongs to: a structural rule (found on open), payload integrity (R37, R50: found
/// by `verify`), or authenticity against a policy (R58–R64: found on open with keys, on first use, by
/// `verify`).
#[derive(Clone, Copy)]
pub enum Kind {
    Format,
    Integrity,
    Signature,
}

/// The exception for `error`: its rule, its message and its context, slot for slot (the context is
/// destructured whole, so a slot the core adds fails to compile here until the exception has it). `entry`
/// overrides the entry the error names (a verification error inside a nested container names the outer entry
/// that holds it); `container`, when the container is valid, gives the entry's name.
pub fn format_error(
    py: Python<'_>,
    error: Error,
    kind: Kind,
    entry: Option<u32>,
    container: Option<&Container<'_>>,
) -> PyErr {
    let ErrorContext {
        entry: named,
        record,
        position,
        offset,
        section,
        value,
        stored,
        computed,
        depth,
        outer_entry,
        inner_rule,
    } = error.context();
    // Depth 0 is the container the call was given: no nesting to tell, as for the rules that have none.
    let depth = depth.filter(|&d| d > 0);
    let entry = entry.or(named);
    let name = entry
        .and_then(|e| usize::try_from(e).ok())
        .and_then(|e| container.and_then(|c| c.entry(e)))
        .map(|e| e.name().to_owned());
    let rule = error.rule();
    let kind = match kind {
        Kind::Format => "format",
        Kind::Integrity => "integrity",
        Kind::Signature => "signature",
    };
    let built = py.import("tpack._errors").and_then(|m| {
        let context = PyDict::new(py);
        context.set_item("entry", entry)?;
        context.set_item("record", record)?;
        context.set_item("position", position)?;
        context.set_item("offset", offset)?;
        context.set_item("section", section.map(|s| s.name()))?;
        context.set_item("value", value)?;
        context.set_item("stored", stored)?;
        context.set_item("computed", computed)?;
        context.set_item("depth", depth)?;
        context.set_item("outer_entry", outer_entry)?;
        context.set_item("inner_rule", inner_rule.map(|r| r.id()))?;
        m.getattr("_from_native")?.call1((kind, rule.id(), rule.name(), error.to_string(), name, context))
    });
    match built {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// An `OSError` for `error` about `path` (its errno picks the subclass: `FileNotFoundError`, …).
///
/// Some errors carry no errno of their own (tempfile wraps the OS error to add the temporary file's path);
/// for those the common kinds get theirs back, so that `FileNotFoundError`, `PermissionError` and `IsADirectoryError` still come out.
pub fn os_error(error: &std::io::Error, path: Option<&std::path::Path>) -> PyErr {
    use std::io::ErrorKind;
    let errno = error.raw_os_error().or(match error.kind() {
        ErrorKind::NotFound => Some(ENOENT),
        ErrorKind::PermissionDenied => Some(EACCES),
        ErrorKind::AlreadyExists => Some(EEXIST),
        ErrorKind::IsADirectory => Some(EISDIR),
        _ => None,
    });
    let message = match errno {
        Some(n) => std::io::Error::from_raw_os_error(n).to_string(),
        None => error.to_string(),
    };
    // `Display` ends in " (os error N)", which Python's own OSError text says as "[Errno N]".
    let message = match message.rfind(" (os error ") {
        Some(cut) if message.ends_with(')') => message.get(..cut).unwrap_or(&message).to_owned(),
        _ => message,
    };
    match (errno, path) {
        (Some(errno), Some(path)) => PyOSError::new_err((errno, message, path.as_os_str().to_os_string())),
        (Some(errno), None) => PyOSError::new_err((errno, message)),
        (None, _) => PyOSError::new_err(message),
    }
}

/// The POSIX errno values of the kinds `os_error` restores (the same on every Unix and in Windows' CRT).
const ENOENT: i32 = 2;
const EACCES: i32 = 13;
const EEXIST: i32 = 17;
const EISDIR: i32 = 21;
