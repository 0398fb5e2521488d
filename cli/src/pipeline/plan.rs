//! The output plan of a conversion: which format OUT is written in, where, and with which options, checked
//! against the source before any conversion work.

use std::path::{Path, PathBuf};

use super::source::{Input, Source};
use crate::error::{missing_directory, CliError, Kind, Result};
use crate::formats::{exporter, importer, ExportOptions, Format, EXPORTS, IMPORTS};
use crate::fsutil::check_overwrite;

/// What `tpack convert` writes, checked.
#[derive(Debug)]
pub(crate) struct OutputPlan {
    /// OUT as given.
    pub(crate) path: PathBuf,
    /// The directory OUT is in (`.` for a bare name).
    pub(crate) dir: PathBuf,
    /// OUT's file name.
    pub(crate) name: String,
    /// The format OUT is written in.
    pub(crate) format: Format,
    /// Whether existing files are replaced.
    pub(crate) force: bool,
    /// How a foreign format is written (`--max-shard-size`).
    pub(crate) options: ExportOptions,
}

impl OutputPlan {
    /// Checks what does not depend on the source's content, each refusal with its own message, in this order:
    /// OUT is one of the source's files; OUT is a directory; OUT's format (`to`, else its extension) cannot be
    /// told; the source is in no format the tool reads; no reader and writer connect the pair of formats;
    /// `--max-shard-size` does not apply to OUT's format; OUT's directory does not exist; OUT exists and
    /// `force` is off (OUT is then checked again with the other files, once they are known: see
    /// [`OutputPlan::check_files`]).
    ///
    /// # Errors
    /// As above: [`Kind::Io`] for the paths, [`Kind::Input`] for the formats.
    pub(crate) fn check(
        source: &Source,
        output: &Path,
        to: Option<Format>,
        force: bool,
        max_shard_size: Option<u64>,
    ) -> Result<OutputPlan> {
        for file in source.files() {
            refuse_same_file(file, output)?;
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
        let format = output_format(output, to)?;
        let from = source.format()?;
        // tpack is the hub: a foreign format goes into tpack with its reader, or out of tpack with its writer.
        let connected = match (from, format) {
            (_, Format::Tpack) => importer(from).is_some(),
            (Format::Tpack, _) => exporter(format).is_some(),
            _ => false,
        };
        if !connected {
            return Err(unsupported(source.origin(), from, format));
        }
        if max_shard_size.is_some() && !matches!(format, Format::Safetensors | Format::Gguf) {
            return Err(CliError::input(format!(
                "--max-shard-size applies to safetensors and GGUF output; {} output is written as one file",
                format.name()
            )));
        }
        if let Some(dir) = missing_directory(output) {
            return Err(CliError::no_directory(output, dir));
        }
        // Sharded output: which files are written is told once the input is read. Where a file OUT would be
        // read instead of the shards, an existing OUT is refused without `--force` all the same.
        if max_shard_size.is_none() || exporter(format).is_some_and(|e| e.shadows_shards()) {
            check_overwrite(output, force)?;
        }
        let dir = match output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = output.file_name().and_then(|n| n.to_str()).unwrap_or("output").to_owned();
        Ok(OutputPlan {
            path: output.to_path_buf(),
            dir,
            name,
            format,
            force,
            options: ExportOptions { max_shard_size },
        })
    }

    /// The files the output is written as, told by OUT's writer from what was read (`--max-shard-size` makes
    /// shards of a model that needs more than one), each checked by [`OutputPlan::check_files`]. A container
    /// is written as the one file OUT.
    ///
    /// # Errors
    /// What the writer refuses about the options ([`Kind::Input`]); a file refused ([`Kind::Io`]).
    pub(crate) fn files(&self, input: &Input<'_>, source: &Source) -> Result<Vec<String>> {
        let names = match (input, exporter(self.format)) {
            (Input::Container(container), Some(export)) => {
                export.file_names(container, &self.name, &self.options)?
            }
            _ => vec![self.name.clone()],
        };
        self.check_files(&names, source)?;
        Ok(names)
    }

    /// Whether the files `names` are OUT alone.
    #[must_use]
    pub(crate) fn is_one_file(&self, names: &[String]) -> bool {
        names == [self.name.as_str()]
    }

    /// Checks the files `names` that a writer plans in OUT's directory as OUT was checked: none is one of the
    /// source's files or a directory, and none exists unless `force` is on. OUT itself is checked again:
    /// with `--max-shard-size`, [`OutputPlan::check`] left it to this check, and a model that fits in one
    /// shard is written as OUT.
    ///
    /// # Errors
    /// [`Kind::Io`] naming the first file refused.
    fn check_files(&self, names: &[String], source: &Source) -> Result<()> {
        for path in &self.paths(names) {
            for file in source.files() {
                refuse_same_file(file, path)?;
            }
            if path.is_dir() {
                return Err(CliError::new(
                    Kind::Io,
                    format!("{} is a directory; it is not replaced", path.display()),
                ));
            }
            check_overwrite(path, self.force)?;
        }
        Ok(())
    }

    /// The paths of the files `names` in OUT's directory.
    #[must_use]
    pub(crate) fn paths(&self, names: &[String]) -> Vec<PathBuf> {
        if self.is_one_file(names) {
            return vec![self.path.clone()];
        }
        names.iter().map(|n| self.dir.join(n)).collect()
    }
}

/// The output format: `to` if given, else the one OUT's extension names.
///
/// # Errors
/// [`Kind::Input`] when neither says.
fn output_format(output: &Path, to: Option<Format>) -> Result<Format> {
    to.or_else(|| Format::of_extension(output)).ok_or_else(|| {
        CliError::input(format!(
            "cannot tell the output format from {}; name it .tpack, .safetensors or .gguf, or pass --to",
            output.display()
        ))
    })
}

/// Refuses an output that is the input itself (the same path, a link to it, or a hard link: the same file on
/// the same device), which even `--force` must not replace.
fn refuse_same_file(input: &Path, output: &Path) -> Result<()> {
    if same_file(input, output) {
        return Err(CliError::new(
            Kind::Io,
            format!(
                "{} is the input file itself; convert writes a new file, so give the output another name",
                output.display()
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

/// The refusal of a pair of formats no reader and writer connect, listing the pairs that are.
fn unsupported(input: &Path, from: Format, to: Format) -> CliError {
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
             PyTorch → tpack, NumPy .npy → tpack, NumPy .npz → tpack, ONNX → tpack, TensorFlow checkpoint → tpack, \
             tpack → safetensors, \
             tpack → GGUF, tpack → NumPy .npz and tpack → ONNX"
        );
        assert_eq!(e.kind(), crate::Kind::Input);
    }
}
