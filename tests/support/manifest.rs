//! The golden vectors' manifest (`spec/vectors/manifest.json`), read one vector at a time.
//!
//! Parsing the whole manifest (over 200 KiB) into a `serde_json::Value` takes about 90 s of CPU under Miri, once
//! in every test binary that reads it, while the tests there use a sample of the vectors. So the text is cut into
//! its vectors first and a test parses only those it uses. The cut relies on the manifest's layout, serde_json's
//! pretty printing of what the case generator builds, which the native run pins (`vectors.rs` compares the file
//! with the generator's text): each vector is the object from a line `    {` to the next line `    }`, and its
//! own keys are indented by six spaces. Shared with the C API's tests (`#[path]`).

#![allow(dead_code)] // each test binary uses its part

use serde_json::Value;

/// One vector of the manifest, not yet parsed.
pub struct ManifestVector<'a> {
    /// The file, relative to `spec/vectors` (`valid/…` or `invalid/…`).
    pub file: &'a str,
    text: &'a str,
}

impl ManifestVector<'_> {
    /// Whether the file is a valid container.
    pub fn is_valid(&self) -> bool {
        self.file.starts_with("valid/")
    }

    /// Whether the vector lists signature verifications.
    pub fn has_verifications(&self) -> bool {
        self.text.contains("\n      \"verifications\": [")
    }

    /// The vector's JSON object.
    pub fn parse(&self) -> Value {
        serde_json::from_str(self.text).unwrap_or_else(|e| panic!("{}: {e}", self.file))
    }
}

/// The vectors of `manifest` (the file's text), in its order.
pub fn vectors(manifest: &str) -> Vec<ManifestVector<'_>> {
    const OPEN: &str = "\n  \"vectors\": [\n";
    const FILE: &str = "      \"file\": \"";
    let mut rest = &manifest[manifest.find(OPEN).expect("a vectors list") + OPEN.len()..];
    let mut out = Vec::new();
    while rest.starts_with("    {\n") {
        let end = line_starting(rest, "    }").expect("a vector's end") + "    }".len();
        let text = &rest[..end];
        let file = &text[line_starting(text, FILE).expect("a file key") + FILE.len()..];
        out.push(ManifestVector { file: &file[..file.find('"').expect("a file name")], text });
        rest = rest[end..].strip_prefix(",\n").unwrap_or("");
    }
    assert!(out.len() > 60, "the manifest's layout changed: {} vectors found", out.len());
    out
}

/// Where the first line of `text` after its first one that starts with `prefix` starts. Lines are found with
/// `find('\n')`, which is `memchr` (a word at a time): a substring search over the whole manifest took 47 s
/// under Miri, this a fraction of it.
fn line_starting(text: &str, prefix: &str) -> Option<usize> {
    let mut at = 0;
    while let Some(newline) = text[at..].find('\n') {
        at += newline + 1;
        if text[at..].starts_with(prefix) {
            return Some(at);
        }
    }
    None
}

/// The manifest's text, from `spec/vectors` under `root` (the repository).
pub fn read(root: &std::path::Path) -> String {
    std::fs::read_to_string(root.join("spec/vectors/manifest.json")).expect("spec/vectors/manifest.json")
}
