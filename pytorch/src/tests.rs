//! One test per rule, from hand-written bytes: the pickle machine's opcodes and bounds, the zip reader's
//! checks, and view arithmetic.

use std::rc::Rc;

use crate::pickle::{unpickle, StorageRef, TensorView, Value, MAX_DEPTH, MAX_MARKS, MAX_MEMO, MAX_STACK};
use crate::{view, zip, Element, Error};

fn uni(s: &str) -> Vec<u8> {
    let mut out = vec![b'X'];
    out.extend(u32::try_from(s.len()).unwrap().to_le_bytes());
    out.extend(s.as_bytes());
    out
}

fn run(body: &[u8]) -> Result<Value<'_>, Error> {
    unpickle("test.pkl", body).map(|u| u.value)
}

fn message(body: &[u8]) -> String {
    run(body).unwrap_err().to_string()
}

/// `_rebuild_tensor_v2` over storage "0" of `numel` f32, with the view given.
fn tensor_pickle(numel: u8, offset: u8, size: &[u8], stride: &[u8]) -> Vec<u8> {
    let mut p = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((".to_vec();
    p.extend(uni("storage"));
    p.extend(b"ctorch\nFloatStorage\n");
    p.extend(uni("0"));
    p.extend(uni("cpu"));
    p.extend([b'K', numel, b't', b'Q', b'K', offset, b'(']);
    for s in size {
        p.extend([b'K', *s]);
    }
    p.extend(b"t(");
    for s in stride {
        p.extend([b'K', *s]);
    }
    p.extend(b"t\x89}tR.");
    p
}

#[test]
fn a_tensor_is_a_checked_view_of_its_storage() {
    let p = tensor_pickle(6, 1, &[2, 2], &[1, 2]);
    let Value::Tensor(t) = run(&p).unwrap() else { panic!("not a tensor") };
    assert_eq!((t.offset, t.size.clone(), t.stride.clone()), (1, vec![2, 2], vec![1, 2]));
    assert_eq!(*t.storage, StorageRef { key: "0", element: Element::F32, numel: 6 });
    // Offset 1 + (2-1)*1 + (2-1)*2 = 4 is the last element: 5 of 6 are needed; with 4 it is too short.
    let m = message(&tensor_pickle(4, 1, &[2, 2], &[1, 2]));
    assert!(m.contains("needs 5 elements of storage \"0\", which has only 4"), "{m}");
}

#[test]
fn globals_off_the_list_are_refused_by_name_before_anything_else() {
    for (body, global, opcode, at) in [
        (b"\x80\x02cos\nsystem\n.".to_vec(), "os.system", "GLOBAL", 2),
        (
            [&b"\x80\x04"[..], &uni("builtins"), &uni("eval"), b"\x93."].concat(),
            "builtins.eval",
            "STACK_GLOBAL",
            24,
        ),
        (b"\x80\x02(isubprocess\nPopen\n.".to_vec(), "subprocess.Popen", "INST", 3),
        (b"\x80\x02ctorch\nload\n.".to_vec(), "torch.load", "GLOBAL", 2),
        (b"\x80\x02c__torchx\nA\n.".to_vec(), "__torchx.A", "GLOBAL", 2),
        (
            b"\x80\x02ctorch._utils\n_rebuild_qtensor\n.".to_vec(),
            "torch._utils._rebuild_qtensor",
            "GLOBAL",
            2,
        ),
    ] {
        match run(&body).unwrap_err() {
            Error::ForbiddenGlobal { global: g, opcode: o, offset, .. } => {
                assert_eq!((g.as_str(), o, offset), (global, opcode, at), "{global}");
            }
            other => panic!("{global}: {other}"),
        }
    }
    // A control character in the name is escaped in the message.
    let m = message(b"\x80\x02cos\x1b[2J\nsystem\n.");
    assert!(m.contains("os\\u{1b}[2J.system") && !m.contains('\x1b'), "{m}");
}

#[test]
fn allowed_globals_are_only_interpreted_never_called_with_other_arguments() {
    assert!(message(b"\x80\x02ccollections\nOrderedDict\n]\x85R.").contains("called with arguments"));
    assert!(message(b"\x80\x02ctorch\nFloatStorage\n)R.").contains("called with arguments"));
    let codecs = [&b"\x80\x02c_codecs\nencode\n"[..], &uni("\u{ff}"), &uni("utf-8"), b"\x86R."].concat();
    assert!(message(&codecs).contains("other than (str, \"latin1\")"));
    let codecs = [&b"\x80\x02c_codecs\nencode\n"[..], &uni("ab"), &uni("latin1"), b"\x86R."].concat();
    assert!(matches!(run(&codecs).unwrap(), Value::Latin1("ab")));
    assert!(message(b"\x80\x02K\x01)R.").contains("REDUCE calls a int, which is not callable"));
}

#[test]
fn build_sets_only_ordered_dict_attributes_and_script_object_state() {
    assert!(message(b"\x80\x02]}b.").contains("BUILD on a list is refused"));
    let od = b"\x80\x02ccollections\nOrderedDict\n)R}b.";
    assert!(matches!(run(od).unwrap(), Value::Dict { ordered: true, .. }));
    let twice = b"\x80\x02c__torch__\nNet\n)\x81}b}b.";
    assert!(message(twice).contains("state of a __torch__.Net twice"));
    // An object put in a list before its state is set: the list's depth would not count the state, and a
    // chain of these would nest without bound (regression: found in review, not by a crash).
    let late = b"\x80\x02c__torch__\nNet\n)\x81q\x00\x85h\x00}b.";
    assert!(message(late).contains("state of a __torch__.Net after it was put in a container"));
    let Value::Object(o) = run(b"\x80\x02c__torch__.a.b\nNet\n)\x81}b.").unwrap() else { panic!("object") };
    assert_eq!(o.class, "__torch__.a.b.Net");
}

/// `numpy.dtype(code, False, True)` with the byte order `order` given by BUILD (none when empty), then
/// `numpy._core.multiarray.scalar(dtype, data)` with `data` as BINBYTES.
fn numpy_scalar(code: &str, order: &str, data: &[u8]) -> Vec<u8> {
    let mut p = b"\x80\x02cnumpy._core.multiarray\nscalar\ncnumpy\ndtype\n".to_vec();
    p.extend(uni(code));
    p.extend(b"\x89\x88\x87R");
    if !order.is_empty() {
        p.extend(b"(K\x03");
        p.extend(uni(order));
        p.extend(b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb");
    }
    p.push(b'B');
    p.extend(u32::try_from(data.len()).unwrap().to_le_bytes());
    p.extend(data);
    p.extend(b"\x86R.");
    p
}

#[test]
fn numpy_scalars_are_read_as_the_numbers_they_hold() {
    // The value as Debug text: it borrows the pickle, which the closure owns.
    let read = |code: &str, order: &str, data: &[u8]| {
        run(&numpy_scalar(code, order, data)).map(|v| format!("{v:?}")).map_err(|e| e.to_string())
    };
    assert_eq!(read("f8", "<", &3.25f64.to_le_bytes()).unwrap(), format!("Float({:?})", 3.25));
    assert_eq!(read("f8", ">", &3.25f64.to_be_bytes()).unwrap(), format!("Float({:?})", 3.25));
    assert_eq!(read("f4", "<", &128f32.to_le_bytes()).unwrap(), format!("Float({:?})", 128.0));
    // binary16 -1.5, the smallest subnormal, infinity.
    assert_eq!(read("f2", "<", &[0x00, 0xbe]).unwrap(), format!("Float({:?})", -1.5));
    assert_eq!(read("f2", "<", &[0x01, 0x00]).unwrap(), format!("Float({:?})", 2f64.powi(-24)));
    assert_eq!(read("f2", "<", &[0x00, 0x7c]).unwrap(), format!("Float({:?})", f64::INFINITY));
    assert_eq!(read("i4", "<", &(-17i32).to_le_bytes()).unwrap(), "Int(-17)");
    assert_eq!(read("i1", "|", &[0xff]).unwrap(), "Int(-1)");
    assert_eq!(read("u8", "<", &u64::MAX.to_le_bytes()).unwrap(), format!("Int({})", i128::from(u64::MAX)));
    assert_eq!(read("u1", "|", &[200]).unwrap(), "Int(200)");
    assert_eq!(read("b1", "|", &[1]).unwrap(), "Bool(true)");
    // What is refused: a type that is no number, bytes of the wrong length, no byte order, a bad order.
    assert!(read("O", "|", &[0; 8]).unwrap_err().contains("not a number type tpack reads"));
    assert!(read("U5", "<", &[0; 20]).unwrap_err().contains("not a number type tpack reads"));
    assert!(read("f8", "<", &[0; 4]).unwrap_err().contains("has 4 bytes, not 8"));
    assert!(read("f8", "", &[0; 8]).unwrap_err().contains("has no byte order"));
    assert!(read("f8", "|", &[0; 8]).unwrap_err().contains("has no byte order"));
    assert!(read("f8", "=", &[0; 8]).unwrap_err().contains("without a byte order"));
    // numpy.dtype with other arguments, and a scalar of anything but a dtype.
    let other = [&b"\x80\x02cnumpy\ndtype\n"[..], &uni("f8"), b"\x88\x88\x87R."].concat();
    assert!(message(&other).contains("other than (code, False, True)"));
    let not_dtype = [&b"\x80\x02cnumpy.core.multiarray\nscalar\nK\x01C\x01\x00\x86R."[..]].concat();
    assert!(message(&not_dtype).contains("other than (numpy.dtype, bytes)"));
    // A dtype's byte order is set once.
    let mut twice = b"\x80\x02cnumpy\ndtype\n".to_vec();
    twice.extend(uni("f8"));
    twice.extend(b"\x89\x88\x87R");
    for _ in 0..2 {
        twice.extend(b"(K\x03");
        twice.extend(uni("<"));
        twice.extend(b"tb");
    }
    twice.push(b'.');
    assert!(message(&twice).contains("byte order twice"));
}

#[test]
fn an_argparse_namespace_is_a_record_of_its_attributes() {
    let mut p = b"\x80\x02cargparse\nNamespace\n)\x81}(".to_vec();
    p.extend(uni("lr"));
    p.extend(b"G?\xb9\x99\x99\x99\x99\x99\x9aub.");
    let Value::Object(o) = run(&p).unwrap() else { panic!("object") };
    assert_eq!(o.class, "argparse.Namespace");
    assert!(matches!(o.state.borrow().as_ref(), Some(Value::Dict { .. })));
    // Constructed with arguments, it is not what argparse pickles.
    assert!(message(b"\x80\x02cargparse\nNamespace\nK\x01\x85\x81.").contains("called with arguments"));
    assert!(
        message(b"\x80\x02cargparse\nNamespace\n)\x81}b}b.").contains("state of a argparse.Namespace twice")
    );
}

#[test]
fn containers_cannot_change_once_inside_another_so_no_cycle_forms() {
    assert!(message(b"\x80\x02]q\x00h\x00a.").contains("a container is put inside itself"));
    // [[]] then the inner list, fetched from the memo, appended to.
    assert!(message(b"\x80\x02]]q\x00a\x85h\x00Na.").contains("a list changes after it was put in another"));
    assert!(message(b"\x80\x02}q\x00\x85h\x00NNs.").contains("a dict changes after it was put in another"));
}

#[test]
fn nesting_stack_memo_and_marks_are_bounded() {
    let deep = |n: usize| [&b"\x80\x02"[..], &vec![b']'; n], &vec![b'a'; n - 1], b"."].concat();
    assert!(run(&deep(MAX_DEPTH)).is_ok());
    assert!(message(&deep(MAX_DEPTH + 1)).contains("nesting depth of containers exceeds the limit of 100"));
    // The depth through a memo chain is counted too: each new list holds the previous one.
    let mut chain = b"\x80\x02]q\x00".to_vec();
    for _ in 0..MAX_DEPTH {
        chain.extend(b"]h\x00aq\x00");
    }
    chain.push(b'.');
    assert!(message(&chain).contains("nesting depth"));
    let stack = [&b"\x80\x02"[..], &vec![b'N'; MAX_STACK + 1], b"."].concat();
    assert!(message(&stack).contains("the pickle stack exceeds the limit of 1048576"));
    let marks = [&b"\x80\x02"[..], &vec![b'('; MAX_MARKS + 1], b"."].concat();
    assert!(message(&marks).contains("open marks exceeds the limit of 65536"));
    let mut memo = b"\x80\x02N".to_vec();
    for i in 0..=u32::try_from(MAX_MEMO).unwrap() {
        memo.push(b'r');
        memo.extend(i.to_le_bytes());
    }
    memo.push(b'.');
    assert!(message(&memo).contains("the pickle memo exceeds the limit of 1048576"));
    // Putting to the same index again does not grow the memo.
    let mut same = b"\x80\x02N".to_vec();
    for _ in 0..=MAX_MEMO {
        same.extend(b"q\x00");
    }
    same.push(b'.');
    assert!(run(&same).is_ok());
}

#[test]
fn lengths_are_checked_against_the_input_left() {
    for (body, what) in [
        (&b"\x80\x02\x8b\xff\xff\xff\xff\x01."[..], "a length of 4294967295 bytes, but only 2 remain"),
        (b"\x80\x02X\x05\x00\x00\x00abc", "a length of 5 bytes, but only 3 remain"),
        (b"\x80\x03B\xff\xff\xff\x7f.", "a length of 2147483647 bytes, but only 1 remain"),
        (b"\x80\x03\x8e\xff\xff\xff\xff\xff\xff\xff\xff.", "a length of 18446744073709551615 bytes"),
        (b"\x80\x02\x8c\x09abc", "a length of 9 bytes, but only 3 remain"),
        (b"\x80\x02J\x01\x00", "the opcode needs 4 bytes, but only 2 remain"),
    ] {
        assert!(message(body).contains(what), "{what}: {}", message(body));
    }
    let long = [&b"\x80\x02\x8a\x11"[..], &[1; 17], b"."].concat();
    assert!(message(&long).contains("an integer of 17 bytes"));
}

#[test]
fn ints_floats_strings_and_text_opcodes_read_as_python_reads_them() {
    assert!(matches!(run(b"\x80\x02\x8a\x01\xff.").unwrap(), Value::Int(-1)));
    assert!(matches!(run(b"\x80\x02\x8a\x00.").unwrap(), Value::Int(0)));
    assert!(matches!(run(b"\x80\x02J\xfe\xff\xff\xff.").unwrap(), Value::Int(-2)));
    assert!(matches!(run(b"\x80\x02M\xff\xff.").unwrap(), Value::Int(65535)));
    assert!(matches!(run(b"I01\n.").unwrap(), Value::Bool(true)));
    assert!(matches!(run(b"I-12\np0\n0g0\n.").unwrap(), Value::Int(-12)));
    let Value::Float(f) = run(b"\x80\x02G?\xf8\x00\x00\x00\x00\x00\x00.").unwrap() else { panic!("float") };
    assert_eq!(f, 1.5);
    assert!(matches!(run(b"\x80\x02U\x02hi.").unwrap(), Value::Str("hi")));
    assert!(message(b"\x80\x02X\x01\x00\x00\x00\xff.").contains("not valid UTF-8"));
}

#[test]
fn malformed_streams_are_refused_with_the_offset() {
    for (body, what) in [
        (&b"\x80\x01N."[..], "pickle protocol 1 is not one PyTorch writes"),
        (b"\x80\x02N", "the pickle ends without STOP"),
        (b"\x80\x02.", "the stack is empty"),
        (b"\x80\x02(0.", "the stack is empty"),
        (b"\x80\x02h\x07.", "memo entry 7 is not set"),
        (b"\x80\x02\x82\x01.", "opcode EXT1 is not one PyTorch checkpoints use"),
        (b"\x80\x02\x8f.", "opcode EMPTY_SET"),
        (b"\x80\x02S'a'\n.", "opcode STRING (protocol 0)"),
        (b"\x80\x02\xff.", "byte 0xff is not a pickle opcode"),
        (b"\x80\x02}NNu.", "no MARK is open"),
        (b"\x80\x02}(Nu.", "SETITEMS has an odd number of values"),
        (b"\x80\x02NQ.", "a persistent id is a None, not a storage tuple"),
    ] {
        let m = message(body);
        assert!(m.contains(what), "{what}: {m}");
        assert!(m.starts_with("test.pkl, byte "), "{m}");
    }
}

#[test]
fn storages_come_only_from_storage_persistent_ids() {
    let pid = |tag: &str, class: &[u8], numel: u8| {
        [&b"\x80\x02("[..], &uni(tag), class, &uni("0"), &uni("cpu"), &[b'K', numel], b"tQ."].concat()
    };
    assert!(matches!(run(&pid("storage", b"ctorch\nBFloat16Storage\n", 3)).unwrap(), Value::Storage(_)));
    assert!(message(&pid("tensor", b"ctorch\nFloatStorage\n", 3)).contains("not tagged \"storage\""));
    assert!(message(&pid("storage", b"N", 3)).contains("a storage's type is a None"));
    let untyped = pid("storage", b"ctorch\nUntypedStorage\n", 3);
    let u = unpickle("t", &untyped).unwrap();
    assert_eq!(u.storages[0].element, Element::U8);
    // The same key twice with another length.
    let twice = [
        &b"\x80\x02("[..],
        &uni("storage"),
        b"ctorch\nFloatStorage\n",
        &uni("0"),
        &uni("cpu"),
        b"K\x02tQ(",
        &uni("storage"),
        b"ctorch\nFloatStorage\n",
        &uni("0"),
        &uni("cpu"),
        b"K\x03tQ\x86.",
    ]
    .concat();
    assert!(message(&twice).contains("storage \"0\" is named twice with different types or lengths"));
}

fn f32_view(numel: u64, offset: u64, size: &[u64], stride: &[u64]) -> TensorView<'static> {
    TensorView {
        storage: Rc::new(StorageRef { key: "0", element: Element::F32, numel }),
        offset,
        size: size.to_vec(),
        stride: stride.to_vec(),
    }
}

#[test]
fn views_are_borrowed_when_contiguous_and_gathered_in_row_major_order_otherwise() {
    let storage: Vec<u8> = (0u8..6).flat_map(|i| f32::from(i).to_le_bytes()).collect();
    let as_f32 =
        |b: &[u8]| b.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<_>>();
    let mut budget = 1 << 20;
    let row = view::bytes(&f32_view(6, 3, &[3], &[1]), &storage, 4, &mut budget).unwrap();
    assert!(matches!(row, std::borrow::Cow::Borrowed(_)));
    assert_eq!(as_f32(&row), [3.0, 4.0, 5.0]);
    // The transpose of [[0, 1, 2], [3, 4, 5]].
    let t = view::bytes(&f32_view(6, 0, &[3, 2], &[1, 3]), &storage, 4, &mut budget).unwrap();
    assert_eq!(as_f32(&t), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    // Every other column, and a stride-0 expansion.
    let cols = view::bytes(&f32_view(6, 0, &[2, 2], &[3, 2]), &storage, 4, &mut budget).unwrap();
    assert_eq!(as_f32(&cols), [0.0, 2.0, 3.0, 5.0]);
    let expanded = view::bytes(&f32_view(6, 1, &[2, 3], &[1, 0]), &storage, 4, &mut budget).unwrap();
    assert_eq!(as_f32(&expanded), [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    // Dimensions of size 1 may have any stride and still be contiguous; an empty view is empty anywhere.
    assert!(view::is_contiguous(&f32_view(6, 0, &[1, 3], &[99, 1])));
    assert!(view::bytes(&f32_view(6, 6, &[0, 3], &[3, 1]), &storage, 4, &mut budget).unwrap().is_empty());
    assert_eq!(budget, (1 << 20) - 24 - 16 - 24);
}

#[test]
fn views_past_their_storage_overflow_or_budget_are_refused() {
    let storage = [0u8; 24];
    let mut budget = 1 << 20;
    assert_eq!(view::bytes(&f32_view(6, 4, &[3], &[1]), &storage, 4, &mut budget).unwrap_err(), 28);
    assert_eq!(view::extent(&f32_view(6, 1, &[u64::MAX, 2], &[2, 1])), None);
    assert_eq!(
        view::bytes(&f32_view(6, 0, &[1 << 62, 8], &[1 << 62, 1]), &storage, 4, &mut budget).unwrap_err(),
        u64::MAX
    );
    let mut small = 8;
    assert_eq!(view::bytes(&f32_view(6, 0, &[3, 2], &[1, 3]), &storage, 4, &mut small).unwrap_err(), 24);
    assert_eq!(small, 8);
}

/// A zip archive of stored `records`, written as PyTorch's writer lays one out; `edit` may change each
/// central record (its bytes) before it is written.
fn zip_of(records: &[(&str, &[u8])], edit: &dyn Fn(usize, &mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (i, (name, data)) in records.iter().enumerate() {
        let offset = u32::try_from(out.len()).unwrap();
        let size = u32::try_from(data.len()).unwrap();
        let name_len = u16::try_from(name.len()).unwrap();
        out.extend(b"PK\x03\x04\x14\0\0\0\0\0\0\0\0\0\0\0\0\0");
        out.extend(size.to_le_bytes());
        out.extend(size.to_le_bytes());
        out.extend(name_len.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out.extend(name.as_bytes());
        out.extend(*data);
        let mut c = b"PK\x01\x02\x14\0\x14\0\0\0\0\0\0\0\0\0\0\0\0\0".to_vec();
        c.extend(size.to_le_bytes());
        c.extend(size.to_le_bytes());
        c.extend(name_len.to_le_bytes());
        c.extend([0; 12]);
        c.extend(offset.to_le_bytes());
        c.extend(name.as_bytes());
        edit(i, &mut c);
        central.extend(c);
    }
    let start = u32::try_from(out.len()).unwrap();
    out.extend(&central);
    let count = u16::try_from(records.len()).unwrap();
    out.extend(b"PK\x05\x06\0\0\0\0");
    out.extend(count.to_le_bytes());
    out.extend(count.to_le_bytes());
    out.extend(u32::try_from(central.len()).unwrap().to_le_bytes());
    out.extend(start.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

fn zip_error(bytes: &[u8]) -> String {
    zip::entries(bytes).unwrap_err().to_string()
}

#[test]
fn zip_entries_are_views_of_the_input() {
    let z = zip_of(&[("a/data.pkl", b"\x80\x02N."), ("a/data/0", b"abcd")], &|_, _| {});
    let e = zip::entries(&z).unwrap();
    assert_eq!(
        e.iter().map(|e| (e.name, e.content().unwrap())).collect::<Vec<_>>(),
        [("a/data.pkl", &b"\x80\x02N."[..]), ("a/data/0", b"abcd")]
    );
    assert_eq!(zip::first_name(&z), Some(&b"a/data.pkl"[..]));
    // An archive comment is allowed.
    let mut commented = z.clone();
    let len = commented.len();
    commented[len - 2] = 3;
    commented.extend(b"hey");
    assert_eq!(zip::entries(&commented).unwrap().len(), 2);
}

#[test]
fn zip_names_must_be_relative_paths_inside_the_archive_and_unique() {
    for (name, why) in [
        ("a/../b", "a `..` component"),
        ("/a/b", "an absolute path"),
        ("a\\b", "a backslash"),
        ("C:/a", "a drive letter"),
        ("a//b", "an empty or `.` component"),
        ("a/./b", "an empty or `.` component"),
        ("a\0b", "a NUL byte"),
    ] {
        let z = zip_of(&[(name, b"x")], &|_, _| {});
        assert!(zip_error(&z).contains(why), "{name}: {}", zip_error(&z));
    }
    let z = zip_of(&[("a/x", b"1"), ("a/x", b"2")], &|_, _| {});
    assert!(zip_error(&z).contains("entry \"a/x\" appears twice"));
}

#[test]
fn zip_records_must_agree_lie_inside_the_input_and_not_overlap() {
    let set = |at: usize, bytes: &'static [u8]| {
        move |_: usize, c: &mut Vec<u8>| c.splice(at..at + bytes.len(), bytes.iter().copied()).for_each(drop)
    };
    let encrypted = zip_of(&[("a/x", b"1")], &set(8, b"\x01\x00"));
    assert!(zip_error(&encrypted).contains("is encrypted"));
    let sizes = zip_of(&[("a/x", b"1")], &set(24, b"\x05\x00\x00\x00"));
    assert!(zip_error(&sizes).contains("declares 1 bytes stored and 5 bytes of content"));
    let huge = zip_of(&[("a/x", b"1")], &set(20, b"\xf0\xff\xff\xff\xf0\xff\xff\xff"));
    assert!(zip_error(&huge).contains("declares 4294967280 bytes, but the archive is only"));
    let deflated = zip_of(&[("a/x", b"1")], &set(10, b"\x08\x00"));
    assert!(zip_error(&deflated).contains("local header that does not match"));
    let zip64 = zip_of(&[("a/x", b"1")], &set(20, b"\xff\xff\xff\xff"));
    assert!(zip_error(&zip64).contains("needs a zip64 extra field"));
    // The second record's central offset pointing at a local header for it hidden in the first's data.
    let hidden = zip_of(&[("a/y", b"1")], &|_, _| {});
    let overlap = zip_of(&[("a/x", &hidden[..34]), ("a/y", b"1")], &|i, c| {
        if i == 1 {
            c.splice(42..46, 33u32.to_le_bytes()).for_each(drop);
        }
    });
    assert!(zip_error(&overlap).contains("two entries, or an entry and the central directory, overlap"));
    let elsewhere = zip_of(&[("a/x", b"1"), ("a/y", b"1")], &|i, c| {
        if i == 1 {
            c.splice(42..46, 0u32.to_le_bytes()).for_each(drop);
        }
    });
    assert!(zip_error(&elsewhere).contains("local header that does not match"));
    let mut disks = zip_of(&[("a/x", b"1")], &|_, _| {});
    let len = disks.len();
    disks[len - 18] = 1;
    assert!(zip_error(&disks).contains("spans several disks"));
    assert!(zip_error(b"PK\x03\x04").contains("shorter than an end record"));
    assert!(zip_error(&[0; 64]).contains("no end-of-central-directory record"));
}

#[test]
fn zip64_sizes_and_offsets_are_read_from_the_extra_field() {
    let z = zip_of(&[("a/x", b"abc")], &|_, c| {
        // Sizes and offset all in the zip64 extra field.
        c.splice(20..28, [0xff; 8]).for_each(drop);
        c.splice(42..46, [0xff; 4]).for_each(drop);
        c.splice(30..32, 28u16.to_le_bytes()).for_each(drop);
        c.extend(1u16.to_le_bytes());
        c.extend(24u16.to_le_bytes());
        c.extend(3u64.to_le_bytes());
        c.extend(3u64.to_le_bytes());
        c.extend(0u64.to_le_bytes());
    });
    let e = zip::entries(&z).unwrap();
    assert_eq!(e[0].content().unwrap(), b"abc");
}

#[test]
fn only_stored_records_are_read_and_nothing_is_inflated() {
    let e = zip::ZipEntry { name: "a/code/x.py", method: 8, data: b"xyz", size: 1 << 40 };
    assert!(e
        .content()
        .unwrap_err()
        .to_string()
        .contains("compressed (method 8, 3 bytes declared to inflate to 1099511627776)"));
}

#[test]
fn archives_flatten_into_named_tensors_with_their_bytes() {
    let mut pkl = b"\x80\x02}(".to_vec();
    pkl.extend(uni("layer"));
    pkl.extend(b"}(");
    pkl.extend(uni("w"));
    pkl.extend(&tensor_pickle(6, 0, &[3, 2], &[1, 3])[2..tensor_pickle(6, 0, &[3, 2], &[1, 3]).len() - 1]);
    pkl.extend(b"u");
    pkl.extend(uni("n"));
    pkl.extend(b"K\x05u.");
    let data: Vec<u8> = (0u8..24).collect();
    let z = zip_of(&[("m/data.pkl", &pkl), ("m/data/0", &data)], &|_, _| {});
    assert!(crate::sniff(&z));
    let c = crate::read(&z).unwrap();
    assert_eq!(c.kind, crate::Kind::Zip);
    assert_eq!(c.tensors.len(), 1);
    let t = &c.tensors[0];
    assert_eq!((t.name.as_str(), t.shape.clone(), t.shares_storage), ("layer.w", vec![3, 2], false));
    assert_eq!(&t.data[..8], &[0, 1, 2, 3, 12, 13, 14, 15]);
    assert_eq!(c.values, [("n".to_owned(), crate::Scalar::Int(5))]);
    // A record outside the archive's folder, and a storage with no record.
    let z = zip_of(&[("m/data.pkl", &pkl), ("m/data/0", &data), ("other", b"")], &|_, _| {});
    assert!(crate::read(&z)
        .unwrap_err()
        .to_string()
        .contains("record \"other\" is outside the archive's folder"));
    let z = zip_of(&[("m/data.pkl", &pkl)], &|_, _| {});
    assert!(crate::read(&z).unwrap_err().to_string().contains("which has no record in the file"));
    let npz = zip_of(&[("w.npy", b"\x93NUMPY")], &|_, _| {});
    assert!(!crate::sniff(&npz));
}

/// The globals picklescan and fickling flag (`cli/tests/fixtures/pytorch/attacker_globals.txt`, written by
/// `attacker_globals.py` from their own lists): each is refused by name, through GLOBAL and STACK_GLOBAL.
#[test]
fn every_global_picklescan_and_fickling_flag_is_refused_by_name() {
    let list = include_str!("../../cli/tests/fixtures/pytorch/attacker_globals.txt");
    let globals: Vec<&str> = list.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).collect();
    assert!(globals.len() > 150, "{}", globals.len());
    for global in globals {
        let (module, name) = global.rsplit_once('.').unwrap();
        let by_global = [&b"\x80\x02c"[..], module.as_bytes(), b"\n", name.as_bytes(), b"\n."].concat();
        let by_stack = [&b"\x80\x04"[..], &uni(module), &uni(name), b"\x93."].concat();
        for body in [by_global, by_stack] {
            match run(&body).unwrap_err() {
                Error::ForbiddenGlobal { global: g, .. } => assert_eq!(g, global),
                other => panic!("{global}: {other}"),
            }
        }
    }
}
