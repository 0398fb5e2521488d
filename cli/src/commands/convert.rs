//! `tpack convert`: a foreign format to tpack or tpack to a foreign format, tensor bytes unchanged.
//!
//! Inputs are validated completely before anything is written: a foreign file by its [`Import`], a tpack file
//! by the full verification of `tpack verify`. The formats themselves live in [`crate::formats`]; this module
//! only picks the pair and reports.

use std::path::{Path, PathBuf};

use ::tpack::Container;

use crate::error::{missing_directory, CliError, Kind, Result};
use crate::formats::{
    exporter, importer, not_a_model_file, tpack, Export, ExportOptions, Format, Import, EXPORTS, IMPORTS,
};
use crate::fsutil::{check_overwrite, size_short};
use crate::output::StagingDir;

/// Runs `tpack convert IN OUT`; `to` overrides the output format told by OUT's extension; `max_shard_size`
/// splits a safetensors output into shards of at most that many bytes (module `shards`). IN may also be a
/// shard set: a Hugging Face index (or its directory) or the first file of a split GGUF.
///
/// Every refusal that does not depend on the input's content comes before any conversion work, each with its
/// own message, in this order: OUT is IN itself; OUT is a directory; OUT's format cannot be told; IN is in no
/// format the tool reads; the pair of formats is not supported; OUT's directory does not exist; OUT exists
/// and `force` is off.
///
/// # Errors
/// An input that is invalid or cannot be represented in the output format ([`crate::Kind::Input`] or
/// [`crate::Kind::Invalid`] for a bad tpack input), an output that is the input or a directory, an existing
/// output without `force`, I/O failures.
pub fn run(
    input: &Path,
    output: &Path,
    to: Option<Format>,
    force: bool,
    max_shard_size: Option<u64>,
    quiet: bool,
) -> Result<String> {
    if let Some(set) = crate::shards::ShardSet::find(input)? {
        return crate::shards::into_tpack(&set, output, to, force, max_shard_size, quiet);
    }
    let map = crate::fsutil::map(input)?;
    check_output_path(input, output)?;
    let to = output_format(output, to)?;
    let Some(from) = Format::sniff(&map) else {
        return Err(CliError::input(not_a_model_file(input, &map)));
    };
    // tpack is the hub: a foreign format goes into tpack with its reader, or out of tpack with its writer.
    let direction = match (from, to) {
        (_, Format::Tpack) => importer(from).map(Direction::Into),
        (Format::Tpack, _) => exporter(to).map(Direction::From),
        _ => None,
    };
    let direction = direction.ok_or_else(|| unsupported(input, from, to))?;
    crate::shards::check_shard_size_target(max_shard_size, to)?;
    if let Some(dir) = missing_directory(output) {
        return Err(CliError::no_directory(output, dir));
    }
    // Sharded GGUF output: which files are written is told once the input is read (in `from_tpack`). A
    // sharded safetensors output still refuses an existing OUT without `--force`: loaders prefer OUT to an index.
    if max_shard_size.is_none() || to == Format::Safetensors {
        check_overwrite(output, force)?;
    }
    let options = ExportOptions { max_shard_size };
    match (direction, max_shard_size) {
        (Direction::Into(import), _) => into_tpack(import, input, &map, output, quiet),
        (Direction::From(_), Some(limit)) if to == Format::Safetensors => {
            crate::shards::safetensors_out::from_tpack(input, &map, output, limit, force, quiet)
        }
        (Direction::From(export), _) => from_tpack(export, input, &map, output, force, quiet, &options),
    }
}

/// The output format: `to` if given, else the one OUT's extension names.
///
/// # Errors
/// [`Kind::Input`] when neither says.
pub(crate) fn output_format(output: &Path, to: Option<Format>) -> Result<Format> {
    to.or_else(|| Format::of_extension(output)).ok_or_else(|| {
        CliError::input(format!(
            "cannot tell the output format from {}; name it .tpack, .safetensors or .gguf, or pass --to",
            output.display()
        ))
    })
}

/// Which way a conversion goes through the hub.
enum Direction {
    /// A foreign format into tpack.
    Into(&'static dyn Import),
    /// tpack out to a foreign format.
    From(&'static dyn Export),
}

/// Refuses an output that is the input itself (the same path, a link to it, or a hard link: the same file on
/// the same device), which even `--force` must not replace, and one that is a directory.
pub(crate) fn check_output_path(input: &Path, output: &Path) -> Result<()> {
    if same_file(input, output) {
        return Err(CliError::new(
            Kind::Io,
            format!(
                "{} is the input file itself; convert writes a new file, so give the output another name",
                output.display()
            ),
        ));
    }
    if output.is_dir() {
        return Err(CliError::new(
            Kind::Io,
            format!(
                "{} is a directory; give the output file's name, for example {}",
                output.display(),
                output.join("model.tpack").display()
            ),
        ));
    }
    Ok(())
}

/// Whether `a` and `b` are one existing file, by device and inode where there are such, else by canonical
/// path.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (a.metadata(), b.metadata()) {
            return (x.dev(), x.ino()) == (y.dev(), y.ino());
        }
    }
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// Reads `bytes` (the content of `input`) with `import` and streams it into a container at `output`.
fn into_tpack(import: &dyn Import, input: &Path, bytes: &[u8], output: &Path, quiet: bool) -> Result<String> {
    let model = import.read(input, bytes)?;
    tpack::write(&model, output, quiet)?;
    let mut report = done(input, &[output.to_path_buf()], model.entries.len(), model.metadata.len());
    for note in &model.notes {
        report.push_str(&format!("note: {note}\n"));
    }
    Ok(report)
}

