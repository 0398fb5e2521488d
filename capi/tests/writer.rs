//! The one-pass writer through its `extern "C"` functions: a container written to a callback reads back as
//! declared, and misuse, a full bookkeeping and a failing callback give their codes.

use std::ffi::c_void;
use std::mem::MaybeUninit;

use tpack_capi::*;

const OK: tpack_result = tpack_result::TPACK_RESULT_OK;

unsafe extern "C" fn into_vec(user: *mut c_void, bytes: *const u8, len: usize) -> i32 {
    // SAFETY: `user` is the `Vec` the test passed to `tpack_writer_init`; `bytes` holds `len` bytes.
    unsafe { (*user.cast::<Vec<u8>>()).extend_from_slice(std::slice::from_raw_parts(bytes, len)) };
    0
}

unsafe extern "C" fn failing(_: *mut c_void, _: *const u8, _: usize) -> i32 {
    -5
}

/// A writer in a boxed storage (it is about 40 KiB: too much for a test thread's stack to pass around).
fn writer(write: tpack_write_fn, user: *mut c_void) -> Box<MaybeUninit<tpack_writer>> {
    let mut w = Box::<tpack_writer>::new_uninit();
    // SAFETY: writable storage; the callback and `user` outlive the writer in every test.
    assert_eq!(unsafe { tpack_writer_init(w.as_mut_ptr(), write, user) }, OK);
    w
}

fn decl<'a>(name: &'a str, dtype: u16, dims: &'a [u64]) -> tpack_entry_decl {
    tpack_entry_decl {
        name: tpack_str { data: name.as_ptr().cast(), len: name.len() },
        dims: dims.as_ptr(),
        rank: dims.len(),
        target: 0,
        alignment: 0,
        dtype,
        has_target: false,
    }
}

fn error() -> tpack_error {
    // SAFETY: all-zero bits are a valid `tpack_error` (plain integers).
    unsafe { std::mem::zeroed() }
}

fn meta(w: *mut tpack_writer, key: &str, value_type: u8, value: &[u8]) -> tpack_result {
    let mut e = error();
    // SAFETY: a filled writer; readable key and value; a writable error.
    unsafe {
        tpack_writer_metadata(
            w,
            key.as_ptr().cast(),
            key.len(),
            value_type,
            value.as_ptr(),
            value.len(),
            &mut e,
        )
    }
}

#[test]
fn a_written_container_reads_back_as_declared() {
    let mut out: Vec<u8> = Vec::new();
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.as_mut_ptr();
    let mut e = error();
    let mut code = decl("boot.code", 18, &[5]);
    code.has_target = true;
    code.target = 0x2000_0000;
    code.alignment = 4;
    // SAFETY: a filled writer, readable declarations, a writable error.
    unsafe {
        assert_eq!(tpack_writer_declare(w, &decl("w", 2, &[2]), &mut e), OK);
        assert_eq!(tpack_writer_declare(w, &code, &mut e), OK);
        assert_eq!(
            tpack_writer_declare(
                w,
                &tpack_entry_decl { dims: std::ptr::null(), ..decl("eps", 1, &[]) },
                &mut e
            ),
            OK
        );
    }
    assert_eq!(meta(w, "arch", 5, b"toy"), OK);
    assert_eq!(meta(w, "layers", 1, &3u64.to_le_bytes()), OK);
    assert_eq!(meta(w, "bias", 2, &(-3i64).to_le_bytes()), OK);
    assert_eq!(meta(w, "trained", 4, &[1]), OK);
    assert_eq!(meta(w, "t.u16[]", 20, &[1, 0, 255, 255]), OK);
    assert_eq!(meta(w, "t.f32", 17, &1.5f32.to_le_bytes()), OK);
    assert_eq!(meta(w, "t.bool[]", 25, &[1, 0, 1]), OK);
    let w_payload: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    // SAFETY: a filled writer, readable chunks, a writable error.
    unsafe {
        assert_eq!(tpack_writer_write(w, w_payload.as_ptr(), 3, &mut e), OK);
        assert_eq!(tpack_writer_write(w, w_payload[3..].as_ptr(), 5, &mut e), OK);
        assert_eq!(tpack_writer_end_entry(w, &mut e), OK);
        assert_eq!(tpack_writer_write(w, b"\x01\x02\x03\x04\x05".as_ptr(), 5, &mut e), OK);
        assert_eq!(tpack_writer_end_entry(w, &mut e), OK);
        assert_eq!(tpack_writer_write(w, 1e-5f64.to_le_bytes().as_ptr(), 8, &mut e), OK);
        assert_eq!(tpack_writer_end_entry(w, &mut e), OK);
        let mut position = 0u64;
        assert_eq!(tpack_writer_position(w, &mut position), OK);
        assert!(position > 0);
        assert_eq!(tpack_writer_finish(w, &mut e), OK, "{e:?}");
        // The storage is empty now.
        assert_eq!(tpack_writer_finish(w, &mut e), tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE);
    }

    let c = tpack::Container::parse(&out).expect("parse");
    c.verify().expect("verify");
    assert_eq!(c.len(), 3);
    let w = c.get("w").expect("w");
    assert_eq!(w.payload(), &w_payload[..]);
    let boot = c.get("boot.code").expect("boot.code");
    assert_eq!(
        (boot.target(), boot.alignment(), boot.payload()),
        (Some(0x2000_0000), 4, &b"\x01\x02\x03\x04\x05"[..])
    );
    assert_eq!(c.get("eps").expect("eps").shape().rank(), 0);
    let m = c.metadata();
    assert_eq!(m.get("arch"), Some(tpack::MetaValue::String("toy")));
    assert_eq!(m.get("layers"), Some(tpack::MetaValue::U64(3)));
    assert_eq!(m.get("bias"), Some(tpack::MetaValue::I64(-3)));
    assert_eq!(m.get("trained"), Some(tpack::MetaValue::Bool(true)));
    assert_eq!(m.get("t.f32"), Some(tpack::MetaValue::F32(1.5)));
    let Some(tpack::MetaValue::U16Array(a)) = m.get("t.u16[]") else { panic!("u16[]") };
    assert_eq!(a.iter().map(|v| v.get()).collect::<Vec<_>>(), [1, 65535]);
    assert_eq!(m.get("t.bool[]"), Some(tpack::MetaValue::BoolArray(&[true, false, true])));
}

