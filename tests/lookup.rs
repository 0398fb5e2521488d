//! Lookups by name: `Container::get` (binary search that skips known common prefixes) and `NameIndex::get`
//! (hash) agree with a plain set of the names, for sets built to share long prefixes, differ in one byte,
//! be prefixes of each other, and contain multi-byte characters.

use std::collections::BTreeSet;

use proptest::prelude::*;
use tpack::write::{Builder, NewEntry};
use tpack::{Container, Dtype, NameIndex};

fn cases() -> u32 {
    if cfg!(miri) {
        4
    } else {
        256
    }
}

/// Names over a tiny alphabet, so that they collide, nest and share prefixes; some long (past 8-byte words).
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ab.é]{1,6}",
        "model\\.layers\\.[0-9]{1,3}\\.(attn|mlp)\\.[qkv]?(_proj)?\\.weight",
        "[ab]{9,24}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn get_agrees_with_a_set(
        names in prop::collection::btree_set(name(), 0..if cfg!(miri) { 16 } else { 120 }),
        probes in prop::collection::vec(name(), 0..if cfg!(miri) { 4 } else { 40 }),
    ) {
        let mut b = Builder::new();
        for (i, n) in names.iter().enumerate() {
            b.push(NewEntry::new(n, Dtype::U8, &[1], &[i as u8])).unwrap();
        }
        let bytes = b.finish().unwrap();
        let c = Container::parse(&bytes).unwrap();
        let index = NameIndex::new(&c);
        for (i, n) in names.iter().enumerate() {
            prop_assert_eq!(c.get(n).map(|e| e.position()), Some(i));
            prop_assert_eq!(index.get(n).map(|e| e.position()), Some(i));
        }
        let set: BTreeSet<&str> = names.iter().map(String::as_str).collect();
        let mut extra: Vec<String> = probes;
        for n in &names {
            extra.push(format!("{n}a"));
            extra.push(format!("{n}\u{0}"));
            if let Some((cut, _)) = n.char_indices().last() {
                extra.push(n[..cut].to_owned());
            }
        }
        extra.push(String::new());
        for p in &extra {
            let want = set.contains(p.as_str());
            prop_assert_eq!(c.get(p).is_some(), want, "{:?}", p);
            prop_assert_eq!(index.get(p).is_some(), want, "{:?}", p);
            if let Some(e) = c.get(p) {
                prop_assert_eq!(e.name(), p.as_str());
            }
        }
    }
}
