//! Metadata ↔ JSON, the one place the tool spells metadata values as JSON and reads them back: `render`
//! (metadata → JSON: `inspect --json`, `unpack`'s manifest, safetensors `__metadata__` strings) and `parse`
//! (JSON → metadata: a pack manifest's metadata records).

pub(crate) mod parse;
pub(crate) mod render;
