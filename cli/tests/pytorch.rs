//! PyTorch checkpoints written by torch itself (`fixtures/pytorch/make_pytorch.py`): every tensor converts
//! equal to what `torch.load` / `torch.jit.load` read, `inspect` reads each file directly, and every hostile
//! file is refused with its own message, its payload never run.

mod common;

use std::path::PathBuf;

use common::*;
use serde_json::{json, Value};
use tpack::{Container, MetaValue};

/// What the payloads of the hostile fixtures would create.
const CANARY: &str = "/tmp/tpack-pytorch-canary";

fn pt(name: &str) -> PathBuf {
    fixture("pytorch").join(name)
}

fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(pt("expected.json")).unwrap()).unwrap()
}

/// The files torch wrote, one of each kind.
const CHECKPOINTS: [&str; 7] = [
    "zip.pt",
    "legacy.pt",
    "protocol4.pt",
    "pytorch_model.bin",
    "one_tensor.pt",
    "script.pt",
    "bigendian.pt",
];

/// A tpack metadata value as the JSON torch's plain value was written as.
fn as_json(v: MetaValue<'_>) -> Value {
    match v {
        MetaValue::I64(i) => json!(i),
        MetaValue::F64(f) => json!(f),
        MetaValue::Bool(b) => json!(b),
        MetaValue::String(s) => json!(s),
        other => panic!("unexpected metadata {other:?}"),
    }
}

/// Converts `input` and checks the container against `want` (an entry of `expected.json` or
/// `expected_zoo.json`): every tensor and every plain value torch loaded.
fn converts_to(input: &std::path::Path, want: &Value) {
    let name = input.display();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.tpack");
    assert_ok(&run!("convert", input, out));
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    c.verify().unwrap();
    let tensors = want["tensors"].as_object().unwrap();
    assert_eq!(c.len(), tensors.len(), "{name}: {:?}", c.entries().map(|e| e.name()).collect::<Vec<_>>());
    for (tensor, t) in tensors {
        let e = c.get(tensor).unwrap_or_else(|| panic!("{name}: {tensor} missing"));
        assert_eq!(e.dtype().name().unwrap(), t["dtype"].as_str().unwrap(), "{name}: {tensor}");
        assert_eq!(json!(e.shape().dims()), t["shape"], "{name}: {tensor}");
        assert_eq!(sha256(e.payload()), t["sha256"].as_str().unwrap(), "{name}: {tensor}");
    }
    let values = want["values"].as_object().unwrap();
    assert_eq!(c.metadata().iter().count(), values.len(), "{name}");
    for (key, value) in values {
        let got = c.metadata().get(key).unwrap_or_else(|| panic!("{name}: metadata {key} missing"));
        assert_eq!(&as_json(got), value, "{name}: {key}");
    }
}

#[test]
fn every_checkpoint_converts_equal_to_what_torch_loads() {
    let expected = expected();
    for name in CHECKPOINTS {
        converts_to(&pt(name), &expected[name]);
    }
}

/// What training scripts and hubs save (`make_zoo.py`): an `argparse.Namespace` and NumPy scalars beside the
/// state dict (both pickle protocols torch writes), and a Hugging Face shard set of `.bin` files.
#[test]
fn model_zoo_checkpoints_convert_equal_to_what_torch_loads() {
    let zoo: Value = serde_json::from_slice(&std::fs::read(pt("expected_zoo.json")).unwrap()).unwrap();
    for name in ["training_state.pt", "training_state_p2.pt", "sharded_bin"] {
        converts_to(&pt(name), &zoo[name]);
    }
    // The Namespace's attributes and the NumPy scalars are what make these files worth having.
    let values = zoo["training_state.pt"]["values"].as_object().unwrap();
    for key in [
        "args.lr.0",
        "args.share_all_embeddings",
        "extra_state.best_loss",
        "extra_state.half",
        "extra_state.byte",
    ] {
        assert!(values.contains_key(key), "{key}");
    }
    assert!(zoo["sharded_bin"]["shards"].as_u64().unwrap() >= 2);
    // The index names the set, in inspect as in convert.
    let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", pt("sharded_bin"), "--json"))).unwrap();
    assert_eq!(
        doc["entries"].as_array().unwrap().len(),
        zoo["sharded_bin"]["tensors"].as_object().unwrap().len()
    );
}

#[test]
fn a_pytorch_index_whose_shard_is_not_pytorch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(pt("sharded_bin")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    std::fs::copy(fixture("model.safetensors"), dir.path().join("pytorch_model-00002-of-00002.bin")).unwrap();
    let out = dir.path().join("out.tpack");
    assert_fails(
        &run!("convert", dir.path(), &out),
        3,
        &["pytorch_model-00002-of-00002.bin is not a PyTorch file (it is a safetensors file)"],
    );
}

