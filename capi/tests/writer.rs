//! The writer through its `extern "C"` functions: a container written to a callback (one-pass) or to a
//! seekable sink reads back as declared, both modes write the same bytes, and misuse, short or full
//! bookkeeping and failing callbacks give their codes.

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

/// A seekable in-memory sink: bytes and a position, as a file has.
#[derive(Default)]
struct File {
    bytes: Vec<u8>,
    position: usize,
}

unsafe extern "C" fn file_write(user: *mut c_void, bytes: *const u8, len: usize) -> i32 {
    // SAFETY: `user` is the test's `File`; `bytes` holds `len` bytes.
    let (f, data) = unsafe { (&mut *user.cast::<File>(), std::slice::from_raw_parts(bytes, len)) };
    let end = f.position + len;
    if f.bytes.len() < end {
        f.bytes.resize(end, 0);
    }
    f.bytes[f.position..end].copy_from_slice(data);
    f.position = end;
    0
}

unsafe extern "C" fn file_seek(user: *mut c_void, offset: i64, whence: i32, out: *mut u64) -> i32 {
    // SAFETY: `user` is the test's `File`.
    let f = unsafe { &mut *user.cast::<File>() };
    let base = match whence {
        TPACK_SEEK_SET => 0,
        TPACK_SEEK_CUR => f.position as i64,
        TPACK_SEEK_END => f.bytes.len() as i64,
        _ => return -22,
    };
    let Ok(to) = usize::try_from(base + offset) else { return -22 };
    f.position = to;
    // SAFETY: the writer passes a writable `uint64_t`.
    unsafe { out.write(to as u64) };
    0
}

unsafe extern "C" fn failing_seek(_: *mut c_void, _: i64, _: i32, _: *mut u64) -> i32 {
    -29
}

/// A writer handle and its bookkeeping block, kept together (the block must outlive the writer).
struct Writer {
    handle: Box<MaybeUninit<tpack_writer>>,
    _bookkeeping: Vec<u8>,
}

impl Writer {
    fn ptr(&mut self) -> *mut tpack_writer {
        self.handle.as_mut_ptr()
    }
}

fn bookkeeping(entries: usize, bytes: usize) -> Vec<u8> {
    let mut size = 0;
    // SAFETY: a writable `size_t`.
    assert_eq!(unsafe { tpack_writer_bookkeeping_size(entries, bytes, &mut size) }, OK);
    vec![0xa5; size]
}

/// A one-pass writer for up to `entries` entries and `bytes` name bytes.
fn writer_with(write: tpack_write_fn, user: *mut c_void, entries: usize, bytes: usize) -> Writer {
    let mut handle = Box::<tpack_writer>::new_uninit();
    let mut books = bookkeeping(entries, bytes);
    let mut e = error();
    // SAFETY: writable storage and block; the callback, `user` and the block outlive the writer.
    let r = unsafe {
        tpack_writer_init(
            handle.as_mut_ptr(),
            books.as_mut_ptr(),
            books.len(),
            entries,
            bytes,
            write,
            user,
            &mut e,
        )
    };
    assert_eq!(r, OK, "{e:?}");
    Writer { handle, _bookkeeping: books }
}

fn writer(write: tpack_write_fn, user: *mut c_void) -> Writer {
    writer_with(write, user, 16, 1024)
}

fn seek_writer(file: &mut File) -> Writer {
    let mut handle = Box::<tpack_writer>::new_uninit();
    let mut books = bookkeeping(16, 1024);
    let mut e = error();
    // SAFETY: as in `writer_with`.
    let r = unsafe {
        tpack_writer_init_seekable(
            handle.as_mut_ptr(),
            books.as_mut_ptr(),
            books.len(),
            16,
            1024,
            Some(file_write),
            Some(file_seek),
            (file as *mut File).cast(),
            &mut e,
        )
    };
    assert_eq!(r, OK, "{e:?}");
    Writer { handle, _bookkeeping: books }
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
        open_ended: false,
    }
}

/// An `array[]` item header: type, three zero bytes, u32 length.
fn array_item(value_type: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![value_type, 0, 0, 0];
    v.extend_from_slice(&(body.len() as u32).to_le_bytes());
    v.extend_from_slice(body);
    v
}

