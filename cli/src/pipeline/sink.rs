//! The sink of a conversion: what was read, written as the output plan says, as one file or as shards, in
//! any format the tool writes.

use std::path::PathBuf;

use super::plan::OutputPlan;
use super::source::{Input, Source};
use crate::error::{CliError, Result};
use crate::formats::{exporter, tpack, Format};
use crate::output::StagingDir;

/// What a sink wrote, for the report.
#[derive(Debug)]
pub(crate) struct Written {
    /// The files written, in order (shards in shard order).
    pub(crate) files: Vec<PathBuf>,
    /// Tensors written.
    pub(crate) entries: usize,
    /// Metadata values written.
    pub(crate) metadata: usize,
    /// What the reader noticed and what the writer could not keep, one sentence each.
    pub(crate) notes: Vec<String>,
}

/// Writes `input`, read from `source` and verified, as `plan` says, as the files `names` that
/// [`OutputPlan::files`] told and checked: a model into one container (streamed, memory O(table)); a
/// container with its format's writer. A foreign writer writes in a staging directory whose files are moved
/// into place together, so an interrupt or a failure leaves no part of the output. `quiet` hides progress.
///
/// # Errors
/// What the writer refuses ([`crate::Kind::Input`]); I/O failures ([`crate::Kind::Io`]).
pub(crate) fn write(
    plan: &OutputPlan,
    names: &[String],
    source: &Source,
    input: Input<'_>,
    quiet: bool,
) -> Result<Written> {
    let origin = source.origin();
    let container = match (input, plan.format) {
        (Input::Model(model), Format::Tpack) => {
            tpack::write(&model, &plan.path, quiet)?;
            return Ok(Written {
                files: vec![plan.path.clone()],
                entries: model.entries.len(),
                metadata: model.metadata.len(),
                notes: model.notes,
            });
        }
        (Input::Container(container), _) => container,
        (Input::Model(_), to) => return Err(bug(source, to)),
    };
    let export = exporter(plan.format).ok_or_else(|| bug(source, plan.format))?;
    let staging = StagingDir::create(&plan.path)
        .map_err(|e| CliError::io("cannot create a directory next to", &plan.path, &e))?;
    let exported = export.write(origin, &container, staging.path(), &plan.name, &plan.options)?;
    if exported.files != *names {
        return Err(CliError::input(format!(
            "{}: the {} writer wrote other files than it planned ({:?}, not {names:?}); this is a bug",
            origin.display(),
            plan.format.name(),
            exported.files
        )));
    }
    let mut notes = exported.notes;
    if plan.is_one_file(names) {
        staging
            .commit_file(&plan.name, &plan.path)
            .map_err(|e| CliError::io("cannot save", &plan.path, &e))?;
    } else {
        staging.commit_files(names, &plan.dir).map_err(|e| CliError::io("cannot save", &plan.path, &e))?;
        // A file OUT left from an unsharded write would be read in place of the shards.
        if export.shadows_shards() && plan.force && plan.path.symlink_metadata().is_ok_and(|m| m.is_file()) {
            std::fs::remove_file(&plan.path).map_err(|e| CliError::io("cannot remove", &plan.path, &e))?;
            notes.push(format!(
                "removed {}, the unsharded file the shards replace (loaders would prefer it to them)",
                plan.path.display()
            ));
        }
    }
    Ok(Written { files: plan.paths(names), entries: exported.entries, metadata: exported.metadata, notes })
}

/// The error of a pair of formats that [`OutputPlan::check`] lets through and no sink writes: a bug.
fn bug(source: &Source, to: Format) -> CliError {
    CliError::input(format!(
        "{}: no writer of {} output takes this input; this is a bug",
        source.origin().display(),
        to.name()
    ))
}