#[test]
fn tied_weights_and_shared_storages_are_each_written_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.tpack");
    let o = run!("convert", pt("zip.pt"), out);
    assert_ok(&o);
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(said.contains("share a storage with another"), "{said}");
    assert!(said.contains("each is written with its own copy"), "{said}");
    // bytes and an int beyond 64 bits are left out, by name.
    assert!(said.contains("\"big\"") && said.contains("\"blob\""), "{said}");
    let bytes = std::fs::read(&out).unwrap();
    let c = Container::parse(&bytes).unwrap();
    assert_eq!(c.get("embed.weight").unwrap().payload(), c.get("lm_head.weight").unwrap().payload());
}

#[test]
fn inspect_reads_each_checkpoint_directly() {
    let expected = expected();
    for name in CHECKPOINTS {
        let doc: Value = serde_json::from_str(&assert_ok(&run!("inspect", pt(name), "--json"))).unwrap();
        assert_eq!(doc["format"], "PyTorch", "{name}");
        let names: Vec<&str> =
            doc["entries"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
        let mut want: Vec<&str> =
            expected[name]["tensors"].as_object().unwrap().keys().map(String::as_str).collect();
        let mut got = names.clone();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "{name}");
    }
}

/// Each hostile fixture with the words its refusal must contain.
const HOSTILE: &[(&str, &[&str])] = &[
    ("hostile_global_os_system.pt", &["pickle global os.system is not allowed", "GLOBAL at byte 2"]),
    ("hostile_stack_global_eval.pt", &["pickle global builtins.eval is not allowed", "STACK_GLOBAL"]),
    ("hostile_inst_popen.pt", &["pickle global subprocess.Popen is not allowed", "INST"]),
    ("hostile_obj_system.pt", &["pickle global posix.system is not allowed", "GLOBAL"]),
    ("hostile_build_setstate.pt", &["pickle global os.system is not allowed"]),
    ("hostile_build_list.pt", &["BUILD on a list is refused"]),
    (
        "hostile_reduce_ordereddict_args.pt",
        &["collections.OrderedDict is called with arguments PyTorch does not write"],
    ),
    ("hostile_memo_bomb.pt", &["the values visited while naming tensors exceeds the limit of 4194304"]),
    ("hostile_deep_nesting.pt", &["the nesting depth of containers exceeds the limit of 100"]),
    ("hostile_self_append.pt", &["a container is put inside itself"]),
    ("hostile_huge_long4.pt", &["a length of 4294967295 bytes, but only 3 remain"]),
    ("hostile_huge_binunicode.pt", &["a length of 4294967295 bytes, but only 4 remain"]),
    ("hostile_huge_binbytes8.pt", &["a length of 9223372036854775807 bytes, but only 4 remain"]),
    (
        "hostile_short_storage.pt",
        &["needs 6 elements of storage \"0\", which has only 4", "storage shorter than a view"],
    ),
    (
        "hostile_short_record.pt",
        &["storage \"0\" is 16 bytes, but its persistent id says 8 elements of float32"],
    ),
    ("hostile_overflow_view.pt", &["needs more than 2^64 elements", "storage shorter than a view"]),
    ("hostile_dotdot.pt", &["entry \"archive/../evil\" has a `..` component in its name"]),
    ("hostile_absolute.pt", &["entry \"/etc/evil\" has an absolute path in its name"]),
    ("hostile_duplicate.pt", &["entry \"archive/data/0\" appears twice"]),
    (
        "hostile_zip_bomb.pt",
        &["entry \"archive/data/0\" is compressed (method 8", "declared to inflate to 16777216"],
    ),
    ("hostile_huge_declared.pt", &["declares 4294967280 bytes, but the archive is only"]),
    ("hostile_legacy_count.pt", &["holds 1152921504606846976 elements, but its tensors' persistent id says"]),
];

#[test]
fn every_hostile_checkpoint_is_refused_by_name_and_runs_nothing() {
    assert!(!std::path::Path::new(CANARY).exists(), "{CANARY} exists before the test");
    for (name, words) in HOSTILE {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.tpack");
        let m = assert_fails(&run!("convert", pt(name), out), 3, words);
        assert!(m.contains(name), "{m}");
        assert!(!out.exists(), "{name}: an output was written");
        assert_fails(&run!("inspect", pt(name)), 3, words);
    }
    assert!(!std::path::Path::new(CANARY).exists(), "a payload ran: {CANARY} exists");
}

#[test]
fn every_hostile_fixture_is_tested() {
    let mut on_disk: Vec<String> = std::fs::read_dir(fixture("pytorch"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("hostile_"))
        .collect();
    on_disk.sort_unstable();
    let mut tested: Vec<String> = HOSTILE.iter().map(|(n, _)| (*n).to_owned()).collect();
    tested.sort_unstable();
    assert_eq!(on_disk, tested);
}