fn strings(items: &[&str]) -> Vec<u8> {
    items.iter().flat_map(|s| [&(s.len() as u32).to_le_bytes()[..], s.as_bytes()].concat()).collect()
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

fn meta_error(w: *mut tpack_writer, key: &[u8], value_type: u8, value: &[u8]) -> (tpack_result, tpack_error) {
    let mut e = error();
    // SAFETY: a filled writer; readable key and value; a writable error.
    let r = unsafe {
        tpack_writer_metadata(
            w,
            key.as_ptr().cast(),
            key.len(),
            value_type,
            value.as_ptr(),
            value.len(),
            &mut e,
        )
    };
    (r, e)
}

#[test]
fn a_written_container_reads_back_as_declared() {
    let mut out: Vec<u8> = Vec::new();
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.ptr();
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
    assert_eq!(meta(w, "t.string[]", 10, &strings(&["a", "", "ü"])), OK);
    let nested = [array_item(20, &[7, 0]), array_item(10, &strings(&["x"]))].concat();
    assert_eq!(meta(w, "t.array[]", 26, &nested), OK);
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
    let Some(tpack::MetaValue::StringArray(items)) = m.get("t.string[]") else { panic!("string[]") };
    assert_eq!(items.collect::<Vec<_>>(), ["a", "", "ü"]);
    let Some(tpack::MetaValue::ArrayArray(mut items)) = m.get("t.array[]") else { panic!("array[]") };
    let Some(tpack::MetaValue::U16Array(a)) = items.next() else { panic!("array[] item 0") };
    assert_eq!(a.iter().map(|v| v.get()).collect::<Vec<_>>(), [7]);
    let Some(tpack::MetaValue::StringArray(s)) = items.next() else { panic!("array[] item 1") };
    assert_eq!(s.collect::<Vec<_>>(), ["x"]);
    assert_eq!(items.next(), None);
}

/// Declares two entries and a metadata value, writes the payloads in chunks, finishes.
fn write_sample(w: *mut tpack_writer, open_ended: bool) -> tpack_result {
    let mut e = error();
    let mut code = decl("code", 18, &[6]);
    code.open_ended = open_ended;
    // SAFETY: a filled writer, readable arguments, a writable error.
    unsafe {
        for d in [decl("w", 2, &[2]), code] {
            let r = tpack_writer_declare(w, &d, &mut e);
            if r != OK {
                return r;
            }
        }
        let r = meta(w, "k", 5, b"v");
        if r != OK {
            return r;
        }
        for chunks in [&[&[0u8, 0, 128][..], &[63, 0, 0, 0, 64]][..], &[b"abc", b"def"]] {
            for c in chunks {
                let r = tpack_writer_write(w, c.as_ptr(), c.len(), &mut e);
                if r != OK {
                    return r;
                }
            }
            let r = tpack_writer_end_entry(w, &mut e);
            if r != OK {
                return r;
            }
        }
        tpack_writer_finish(w, &mut e)
    }
}

#[test]
fn the_seekable_writer_back_patches_after_a_preamble_and_writes_the_one_pass_bytes() {
    let mut one_pass: Vec<u8> = Vec::new();
    let mut w = writer(Some(into_vec), (&raw mut one_pass).cast());
    assert_eq!(write_sample(w.ptr(), false), OK);

    for open_ended in [false, true] {
        let mut file = File { bytes: b"PREAMBLE".to_vec(), position: 8 };
        let mut w = seek_writer(&mut file);
        assert_eq!(write_sample(w.ptr(), open_ended), OK, "open_ended {open_ended}");
        assert_eq!(&file.bytes[..8], b"PREAMBLE");
        assert_eq!(file.bytes[8..], one_pass[..], "open_ended {open_ended}");
        assert_eq!(file.position, file.bytes.len(), "the sink is left at the container's end");
    }
    let c = tpack::Container::parse(&one_pass).expect("parse");
    c.verify().expect("verify");
    assert_eq!(c.get("code").expect("code").payload(), b"abcdef");
}

#[test]
fn an_open_ended_entry_needs_the_seekable_writer() {
    let mut out: Vec<u8> = Vec::new();
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    assert_eq!(write_sample(w.ptr(), true), tpack_result::TPACK_RESULT_WRITER_MISUSE);
    // Refused when declared, naming the entry, not later when the payloads begin.
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let mut d = decl("code", TPACK_DTYPE_RAW, &[]);
    d.open_ended = true;
    let mut e = error();
    // SAFETY: a filled writer, readable arguments, a writable error.
    unsafe {
        assert_eq!(tpack_writer_declare(w.ptr(), &decl("w", 14, &[1]), &mut e), OK);
        assert_eq!(tpack_writer_declare(w.ptr(), &d, &mut e), tpack_result::TPACK_RESULT_WRITER_MISUSE);
    }
    assert_eq!((e.entry, e.rule), (1, 0));
    assert!(out.is_empty(), "nothing was written");
    // Open-ended is RAW only: a U8 entry without a length is refused when declared.
    let mut file = File::default();
    let mut w = seek_writer(&mut file);
    let mut d = decl("u", 14, &[]);
    d.open_ended = true;
    let mut e = error();
    // SAFETY: a filled writer, readable arguments, a writable error.
    let r = unsafe { tpack_writer_declare(w.ptr(), &d, &mut e) };
    assert_ne!(r, OK);
}

#[test]
fn a_failing_seek_is_an_io_error_with_its_number() {
    let mut file = File::default();
    let mut handle = Box::<tpack_writer>::new_uninit();
    let mut books = bookkeeping(4, 64);
    let mut e = error();
    // SAFETY: as in `writer_with`.
    unsafe {
        assert_eq!(
            tpack_writer_init_seekable(
                handle.as_mut_ptr(),
                books.as_mut_ptr(),
                books.len(),
                4,
                64,
                Some(file_write),
                Some(failing_seek),
                (&raw mut file).cast(),
                &mut e,
            ),
            OK
        );
    }
    assert_eq!(write_sample(handle.as_mut_ptr(), false), tpack_result::TPACK_RESULT_IO);
    let mut e = error();
    // SAFETY: the storage was emptied by finish.
    let r = unsafe { tpack_writer_finish(handle.as_mut_ptr(), &mut e) };
    assert_eq!(r, tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE);
    // The seek fails only at finish, with its number; nothing written claims to be a container.
    assert!(!file.bytes.starts_with(b"TPACK"), "{:?}", &file.bytes[..8.min(file.bytes.len())]);
}

#[test]
fn bookkeeping_is_sized_by_the_caller_and_checked() {
    let mut e = error();
    let mut size = 0usize;
    // SAFETY: a writable `size_t`; then NULL, which is checked.
    unsafe {
        assert_eq!(tpack_writer_bookkeeping_size(2, 10, &mut size), OK);
        assert_eq!(
            tpack_writer_bookkeeping_size(usize::MAX, 1, &mut size),
            tpack_result::TPACK_RESULT_BAD_ARGUMENT
        );
        assert_eq!(
            tpack_writer_bookkeeping_size(1, 1, std::ptr::null_mut()),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
    }
    assert_eq!(Some(size), tpack::write::SliceBookkeeping::storage_len(2, 10));
    let mut out: Vec<u8> = Vec::new();
    let mut handle = Box::<tpack_writer>::new_uninit();
    let mut books = vec![0u8; size];
    // SAFETY: writable storage and block.
    unsafe {
        let r = tpack_writer_init(
            handle.as_mut_ptr(),
            books.as_mut_ptr(),
            size - 1,
            2,
            10,
            Some(into_vec),
            (&raw mut out).cast(),
            &mut e,
        );
        assert_eq!(r, tpack_result::TPACK_RESULT_SHORT_STORAGE);
        assert_eq!(e.value, size as u64, "the length needed");
        let r = tpack_writer_init(
            handle.as_mut_ptr(),
            std::ptr::null_mut(),
            size,
            2,
            10,
            Some(into_vec),
            (&raw mut out).cast(),
            &mut e,
        );
        assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);
        let r = tpack_writer_init_seekable(
            handle.as_mut_ptr(),
            books.as_mut_ptr(),
            size,
            2,
            10,
            Some(into_vec),
            None,
            (&raw mut out).cast(),
            &mut e,
        );
        assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);
        // Neither failed call filled the storage.
        let mut position = 0u64;
        assert_eq!(
            tpack_writer_position(std::ptr::null(), &mut position),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
    }
    // Exactly two entries fit, and names of 10 bytes in all.
    let mut w = writer_with(Some(into_vec), (&raw mut out).cast(), 2, 10);
    let w = w.ptr();
    // SAFETY: a filled writer, readable arguments, a writable error.
    unsafe {
        assert_eq!(tpack_writer_declare(w, &decl("abcd", 14, &[1]), &mut e), OK);
        assert_eq!(tpack_writer_declare(w, &decl("efgh", 14, &[1]), &mut e), OK);
        assert_eq!(
            tpack_writer_declare(w, &decl("i", 14, &[1]), &mut e),
            tpack_result::TPACK_RESULT_WRITER_FULL
        );
        assert_eq!(e.value, 0, "entries");
    }
    let mut w = writer_with(Some(into_vec), (&raw mut out).cast(), 2, 10);
    let w = w.ptr();
    // SAFETY: as above.
    unsafe {
        assert_eq!(tpack_writer_declare(w, &decl("abcdefgh", 14, &[1]), &mut e), OK);
        assert_eq!(
            tpack_writer_declare(w, &decl("ijk", 14, &[1]), &mut e),
            tpack_result::TPACK_RESULT_WRITER_FULL
        );
        assert_eq!(e.value, 1, "names");
    }
}

#[test]
fn misuse_and_failures_give_their_codes() {
    let mut out: Vec<u8> = Vec::new();
    let mut e = error();

    // No callback.
    let mut storage = Box::<tpack_writer>::new_uninit();
    let mut books = bookkeeping(1, 1);
    // SAFETY: writable storage; NULL is what is checked.
    assert_eq!(
        unsafe {
            tpack_writer_init(
                storage.as_mut_ptr(),
                books.as_mut_ptr(),
                books.len(),
                1,
                1,
                None,
                std::ptr::null_mut(),
                &mut e,
            )
        },
        tpack_result::TPACK_RESULT_NULL_ARGUMENT
    );

    // Bad values for their types: each names the rule a container holding it would break, and the record (in
    // declaration order); found before the writer sees the value, so the writer goes on.
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.ptr();
    let cases: &[(&str, u8, &[u8], u32)] = &[
        ("b", 4, &[2], 48),
        // The inline types cross at their native width: a `bool` is one byte, a `u64` eight.
        ("b", 4, &[1, 0, 0, 0, 0, 0, 0, 0], 47),
        ("b", 4, &[], 47),
        ("u", 1, &[0; 7], 47),
        ("f", 3, &[0; 9], 47),
        ("s", 5, b"\xff", 49),
        ("u", 20, &[1, 2, 3], 47),
        ("x", 10, &[1, 0, 0], 47),
        ("x", 10, &[1, 0, 0, 0, 0xff], 49),
        ("x", 25, &[0, 1, 2], 48),
    ];
    for &(key, value_type, value, rule) in cases {
        let (r, found) = meta_error(w, key.as_bytes(), value_type, value);
        assert_eq!(
            (r, found.rule, found.record),
            (tpack_result::TPACK_RESULT_INVALID_CONTAINER, rule, 0),
            "{key} {value_type}"
        );
    }
    let item = array_item(11, &[1]);
    assert_eq!(meta_error(w, b"x", 26, &item).1.rule, 47);
    for code in [99u8, 200] {
        let (r, found) = meta_error(w, b"x", code, &[]);
        assert_eq!(
            (r, found.rule, found.value),
            (tpack_result::TPACK_RESULT_INVALID_CONTAINER, 46, u64::from(code))
        );
    }
    let (r, found) = meta_error(w, b"\xffkey", 1, &[0; 8]);
    assert_eq!((r, found.rule, found.record), (tpack_result::TPACK_RESULT_INVALID_CONTAINER, 43, 0));
    assert_eq!(meta(w, "fine", 1, &[0; 8]), OK, "the refusals above left the writer usable");
    // An empty key breaks R42 (record 1: one value is declared), and poisons the writer.
    let (r, found) = meta_error(w, b"", 1, &[0; 8]);
    assert_eq!((r, found.rule, found.record), (tpack_result::TPACK_RESULT_INVALID_CONTAINER, 42, 1));
    assert_eq!(meta(w, "ok", 1, &[0; 8]), tpack_result::TPACK_RESULT_WRITER_POISONED);

    // A name that is not UTF-8 breaks R18 and a rank above 8 R23, both with the entry's index.
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.ptr();
    let dims = [1u64; 9];
    // SAFETY: a filled writer, readable arguments, a writable error.
    unsafe {
        assert_eq!(tpack_writer_declare(w, &decl("w", 14, &[1]), &mut e), OK);
        let bad = b"\xfe";
        let mut d = decl("", 14, &[1]);
        d.name = tpack_str { data: bad.as_ptr().cast(), len: 1 };
        assert_eq!(tpack_writer_declare(w, &d, &mut e), tpack_result::TPACK_RESULT_INVALID_CONTAINER);
        assert_eq!((e.rule, e.entry), (18, 1));
        assert_eq!(
            tpack_writer_declare(w, &decl("r", 14, &dims), &mut e),
            tpack_result::TPACK_RESULT_INVALID_CONTAINER
        );
        assert_eq!((e.rule, e.entry, e.value), (23, 1, 9));
    }

    // A payload shorter than declared.
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.ptr();
    // SAFETY: a filled writer, readable arguments, a writable error.
    unsafe {
        assert_eq!(tpack_writer_declare(w, &decl("w", 14, &[4]), &mut e), OK);
        assert_eq!(tpack_writer_write(w, [1u8, 2].as_ptr(), 2, &mut e), OK);
        assert_eq!(tpack_writer_end_entry(w, &mut e), tpack_result::TPACK_RESULT_WRITER_MISUSE);
        assert_eq!((e.result, e.entry, e.value), (14, 0, 4));
    }

    // An unknown dtype breaks R22.
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.ptr();
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
    let w = w.ptr();
    // SAFETY: as above.
    unsafe {
        assert_eq!(tpack_writer_declare(w, &decl("w", 14, &[1]), &mut e), OK);
        assert_eq!(tpack_writer_write(w, [7u8].as_ptr(), 1, &mut e), tpack_result::TPACK_RESULT_IO);
        assert_eq!(e.value, (-5i64) as u64);
    }
}

#[test]
fn a_panic_is_caught_at_the_boundary() {
    let mut e = error();
    // SAFETY: a writable error; then NULL, which is allowed.
    unsafe {
        assert_eq!(tpack_test_panic(&mut e), tpack_result::TPACK_RESULT_PANIC);
        assert_eq!(tpack_test_panic(std::ptr::null_mut()), tpack_result::TPACK_RESULT_PANIC);
    }
    assert_eq!(e.result, tpack_result::TPACK_RESULT_PANIC as u32);
}

/// Writes with `body` to a one-pass writer in memory, finishes, and checks `tpack_writer_length`.
fn written(body: impl FnOnce(*mut tpack_writer)) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    let mut w = writer_with(Some(into_vec), (&raw mut out).cast(), 64, 4096);
    body(w.ptr());
    let mut e = error();
    let mut length = 0u64;
    // SAFETY: a filled writer, a writable error and length.
    unsafe {
        assert_eq!(tpack_writer_length(w.ptr(), &mut length), tpack_result::TPACK_RESULT_WRITER_MISUSE);
        assert_eq!(tpack_writer_finish(w.ptr(), &mut e), OK, "{e:?}");
        assert_eq!(tpack_writer_length(w.ptr(), &mut length), OK);
    }
    assert_eq!(length, out.len() as u64);
    out
}

