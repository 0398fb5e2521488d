//! Arbitrary bytes through the PyTorch reader: the pickle machine alone, the zip reader alone, and the
//! whole checkpoint reader (zip or legacy). Never a panic, an unbounded allocation or a hang; and what is
//! accepted keeps its promises: every zip entry is a view inside the input; every tensor's bytes are exactly
//! its element count times its element size, and, when borrowed, a view inside the input.
#![no_main]

use std::borrow::Cow;
use std::hint::black_box;

use libfuzzer_sys::fuzz_target;
use tpack_pytorch::{pickle, zip};

fn inside(input: &[u8], part: &[u8]) -> bool {
    let (outer, inner) = (input.as_ptr_range(), part.as_ptr_range());
    part.is_empty() || (outer.start <= inner.start && inner.end <= outer.end)
}

fuzz_target!(|data: &[u8]| {
    match pickle::unpickle("fuzz", data) {
        Ok(u) => {
            assert!(u.consumed <= data.len());
            assert!(u.value.depth() <= pickle::MAX_DEPTH);
            let mut leaves = tpack_pytorch::flatten::Leaves::default();
            if tpack_pytorch::flatten::flatten(&u.value, "", &mut leaves).is_ok() {
                for (_, t) in &leaves.tensors {
                    let end = tpack_pytorch::view::extent(t).expect("a built view has an extent");
                    assert!(end <= t.storage.numel, "a view past its storage was built");
                }
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    if let Ok(entries) = zip::entries(data) {
        for e in &entries {
            assert!(inside(data, e.data), "{}: data outside the input", e.name);
            assert!(!e.name.starts_with('/') && !e.name.split('/').any(|c| c == ".."));
            black_box(e.content().map(<[u8]>::len).ok());
        }
    }
    if let Ok(c) = tpack_pytorch::read(data) {
        for t in &c.tensors {
            let numel = t.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).expect("element count");
            assert_eq!(t.data.len() as u64, numel * t.element.size(), "{}", t.name);
            if let Cow::Borrowed(b) = &t.data {
                assert!(inside(data, b), "{}: borrowed bytes outside the input", t.name);
            }
        }
        black_box((c.values.len(), c.skipped.len(), c.kind.describe()));
    }
    black_box(tpack_pytorch::sniff(data));
});
