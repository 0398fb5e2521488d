//! `tpack convert`: a foreign format to tpack or tpack to a foreign format, tensor bytes unchanged, through
//! the stages of [`crate::pipeline`].

use std::path::Path;

use crate::error::Result;
use crate::formats::Format;
use crate::pipeline::plan::OutputPlan;
use crate::pipeline::report::report;
use crate::pipeline::sink;
use crate::pipeline::source::Source;

/// Runs `tpack convert IN OUT`; `to` overrides the output format told by OUT's extension; `max_shard_size`
/// splits a safetensors or GGUF output into shards of at most that many bytes of tensor data. IN may be one
/// file or a shard set: a Hugging Face index (or its directory) or the first file of a split GGUF.
///
/// The stages run one way: the source is opened; what does not depend on its content is checked, in the
/// order `OutputPlan::check` gives (docs/cli.md lists it); the source is read (a foreign file or shard set
/// validated completely, a container's structure); the files to write are told and checked; a container's
/// payloads are verified as `tpack verify` verifies them; then the sink writes and the report is made.
/// Nothing is written before every check has passed.
///
/// # Errors
/// An input that is invalid or cannot be represented in the output format ([`crate::Kind::Input`], or
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
    let source = Source::open(input)?;
    let plan = OutputPlan::check(&source, output, to, force, max_shard_size)?;
    let read = source.read()?;
    let files = plan.files(&read, &source)?;
    source.verify(&read, quiet)?;
    let written = sink::write(&plan, &files, &source, read, quiet)?;
    Ok(report(&source, &written))
}