const NUL: usize = TPACK_NUL_TERMINATED;

#[test]
fn the_typed_setters_write_every_type() {
    use tpack::MetaValue as V;
    let names = [c"up".as_ptr(), c"".as_ptr(), c"d\u{f6}wn".as_ptr()];
    let bytes = written(|w| {
        let mut e = error();
        // SAFETY: a filled writer; NUL-terminated keys; arrays of the given lengths; a writable error.
        unsafe {
            let k = |s: &std::ffi::CStr| s.as_ptr();
            for r in [
                tpack_writer_metadata_u8(w, k(c"u8"), NUL, 200, &mut e),
                tpack_writer_metadata_i8(w, k(c"i8"), NUL, -100, &mut e),
                tpack_writer_metadata_u16(w, k(c"u16"), NUL, 60000, &mut e),
                tpack_writer_metadata_i16(w, k(c"i16"), NUL, -30000, &mut e),
                tpack_writer_metadata_u32(w, k(c"u32"), NUL, 4_000_000_000, &mut e),
                tpack_writer_metadata_i32(w, k(c"i32"), NUL, -2_000_000_000, &mut e),
                tpack_writer_metadata_u64(w, "u64 and more".as_ptr().cast(), 3, u64::MAX, &mut e),
                tpack_writer_metadata_i64(w, k(c"i64"), NUL, i64::MIN, &mut e),
                tpack_writer_metadata_f32(w, k(c"f32"), NUL, 1.5, &mut e),
                tpack_writer_metadata_f64(w, k(c"f64"), NUL, -0.25, &mut e),
                tpack_writer_metadata_bool(w, k(c"bool"), NUL, true, &mut e),
                tpack_writer_metadata_string(w, k(c"s"), NUL, k(c"mlp"), NUL, &mut e),
                tpack_writer_metadata_string(w, k(c"s.empty"), NUL, std::ptr::null(), 0, &mut e),
                tpack_writer_metadata_bytes(w, k(c"b"), NUL, [0u8, 255].as_ptr(), 2, &mut e),
                tpack_writer_metadata_bytes(w, k(c"b.empty"), NUL, std::ptr::null(), 0, &mut e),
                tpack_writer_metadata_u8_array(w, k(c"a.u8"), NUL, [1u8, 250].as_ptr(), 2, &mut e),
                tpack_writer_metadata_i8_array(w, k(c"a.i8"), NUL, [-1i8, 7].as_ptr(), 2, &mut e),
                tpack_writer_metadata_u16_array(w, k(c"a.u16"), NUL, [1u16, 0x1234].as_ptr(), 2, &mut e),
                tpack_writer_metadata_i16_array(w, k(c"a.i16"), NUL, [-300i16].as_ptr(), 1, &mut e),
                tpack_writer_metadata_u32_array(w, k(c"a.u32"), NUL, [0x1234_5678u32].as_ptr(), 1, &mut e),
                tpack_writer_metadata_i32_array(w, k(c"a.i32"), NUL, [-7i32, 9].as_ptr(), 2, &mut e),
                tpack_writer_metadata_u64_array(w, k(c"a.u64"), NUL, [u64::MAX, 3].as_ptr(), 2, &mut e),
                tpack_writer_metadata_i64_array(w, k(c"a.i64"), NUL, [i64::MIN].as_ptr(), 1, &mut e),
                tpack_writer_metadata_f32_array(w, k(c"a.f32"), NUL, [0.5f32, -2.0].as_ptr(), 2, &mut e),
                tpack_writer_metadata_f64_array(w, k(c"a.f64"), NUL, [1.0f64 / 3.0].as_ptr(), 1, &mut e),
                tpack_writer_metadata_bool_array(w, k(c"a.bool"), NUL, [true, false].as_ptr(), 2, &mut e),
                tpack_writer_metadata_string_array(w, k(c"a.str"), NUL, names.as_ptr(), 3, &mut e),
                tpack_writer_metadata_f32_array(w, k(c"a.empty"), NUL, std::ptr::null(), 0, &mut e),
                tpack_writer_metadata_string_array(w, k(c"a.nostr"), NUL, std::ptr::null(), 0, &mut e),
            ] {
                assert_eq!(r, OK, "{e:?}");
            }
        }
    });
    let c = tpack::Container::parse(&bytes).expect("parse");
    let m = c.metadata();
    let get = |k: &str| m.get(k).unwrap_or_else(|| panic!("{k}"));
    assert_eq!(get("u8"), V::U8(200));
    assert_eq!(get("i8"), V::I8(-100));
    assert_eq!(get("u16"), V::U16(60000));
    assert_eq!(get("i16"), V::I16(-30000));
    assert_eq!(get("u32"), V::U32(4_000_000_000));
    assert_eq!(get("i32"), V::I32(-2_000_000_000));
    assert_eq!(get("u64"), V::U64(u64::MAX));
    assert_eq!(get("i64"), V::I64(i64::MIN));
    assert_eq!(get("f32"), V::F32(1.5));
    assert_eq!(get("f64"), V::F64(-0.25));
    assert_eq!(get("bool"), V::Bool(true));
    assert_eq!(get("s"), V::String("mlp"));
    assert_eq!(get("s.empty"), V::String(""));
    assert_eq!(get("b"), V::Bytes(&[0, 255]));
    assert_eq!(get("b.empty"), V::Bytes(&[]));
    assert_eq!(get("a.u8"), V::U8Array(&[1, 250]));
    assert_eq!(get("a.i8"), V::I8Array(&[-1, 7]));
    // Native numbers are stored little-endian whatever the host (this test runs on s390x under Miri too).
    use tpack::zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
    assert_eq!(get("a.u16"), V::U16Array(&[U16::new(1), U16::new(0x1234)]));
    assert_eq!(get("a.i16"), V::I16Array(&[I16::new(-300)]));
    assert_eq!(get("a.u32"), V::U32Array(&[U32::new(0x1234_5678)]));
    assert_eq!(get("a.i32"), V::I32Array(&[I32::new(-7), I32::new(9)]));
    assert_eq!(get("a.u64"), V::U64Array(&[U64::new(u64::MAX), U64::new(3)]));
    assert_eq!(get("a.i64"), V::I64Array(&[I64::new(i64::MIN)]));
    assert_eq!(get("a.f32"), V::F32Array(&[F32::new(0.5), F32::new(-2.0)]));
    assert_eq!(get("a.f64"), V::F64Array(&[F64::new(1.0 / 3.0)]));
    assert_eq!(get("a.bool"), V::BoolArray(&[true, false]));
    assert_eq!(get("a.empty"), V::F32Array(&[]));
    let V::StringArray(items) = get("a.str") else { panic!("a.str") };
    assert_eq!(items.collect::<Vec<_>>(), ["up", "", "d\u{f6}wn"]);
    let V::StringArray(mut none) = get("a.nostr") else { panic!("a.nostr") };
    assert_eq!(none.next(), None);
}

