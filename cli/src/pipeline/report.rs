//! The one report of a conversion: what was read, what was written, and the notes of both.

use super::sink::Written;
use super::source::Source;
use crate::fsutil::size_short;

/// The report of the conversion of `source` into what `written` says: one sentence, then one `note:` line
/// per note.
#[must_use]
pub(crate) fn report(source: &Source, written: &Written) -> String {
    let size = |p: &std::path::PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let files = match written.files.as_slice() {
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
    let shards = match (source.shards(), source.format()) {
        (Some(n), Ok(format)) => format!("{n} {} shards, ", format.name()),
        _ => String::new(),
    };
    let mut report = format!(
        "converted {} ({shards}{} tensors, {} metadata values) to {files}\n",
        source.origin().display(),
        written.entries,
        written.metadata
    );
    for note in &written.notes {
        report.push_str(&format!("note: {note}\n"));
    }
    report
}
