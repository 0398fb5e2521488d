//! `tpack convert` as a pipeline that runs one way: a [`source::Source`] (one file or a shard set, in any format the
//! tool reads) → the checks of the [`plan::OutputPlan`] → a sink ([`sink::write`]: one file or shards, in any format
//! the tool writes) → one [`report::report`]. No stage calls back into an earlier one or into the command.
//!
//! tpack is the hub (module `formats`): a foreign source is read into a model that the tpack sink streams
//! into a container; a tpack source is verified and written by a foreign format's writer. A shard set is a
//! source like any other (module `shards` reads and merges it); sharded output is each writer's own
//! business (`--max-shard-size`).

pub(crate) mod plan;
pub(crate) mod report;
pub(crate) mod sink;
pub(crate) mod source;