/// `path` (from the repository root), parsed into a C handle: the bytes and the handle.
fn parsed(bytes: &[u8]) -> Box<MaybeUninit<tpack_container>> {
    let mut c = Box::<tpack_container>::new_uninit();
    let mut e = error();
    // SAFETY: readable bytes that outlive the handle (the caller keeps them), writable storage.
    assert_eq!(
        unsafe { tpack_container_parse(bytes.as_ptr(), bytes.len(), c.as_mut_ptr(), &mut e) },
        OK,
        "{e:?}"
    );
    c
}

fn repo_file(path: &str) -> Vec<u8> {
    std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).expect(path)
}

/// The issue's check: every metadata value of the tiny MLP container (and of the vectors holding every type,
/// `array[]` included) copied into a new container with one call per value reads back equal.
#[test]
fn a_containers_metadata_is_copied_one_call_per_value() {
    for path in [
        "embedded/tiny-mlp/tiny-mlp.tpack",
        "spec/vectors/valid/format-1-1.tpack",
        "spec/vectors/valid/metadata.tpack",
        "spec/vectors/valid/array-depth-8.tpack",
    ] {
        let source = repo_file(path);
        let from = parsed(&source);
        let mut count = 0;
        // SAFETY: a filled handle, a writable count.
        assert_eq!(unsafe { tpack_metadata_count(from.as_ptr(), &mut count) }, OK);
        assert!(count > 0, "{path}");
        let copy = written(|w| {
            for i in 0..count {
                let mut key = tpack_str { data: std::ptr::null(), len: 0 };
                let mut value = MaybeUninit::<tpack_meta_value>::uninit();
                let mut e = error();
                // SAFETY: a filled container and writer; writable out-parameters; the source bytes live on.
                unsafe {
                    assert_eq!(tpack_metadata_at(from.as_ptr(), i, &mut key, value.as_mut_ptr()), OK);
                    let r = tpack_writer_metadata_copy(w, key.data, key.len, value.as_ptr(), &mut e);
                    assert_eq!(r, OK, "{path} {i}: {e:?}");
                }
            }
        });
        let original = tpack::Container::parse(&source).expect("parse");
        let copied = tpack::Container::parse(&copy).expect("parse the copy");
        let all = |c: &tpack::Container<'_>| {
            let m = c.metadata();
            (0..m.len()).map(|i| m.at(i).map(|(k, v)| format!("{k}={v:?}"))).collect::<Vec<_>>()
        };
        assert_eq!(all(&copied), all(&original), "{path}");
    }
}