/// Verifies the container `bytes` (the content of `input`) completely, then writes it with `export`.
fn from_tpack(
    export: &dyn Export,
    input: &Path,
    bytes: &[u8],
    output: &Path,
    force: bool,
    quiet: bool,
    options: &ExportOptions,
) -> Result<String> {
    let container = tpack::open(input, bytes)?;
    check_intact(input, &container, quiet)?;
    let name = output.file_name().and_then(|n| n.to_str()).unwrap_or("output");
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let names = export.file_names(&container, name, options)?;
    if names == [name] {
        return export_file(export, input, &container, output);
    }
    let paths: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    for p in &paths {
        if p.is_dir() {
            return Err(CliError::new(
                Kind::Io,
                format!("{} is a directory; it is not replaced", p.display()),
            ));
        }
        check_overwrite(p, force)?;
    }
    // The exporter writes its files in a staging directory: an interrupt then deletes the directory with
    // everything in it, and the files are moved into place together.
    let staging = StagingDir::create(output)
        .map_err(|e| CliError::io("cannot create a directory next to", output, &e))?;
    let written = export.write(input, &container, staging.path(), name, options)?;
    if written.files != names {
        return Err(CliError::input(format!(
            "{}: the {} writer wrote other files than it planned ({:?}, not {names:?}); this is a bug",
            input.display(),
            export.format().name(),
            written.files
        )));
    }
    staging.commit_files(&names, &dir).map_err(|e| CliError::io("cannot save", output, &e))?;
    let mut report = done(input, &paths, written.entries, written.metadata);
    for note in &written.notes {
        report.push_str(&format!("note: {note}\n"));
    }
    Ok(report)
}

/// Verifies `container` (read from `input`) completely: the first corrupt entry is the error.
///
/// # Errors
/// [`Kind::Invalid`] naming the first corrupt entry.
pub(crate) fn check_intact(input: &Path, container: &Container<'_>, quiet: bool) -> Result<()> {
    let bar = crate::progress::bytes(container.entries().map(|e| e.byte_len()).sum(), "verifying", quiet);
    let problems = tpack::check(container, &mut |n| bar.inc(n));
    bar.finish_and_clear();
    match problems.first() {
        Some(p) => Err(CliError::invalid(format!(
            "{} is corrupt, so it is not converted: entry {} {:?}: {} (`tpack verify` lists every problem)",
            input.display(),
            p.entry,
            p.name,
            p.what
        ))),
        None => Ok(()),
    }
}

/// Writes the verified `container` (read from `input`) to the one file `output` with `export`, and reports.
///
/// # Errors
/// What `export` refuses, and I/O failures.
pub(crate) fn export_file(
    export: &dyn Export,
    input: &Path,
    container: &Container<'_>,
    output: &Path,
) -> Result<String> {
    // The exporter writes a file in a staging directory, with whatever temporary file it uses: an interrupt
    // then deletes the directory with everything in it.
    let staging = StagingDir::create(output)
        .map_err(|e| CliError::io("cannot create a directory next to", output, &e))?;
    let name = output.file_name().and_then(|n| n.to_str()).unwrap_or("output");
    let written = export.write(input, container, staging.path(), name, &ExportOptions::default())?;
    staging.commit_file(name, output).map_err(|e| CliError::io("cannot save", output, &e))?;
    let mut report = done(input, &[output.to_path_buf()], written.entries, written.metadata);
    for note in &written.notes {
        report.push_str(&format!("note: {note}\n"));
    }
    Ok(report)
}

/// The refusal of a pair of formats no reader and writer connect, listing the pairs that are.
pub(crate) fn unsupported(input: &Path, from: Format, to: Format) -> CliError {
    let mut pairs: Vec<String> = IMPORTS.iter().map(|i| format!("{} → tpack", i.format().name())).collect();
    pairs.extend(EXPORTS.iter().map(|e| format!("tpack → {}", e.format().name())));
    let supported = match pairs.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "none".to_owned(),
    };
    CliError::input(format!(
        "cannot convert {} from {} to {}: supported are {supported}",
        input.display(),
        from.name(),
        to.name()
    ))
}

/// The report of a finished conversion into the files `outputs`.
fn done(input: &Path, outputs: &[PathBuf], entries: usize, metadata: usize) -> String {
    let size = |p: &PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let files = match outputs {
        [one] => format!("{} ({})", one.display(), size_short(size(one))),
        many => {
            let total = many.iter().map(size).sum();
            let names: Vec<String> = many.iter().map(|p| p.display().to_string()).collect();
            // A long list of shards is shown by its ends; the names between follow from them.
            let shown = match names.as_slice() {
                [first, _, _, .., last] => format!("{first} … {last}"),
                all => all.join(", "),
            };
            format!("{} files ({}): {shown}", many.len(), size_short(total))
        }
    };
    format!("converted {} ({entries} tensors, {metadata} metadata values) to {files}\n", input.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The list of supported pairs comes from the registries; the sentence stays the one users have seen.
    #[test]
    fn unsupported_pairs_list_what_is_supported() {
        let e = unsupported(Path::new("m.gguf"), Format::Gguf, Format::Safetensors);
        assert_eq!(
            e.to_string(),
            "cannot convert m.gguf from GGUF to safetensors: supported are safetensors → tpack, GGUF → tpack, \
             tpack → safetensors and tpack → GGUF"
        );
        assert_eq!(e.kind(), crate::Kind::Input);
    }
}