#[test]
fn misuse_and_failures_give_their_codes() {
    let mut out: Vec<u8> = Vec::new();
    let mut e = error();

    // No callback.
    let mut storage = Box::<tpack_writer>::new_uninit();
    // SAFETY: writable storage; NULL is what is checked.
    assert_eq!(
        unsafe { tpack_writer_init(storage.as_mut_ptr(), None, std::ptr::null_mut()) },
        tpack_result::TPACK_RESULT_NULL_ARGUMENT
    );

    // Bad values for their types.
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.as_mut_ptr();
    assert_eq!(meta(w, "b", 4, &[2]), tpack_result::TPACK_RESULT_BAD_ARGUMENT);
    assert_eq!(meta(w, "s", 5, b"\xff"), tpack_result::TPACK_RESULT_BAD_ARGUMENT);
    assert_eq!(meta(w, "u", 20, &[1, 2, 3]), tpack_result::TPACK_RESULT_BAD_ARGUMENT);
    assert_eq!(meta(w, "x", 10, &[]), tpack_result::TPACK_RESULT_BAD_ARGUMENT);
    // An empty key breaks R42, and poisons the writer.
    assert_eq!(meta(w, "", 1, &[0; 8]), tpack_result::TPACK_RESULT_INVALID_CONTAINER);
    assert_eq!(meta(w, "ok", 1, &[0; 8]), tpack_result::TPACK_RESULT_WRITER_POISONED);

    // A payload shorter than declared.
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.as_mut_ptr();
    // SAFETY: a filled writer, readable arguments, a writable error.
    unsafe {
        assert_eq!(tpack_writer_declare(w, &decl("w", 14, &[4]), &mut e), OK);
        assert_eq!(tpack_writer_write(w, [1u8, 2].as_ptr(), 2, &mut e), OK);
        assert_eq!(tpack_writer_end_entry(w, &mut e), tpack_result::TPACK_RESULT_WRITER_MISUSE);
        assert_eq!((e.result, e.entry, e.value), (14, 0, 4));
    }

    // An unknown dtype breaks R22.
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.as_mut_ptr();
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            tpack_writer_declare(w, &decl("w", 999, &[4]), &mut e),
            tpack_result::TPACK_RESULT_INVALID_CONTAINER
        );
    }
    assert_eq!(e.rule, 22);

    // The callback fails.
    let mut w = writer(Some(failing), std::ptr::null_mut());
    let w = w.as_mut_ptr();
    // SAFETY: as above.
    unsafe {
        assert_eq!(tpack_writer_declare(w, &decl("w", 14, &[1]), &mut e), OK);
        assert_eq!(tpack_writer_write(w, [7u8].as_ptr(), 1, &mut e), tpack_result::TPACK_RESULT_IO);
        assert_eq!(e.value, (-5i64) as u64);
    }

    // The bookkeeping fills up: more entries than it holds.
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.as_mut_ptr();
    let names: Vec<String> = (0..=TPACK_WRITER_MAX_ENTRIES).map(|i| format!("e{i}")).collect();
    let results: Vec<tpack_result> = names
        .iter()
        // SAFETY: as above.
        .map(|n| unsafe { tpack_writer_declare(w, &decl(n, 14, &[1]), &mut e) })
        .collect();
    assert!(results[..TPACK_WRITER_MAX_ENTRIES].iter().all(|&r| r == OK));
    assert_eq!(results[TPACK_WRITER_MAX_ENTRIES], tpack_result::TPACK_RESULT_WRITER_FULL);
    assert_eq!(e.value, 0);
}