#[test]
fn a_copy_of_a_newer_type_breaks_r46() {
    let source = repo_file("spec/vectors/valid/newer-minor.tpack");
    let original = tpack::Container::parse(&source).expect("parse");
    let Some(index) = (0..original.metadata().len())
        .find(|&i| matches!(original.metadata().at(i), Some((_, tpack::MetaValue::Unknown { .. }))))
    else {
        panic!("newer-minor.tpack holds a value of an unknown type")
    };
    let from = parsed(&source);
    let mut out: Vec<u8> = Vec::new();
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let mut key = tpack_str { data: std::ptr::null(), len: 0 };
    let mut value = MaybeUninit::<tpack_meta_value>::uninit();
    let mut e = error();
    // SAFETY: as above.
    unsafe {
        assert_eq!(tpack_metadata_at(from.as_ptr(), index, &mut key, value.as_mut_ptr()), OK);
        let r = tpack_writer_metadata_copy(w.ptr(), key.data, key.len, value.as_ptr(), &mut e);
        assert_eq!((r, e.rule), (tpack_result::TPACK_RESULT_INVALID_CONTAINER, 46));
        let mut code = 0u8;
        assert_eq!(tpack_meta_value_type(value.as_ptr(), &mut code), OK);
        assert_eq!(e.value, u64::from(code));
        assert_eq!(tpack_writer_metadata_u8(w.ptr(), c"next".as_ptr(), NUL, 1, &mut e), OK, "not poisoned");
    }
}

