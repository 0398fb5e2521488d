//! Metadata ↔ JSON, the one place the tool spells metadata values as JSON and reads them back: `render`
//! (metadata → JSON: `inspect --json`, `unpack`'s manifest, safetensors `__metadata__` strings) and, with
//! the manifest, `parse` (JSON → metadata).

pub(crate) mod parse;
