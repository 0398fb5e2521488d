//! The host reference: runs the model in `tiny-mlp.tpack` on its held-out inputs and checks the results against
//! `src/expected.rs`, the values the firmware must reproduce bit for bit. `TPACK_BLESS=1` rewrites that file.
//! Also checks the container is what `tpack pack cli/demo/tiny-mlp/manifest.json` builds today.

use std::fmt::Write as _;
use std::path::Path;

use tiny_mlp::{expected, test_inputs, Model};
use tpack::{Container, MetaValue};

fn container_bytes() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tiny-mlp.tpack")).unwrap()
}

#[test]
fn host_results_are_the_expected_ones() {
    let bytes = container_bytes();
    let c = Container::parse(&bytes).unwrap();
    c.verify().unwrap();
    let model = Model::from_container(&c).unwrap();
    let [n_in, _, n_out] = model.widths;
    let inputs = test_inputs(&c, n_in).unwrap();
    let mut classes = Vec::new();
    let mut logit_bits = Vec::new();
    for x in inputs.chunks(n_in) {
        let x: Vec<f32> = x.iter().map(|v| v.get()).collect();
        let mut logits = vec![0f32; n_out];
        classes.push(model.infer(&x, &mut logits));
        logit_bits.push(logits.iter().map(|l| l.to_bits()).collect::<Vec<_>>());
    }
    // The model is real: it gets the held-out labels right.
    let Some(MetaValue::U64Array(labels)) = c.metadata().get("test.labels") else { panic!("test.labels") };
    let labels: Vec<usize> = labels.iter().map(|l| l.get() as usize).collect();
    assert_eq!(classes, labels);

    if std::env::var("TPACK_BLESS").is_ok_and(|v| v == "1") {
        let mut src = String::from(
            "//! What the host computes from `tiny-mlp.tpack` (written by `TPACK_BLESS=1 cargo test -p tiny-mlp`);\n\
             //! the firmware must reproduce it bit for bit.\n\n",
        );
        let _ = writeln!(src, "/// Predicted class of each held-out input.");
        let _ = writeln!(src, "pub const CLASSES: [usize; {}] = {:?};", classes.len(), classes);
        let _ = writeln!(src, "/// The logits of each held-out input, as f32 bit patterns.");
        let _ = writeln!(src, "pub const LOGIT_BITS: [[u32; {n_out}]; {}] = [", logit_bits.len());
        for row in &logit_bits {
            let items: Vec<String> = row.iter().map(|b| format!("{b:#010x}")).collect();
            let _ = writeln!(src, "    [{}],", items.join(", "));
        }
        src.push_str("];\n");
        std::fs::write(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/expected.rs"), src).unwrap();
        return;
    }
    assert_eq!(classes, expected::CLASSES, "src/expected.rs is stale: rerun with TPACK_BLESS=1");
    let want: Vec<Vec<u32>> = expected::LOGIT_BITS.iter().map(|r| r.to_vec()).collect();
    assert_eq!(logit_bits, want, "src/expected.rs is stale: rerun with TPACK_BLESS=1");
}