#[test]
fn nul_terminated_names_and_keys_are_read_to_their_nul() {
    let bytes = written(|w| {
        let mut e = error();
        let mut d = decl("", 14, &[1]);
        d.name = tpack_str { data: c"weights".as_ptr(), len: NUL };
        // SAFETY: a filled writer, a NUL-terminated name and key, a writable error.
        unsafe {
            assert_eq!(tpack_writer_declare(w, &d, &mut e), OK);
            assert_eq!(tpack_writer_metadata_u32(w, c"layers".as_ptr(), NUL, 3, &mut e), OK);
            assert_eq!(tpack_writer_write(w, std::ptr::null(), 0, &mut e), OK, "an empty chunk as NULL, 0");
            assert_eq!(tpack_writer_write(w, [5u8].as_ptr(), 1, &mut e), OK);
            assert_eq!(tpack_writer_end_entry(w, &mut e), OK);
        }
    });
    let c = tpack::Container::parse(&bytes).expect("parse");
    assert_eq!(c.get("weights").expect("weights").payload(), [5]);
    assert_eq!(c.metadata().get("layers"), Some(tpack::MetaValue::U32(3)));
    // The readers take them too.
    let handle = parsed(&bytes);
    let mut entry = MaybeUninit::<tpack_entry>::uninit();
    let mut value = MaybeUninit::<tpack_meta_value>::uninit();
    // SAFETY: a filled handle, NUL-terminated strings, writable out-parameters.
    unsafe {
        assert_eq!(tpack_container_find(handle.as_ptr(), c"weights".as_ptr(), NUL, entry.as_mut_ptr()), OK);
        assert_eq!(tpack_metadata_get(handle.as_ptr(), c"layers".as_ptr(), NUL, value.as_mut_ptr()), OK);
        assert_eq!(
            tpack_container_find(handle.as_ptr(), std::ptr::null(), NUL, entry.as_mut_ptr()),
            tpack_result::TPACK_RESULT_NULL_ARGUMENT
        );
    }
}

