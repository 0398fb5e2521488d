//! `tpack pack`: a container from a JSON manifest, checked completely before anything is written.

use std::borrow::Cow;
use std::path::Path;

use crate::error::Result;
use crate::formats::tpack::{self, OutEntry, Payload};
use crate::formats::Model;
use crate::fsutil::check_overwrite;
use crate::manifest::{self, Source};

/// Runs `tpack pack MANIFEST -o OUT`.
///
/// # Errors
/// Every manifest problem ([`crate::Kind::Input`]), an existing output without `force`, I/O failures.
pub fn run(manifest_path: &Path, out: &Path, force: bool, quiet: bool) -> Result<String> {
    let plan = manifest::load(manifest_path)?;
    check_overwrite(out, force)?;
    let entries: Vec<OutEntry<'_>> = plan
        .entries
        .iter()
        .map(|e| OutEntry {
            name: Cow::Borrowed(&e.name),
            dtype: e.dtype,
            shape: e.shape.clone(),
            alignment: e.alignment,
            target: e.target,
            length: e.length,
            payload: match &e.source {
                Source::File(p) => Payload::File(p),
                Source::Inline(b) => Payload::Bytes(b),
            },
        })
        .collect();
    let model =
        Model { compat_flags: plan.compat_flags, entries, metadata: plan.metadata, notes: Vec::new() };
    tpack::write(&model, out, quiet)?;
    let bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    Ok(format!(
        "packed {} entries and {} metadata values into {} ({})\n",
        model.entries.len(),
        model.metadata.len(),
        out.display(),
        crate::fsutil::size_short(bytes)
    ))
}
