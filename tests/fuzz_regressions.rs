//! Inputs the fuzzers found, kept so that what they exposed stays fixed. Each file in tests/regressions/ is
//! named after the target and what it exposed.

use tpack::{Container, MetaValue};

/// The same accessor sweep as the fuzz targets' `touch_everything`.
fn touch_everything(c: &Container<'_>) {
    let _ = c.verify();
    for e in c.entries() {
        let _ = (e.name(), e.shape().elements(), e.range(), e.payload().len(), e.verify());
        assert_eq!(c.get(e.name()).map(|f| f.position()), Some(e.position()));
        if let Some(n) = e.nested() {
            touch_everything(&n);
        }
    }
    for (key, value) in c.metadata() {
        if let MetaValue::StringArray(items) = value {
            items.for_each(drop);
        }
        // Not `==`: an f64 NaN is unequal to itself, which the first version of the fuzz harness forgot.
        assert_eq!(c.metadata().get(key).map(|v| v.value_type()), Some(value.value_type()));
    }
}

/// The inputs of the `parse` target kept here; each must pass full validation, so that the sweep runs on it.
const PARSE_INPUTS: &[&str] =
    &["tests/regressions/parse-nan-metadata-lookup.bin", "spec/vectors/valid/metadata.tpack"];

fn read(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `parse`: a container whose metadata holds an f64 NaN; `mutate`: its one-byte input picked the golden vector
/// `metadata.tpack`, which holds one too. The library was right; the harness compared the looked-up value
/// with `==`. Kept so the sweep stays NaN-proof: each input must be valid and hold a NaN, or the sweep would
/// prove nothing.
#[test]
fn nan_metadata_lookups() {
    for name in PARSE_INPUTS {
        let bytes = read(name);
        let c = Container::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        c.verify().unwrap_or_else(|e| panic!("{name}: {e}"));
        let nans = c.metadata().iter().filter(|(_, v)| matches!(v, MetaValue::F64(x) if x.is_nan())).count();
        assert!(nans > 0, "{name}: no f64 NaN in its metadata");
        touch_everything(&c);
    }
}

/// A file added to tests/regressions/ without a test that reads it would be kept for nothing.
#[test]
fn every_regression_file_is_read_by_a_test() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut files = 0;
    for file in std::fs::read_dir(&dir).unwrap() {
        let name = format!("tests/regressions/{}", file.unwrap().file_name().to_str().unwrap());
        assert!(PARSE_INPUTS.contains(&name.as_str()), "{name} is read by no test");
        files += 1;
    }
    assert!(files > 0, "{} holds no regression input", dir.display());
}
