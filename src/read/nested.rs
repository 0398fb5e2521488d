//! The group *nesting* (R38–R39, spec §9): every `CONTAINER` entry holds a valid container, not too deep.

use super::Container;
use crate::error::Error;
use crate::format::{Dtype, MAX_NESTING_DEPTH};
use crate::layout::slice;

/// R38–R39 for the `CONTAINER` entries of `outer`, whose payloads R33–R36 have placed.
pub(super) fn check(outer: &Container<'_>) -> Result<(), Error> {
    for (entry, d) in (0u32..).zip(outer.table) {
        if Dtype::from_code(d.dtype.get()) != Dtype::CONTAINER {
            continue;
        }
        if outer.depth >= MAX_NESTING_DEPTH {
            return Err(Error::NestingTooDeep { entry });
        }
        let depth = outer.depth.saturating_add(1);
        let payload = slice(outer.bytes, d.offset.get(), d.length.get()).unwrap_or(&[]);
        Container::parse_at(payload, depth).map_err(|e| match e {
            // Too-deep nesting keeps its own rule all the way out, so the outermost reader names it.
            Error::NestingTooDeep { .. } => Error::NestingTooDeep { entry },
            // The depth of the container that breaks the inner rule, however deep, with this container's entry:
            // where to look from here, and how far down.
            Error::NestedInvalid { inner, depth, .. } => Error::NestedInvalid { entry, depth, inner },
            other => Error::NestedInvalid { entry, depth, inner: other.rule() },
        })?;
    }
    Ok(())
}
