//! Inputs the fuzzers found, kept so that what they exposed stays fixed. Each file in tests/regressions/ is
//! named after the target and what it exposed.

use tpack::{Container, MetaValue};

/// The same accessor sweep as the fuzz targets' `touch_everything`.
fn touch_everything(c: &Container<'_>) {
    let _ = c.verify();
    for e in c.entries() {
        let _ = (e.name(), e.shape().elements(), e.range(), e.payload().len(), e.verify());
        assert_eq!(c.get(e.name()).map(|f| f.index()), Some(e.index()));
        if let Some(n) = e.nested() {
            touch_everything(&n);
        }
    }
    for (key, value) in c.metadata() {
        if let MetaValue::StringArray(items) = value {
            items.for_each(drop);
        }
        // Not `==`: an f64 NaN is unequal to itself, which the first version of the fuzz harness forgot.
        assert_eq!(c.meta(key).map(|v| v.value_type()), Some(value.value_type()));
    }
}

/// `parse`: a container whose metadata holds an f64 NaN; `mutate`: its one-byte input picked the golden vector
/// `metadata.tpack`, which holds one too. The library was right; the harness compared the looked-up value
/// with `==`. Kept so the sweep stays NaN-proof.
#[test]
fn nan_metadata_lookups() {
    for name in ["tests/regressions/parse-nan-metadata-lookup.bin", "spec/vectors/valid/metadata.tpack"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
        let bytes = std::fs::read(&path).unwrap();
        if let Ok(c) = Container::parse(&bytes) {
            touch_everything(&c);
        }
    }
}