#[test]
fn typed_values_a_container_cannot_hold_name_their_rule() {
    let mut out: Vec<u8> = Vec::new();
    let mut w = writer(Some(into_vec), (&raw mut out).cast());
    let w = w.ptr();
    let mut e = error();
    let bad_bools = [1u8, 2];
    let bad_items = [c"ok".as_ptr(), c"\xe2\x82".as_ptr()];
    let null_item = [c"ok".as_ptr(), std::ptr::null()];
    // SAFETY: a filled writer; readable arguments (a byte buffer read as `bool`s, as C may pass it).
    unsafe {
        let r = tpack_writer_metadata_bool_array(w, c"b".as_ptr(), NUL, bad_bools.as_ptr().cast(), 2, &mut e);
        assert_eq!((r, e.rule, e.record), (tpack_result::TPACK_RESULT_INVALID_CONTAINER, 48, 0));
        let r = tpack_writer_metadata_string_array(w, c"s".as_ptr(), NUL, bad_items.as_ptr(), 2, &mut e);
        assert_eq!((r, e.rule), (tpack_result::TPACK_RESULT_INVALID_CONTAINER, 49));
        let r = tpack_writer_metadata_string(w, c"s".as_ptr(), NUL, c"\xc3".as_ptr(), NUL, &mut e);
        assert_eq!((r, e.rule), (tpack_result::TPACK_RESULT_INVALID_CONTAINER, 49));
        let r = tpack_writer_metadata_u8(w, c"\xff".as_ptr(), NUL, 1, &mut e);
        assert_eq!((r, e.rule), (tpack_result::TPACK_RESULT_INVALID_CONTAINER, 43));
        let r = tpack_writer_metadata_string_array(w, c"s".as_ptr(), NUL, null_item.as_ptr(), 2, &mut e);
        assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);
        let r = tpack_writer_metadata_f32_array(w, c"f".as_ptr(), NUL, std::ptr::null(), 1, &mut e);
        assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);
        let words = [0u32; 2];
        let misaligned = words.as_ptr().cast::<u8>().wrapping_add(1).cast::<u32>();
        let r = tpack_writer_metadata_u32_array(w, c"u".as_ptr(), NUL, misaligned, 1, &mut e);
        assert_eq!(r, tpack_result::TPACK_RESULT_MISALIGNED_STORAGE);
        // None of these reached the writer: a signed-attribute key does, and is refused there.
        assert_eq!(tpack_writer_metadata_u8(w, c"ok".as_ptr(), NUL, 1, &mut e), OK);
        let r = tpack_writer_metadata_u8(w, c"tpack.sig.alg".as_ptr(), NUL, 1, &mut e);
        assert_eq!(r, tpack_result::TPACK_RESULT_INVALID_CONTAINER);
    }
}

/// Reads `n` elements from `first` of the array under `key` of `c` as type `out_type` into `T`s.
fn array_read<T: Copy + Default>(
    c: &MaybeUninit<tpack_container>,
    key: &std::ffi::CStr,
    first: usize,
    n: usize,
    out_type: u8,
) -> Result<Vec<T>, tpack_result> {
    let mut value = MaybeUninit::<tpack_meta_value>::uninit();
    let mut out = vec![T::default(); n];
    let mut written = usize::MAX;
    // SAFETY: a filled handle, a NUL-terminated key, `n` writable `T`s (the caller matches `out_type`).
    unsafe {
        assert_eq!(tpack_metadata_get(c.as_ptr(), key.as_ptr(), NUL, value.as_mut_ptr()), OK);
        let r =
            tpack_meta_array_read(value.as_ptr(), first, n, out_type, out.as_mut_ptr().cast(), &mut written);
        if r != OK {
            assert_eq!(written, usize::MAX, "nothing written on failure");
            return Err(r);
        }
    }
    out.truncate(written);
    Ok(out)
}

#[test]
fn the_generic_array_reader_converts_only_what_keeps_every_value() {
    let bytes = written(|w| {
        let mut e = error();
        // SAFETY: a filled writer, NUL-terminated keys, readable arrays.
        unsafe {
            assert_eq!(
                tpack_writer_metadata_u8_array(w, c"u8".as_ptr(), NUL, [1u8, 250].as_ptr(), 2, &mut e),
                OK
            );
            assert_eq!(
                tpack_writer_metadata_i16_array(w, c"i16".as_ptr(), NUL, [-300i16, 7].as_ptr(), 2, &mut e),
                OK
            );
            assert_eq!(
                tpack_writer_metadata_u32_array(w, c"u32".as_ptr(), NUL, [1u32 << 31].as_ptr(), 1, &mut e),
                OK
            );
            assert_eq!(
                tpack_writer_metadata_f32_array(w, c"f32".as_ptr(), NUL, [0.1f32].as_ptr(), 1, &mut e),
                OK
            );
            assert_eq!(
                tpack_writer_metadata_bool_array(w, c"bool".as_ptr(), NUL, [true, false].as_ptr(), 2, &mut e),
                OK
            );
            assert_eq!(tpack_writer_metadata_string(w, c"s".as_ptr(), NUL, c"x".as_ptr(), NUL, &mut e), OK);
        }
    });
    let c = parsed(&bytes);
    assert_eq!(array_read::<u8>(&c, c"u8", 0, 2, TPACK_META_U8), Ok(vec![1, 250]));
    assert_eq!(array_read::<u64>(&c, c"u8", 0, 2, TPACK_META_U64), Ok(vec![1, 250]));
    assert_eq!(array_read::<i16>(&c, c"u8", 1, 5, TPACK_META_I16), Ok(vec![250]));
    assert_eq!(
        array_read::<i8>(&c, c"u8", 0, 2, TPACK_META_I8).err(),
        Some(tpack_result::TPACK_RESULT_WRONG_TYPE)
    );
    assert_eq!(array_read::<f32>(&c, c"i16", 0, 2, TPACK_META_F32), Ok(vec![-300.0, 7.0]));
    assert_eq!(array_read::<i64>(&c, c"i16", 0, 2, TPACK_META_I64), Ok(vec![-300, 7]));
    assert_eq!(
        array_read::<u16>(&c, c"i16", 0, 2, TPACK_META_U16).err(),
        Some(tpack_result::TPACK_RESULT_WRONG_TYPE)
    );
    assert_eq!(array_read::<f64>(&c, c"u32", 0, 1, TPACK_META_F64), Ok(vec![2_147_483_648.0]));
    assert_eq!(
        array_read::<f32>(&c, c"u32", 0, 1, TPACK_META_F32).err(),
        Some(tpack_result::TPACK_RESULT_WRONG_TYPE)
    );
    assert_eq!(
        array_read::<i32>(&c, c"u32", 0, 1, TPACK_META_I32).err(),
        Some(tpack_result::TPACK_RESULT_WRONG_TYPE)
    );
    assert_eq!(array_read::<f64>(&c, c"f32", 0, 1, TPACK_META_F64), Ok(vec![f64::from(0.1f32)]));
    assert_eq!(
        array_read::<u32>(&c, c"f32", 0, 1, TPACK_META_U32).err(),
        Some(tpack_result::TPACK_RESULT_WRONG_TYPE)
    );
    assert_eq!(array_read::<u8>(&c, c"bool", 0, 2, TPACK_META_U8), Ok(vec![1, 0]));
    assert_eq!(array_read::<bool>(&c, c"bool", 0, 2, TPACK_META_BOOL), Ok(vec![true, false]));
    assert_eq!(
        array_read::<bool>(&c, c"u8", 0, 2, TPACK_META_BOOL).err(),
        Some(tpack_result::TPACK_RESULT_WRONG_TYPE)
    );
    assert_eq!(
        array_read::<u8>(&c, c"s", 0, 1, TPACK_META_U8).err(),
        Some(tpack_result::TPACK_RESULT_WRONG_TYPE)
    );
    assert_eq!(array_read::<u8>(&c, c"u8", 2, 1, TPACK_META_U8), Ok(vec![]));
    assert_eq!(array_read::<u8>(&c, c"u8", 3, 1, TPACK_META_U8), Err(tpack_result::TPACK_RESULT_NOT_FOUND));
    assert_eq!(
        array_read::<u8>(&c, c"u8", 0, 1, TPACK_META_STRING),
        Err(tpack_result::TPACK_RESULT_BAD_ARGUMENT)
    );
}

#[test]
fn the_seekable_writer_gives_its_length_after_finish() {
    let mut file = File { bytes: b"PREAMBLE".to_vec(), position: 8 };
    let mut w = seek_writer(&mut file);
    assert_eq!(write_sample(w.ptr(), true), OK);
    let mut length = 0u64;
    // SAFETY: a finished writer's storage, a writable length.
    assert_eq!(unsafe { tpack_writer_length(w.ptr(), &mut length) }, OK);
    assert_eq!(length, (file.bytes.len() - 8) as u64, "the container, not the preamble");
    tpack::Container::parse(&file.bytes[8..]).expect("parse");
}

/// A value from a push decoder's prefix is copied the same way: metadata received over a stream is written
/// on as it came, before any payload has arrived.
#[test]
fn a_decoders_prefix_metadata_is_copied_one_call_per_value() {
    let source = repo_file("embedded/tiny-mlp/tiny-mlp.tpack");
    let mut decoder = Box::<tpack_decoder>::new_uninit();
    let mut buffer = vec![0u8; 1 << 16];
    let mut rest = &source[..];
    // One raw pointer for the decoder's whole life, as for any handle the test keeps in a `Box`.
    let d = decoder.as_mut_ptr();
    // SAFETY: writable storage and buffer, which outlive the decoder's uses here; the chunk is readable.
    unsafe {
        assert_eq!(tpack_decoder_init(d, buffer.as_mut_ptr(), buffer.len(), std::ptr::null_mut()), OK);
        loop {
            let (mut used, mut event, mut e) = (0usize, MaybeUninit::<tpack_event>::uninit(), error());
            let r = tpack_decoder_decode(d, rest.as_ptr(), rest.len(), &mut used, event.as_mut_ptr(), &mut e);
            assert_eq!(r, OK, "{e:?}");
            rest = &rest[used..];
            if event.assume_init().kind == tpack_event_kind::TPACK_EVENT_PREFIX {
                break;
            }
        }
    }
    let mut count = 0;
    // SAFETY: a decoder past its prefix event, a writable count.
    assert_eq!(unsafe { tpack_decoder_prefix_metadata_count(d, &mut count) }, OK);
    let copy = written(|w| {
        for i in 0..count {
            let mut key = tpack_str { data: std::ptr::null(), len: 0 };
            let mut value = MaybeUninit::<tpack_meta_value>::uninit();
            let mut e = error();
            // SAFETY: the decoder's buffer holds the prefix the key and value borrow; writable out-parameters.
            unsafe {
                assert_eq!(tpack_decoder_prefix_metadata_at(d, i, &mut key, value.as_mut_ptr()), OK);
                assert_eq!(
                    tpack_writer_metadata_copy(w, key.data, key.len, value.as_ptr(), &mut e),
                    OK,
                    "{e:?}"
                );
            }
        }
    });
    let original = tpack::Container::parse(&source).expect("parse");
    let copied = tpack::Container::parse(&copy).expect("parse the copy");
    let all = |c: &tpack::Container<'_>| {
        let m = c.metadata();
        (0..m.len()).map(|i| m.at(i).map(|(k, v)| format!("{k}={v:?}"))).collect::<Vec<_>>()
    };
    assert_eq!(all(&copied), all(&original));
    assert!(count > 0);
}

/// The `out_type` codes `tpack_meta_array_read` takes are exactly the eleven its doc lists (the scalar number
/// codes and `bool`: 1–4, 11–17); every other code is `TPACK_RESULT_BAD_ARGUMENT`, and a listed one is at
/// worst `TPACK_RESULT_WRONG_TYPE` (a conversion that could lose a value).
#[test]
fn the_generic_array_reader_takes_exactly_the_listed_out_type_codes() {
    let bytes = written(|w| {
        // SAFETY: a filled writer, a NUL-terminated key, a readable array.
        let r = unsafe {
            tpack_writer_metadata_u8_array(w, c"u8".as_ptr(), NUL, [1u8, 2].as_ptr(), 2, std::ptr::null_mut())
        };
        assert_eq!(r, OK);
    });
    let c = parsed(&bytes);
    let taken: Vec<u8> = (0..=u8::MAX)
        .filter(|&code| {
            array_read::<u64>(&c, c"u8", 0, 0, code) != Err(tpack_result::TPACK_RESULT_BAD_ARGUMENT)
        })
        .collect();
    assert_eq!(taken, [1, 2, 3, 4, 11, 12, 13, 14, 15, 16, 17]);
}
