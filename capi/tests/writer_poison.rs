//! Which writer failures poison the writer, as `tpack_writer`'s doc lists them: a failure found before the
//! writer sees the call (an argument: `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_BAD_ARGUMENT`,
//! `TPACK_RESULT_MISALIGNED_STORAGE`; R18 and R23 of a declaration; R43 and R46–R49 of a metadata value)
//! leaves it as it was, and every failure of the writer itself poisons it (R17, R42, `TPACK_RESULT_WRITER_FULL`,
//! `TPACK_RESULT_WRITER_MISUSE`: a declaration after the first payload byte, too many payload bytes). A new
//! C user found the late metadata call's poisoning undocumented (`repro_misuse_poisons.c`).

use std::ffi::c_void;
use std::mem::MaybeUninit;

use tpack_capi::*;

const OK: tpack_result = tpack_result::TPACK_RESULT_OK;
const NUL: usize = TPACK_NUL_TERMINATED;
const POISONED: tpack_result = tpack_result::TPACK_RESULT_WRITER_POISONED;

unsafe extern "C" fn discard(_: *mut c_void, _: *const u8, _: usize) -> i32 {
    0
}

/// A one-pass writer for `entries` entries (and as many metadata records) and 1,024 bytes of names (and of
/// metadata), with its bookkeeping block.
struct Writer {
    handle: Box<MaybeUninit<tpack_writer>>,
    _bookkeeping: Vec<u8>,
}

impl Writer {
    fn new(entries: usize) -> Self {
        let mut size = 0;
        // SAFETY: a writable `size_t`.
        assert_eq!(unsafe { tpack_writer_bookkeeping_size(entries, 1024, &mut size) }, OK);
        let mut books = vec![0u8; size];
        let mut handle = Box::<tpack_writer>::new_uninit();
        // SAFETY: writable storage and block, which outlive the writer; the callback ignores `user`.
        let r = unsafe {
            tpack_writer_init(
                handle.as_mut_ptr(),
                books.as_mut_ptr(),
                books.len(),
                entries,
                1024,
                Some(discard),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(r, OK);
        Writer { handle, _bookkeeping: books }
    }

    fn ptr(&mut self) -> *mut tpack_writer {
        self.handle.as_mut_ptr()
    }

    /// A valid declaration: what the writer answers to it, `TPACK_RESULT_OK` or `TPACK_RESULT_WRITER_POISONED`.
    fn probe_declaring(&mut self) -> tpack_result {
        // SAFETY: a filled writer; a NUL-terminated key.
        unsafe { tpack_writer_metadata_u8(self.ptr(), c"probe".as_ptr(), NUL, 1, std::ptr::null_mut()) }
    }
}

/// A call on a writer, with the error it may write.
type Call<'a> = &'a dyn Fn(*mut tpack_writer, &mut tpack_error) -> tpack_result;

fn decl<'a>(name: &'a [u8], dims: &'a [u64]) -> tpack_entry_decl {
    tpack_entry_decl {
        name: tpack_str { data: name.as_ptr().cast(), len: name.len() },
        dims: dims.as_ptr(),
        rank: dims.len(),
        target: 0,
        alignment: 0,
        dtype: TPACK_DTYPE_U8,
        has_target: false,
        open_ended: false,
    }
}

/// Runs `call` on a fresh writer (declaring) and gives its result, its rule and what the writer answers next.
fn declaring(
    entries: usize,
    call: impl FnOnce(*mut tpack_writer, &mut tpack_error) -> tpack_result,
) -> (tpack_result, u32, tpack_result) {
    let mut w = Writer::new(entries);
    // SAFETY: all-zero bits are a valid `tpack_error`.
    let mut e: tpack_error = unsafe { std::mem::zeroed() };
    let r = call(w.ptr(), &mut e);
    (r, e.rule, w.probe_declaring())
}

#[test]
fn argument_errors_and_the_value_rules_found_first_leave_the_writer_as_it_was() {
    let invalid = tpack_result::TPACK_RESULT_INVALID_CONTAINER;
    let f32s = [0u32; 3];
    // SAFETY (every call): a filled writer, readable arguments as each says, a writable error.
    let cases: [(&str, tpack_result, u32, Call); 10] = [
        ("R43 key", invalid, 43, &|w, e| unsafe {
            tpack_writer_metadata_u8(w, b"\xff".as_ptr().cast(), 1, 1, e)
        }),
        ("R46 type 99", invalid, 46, &|w, e| unsafe {
            tpack_writer_metadata(w, c"k".as_ptr(), NUL, 99, [0u8].as_ptr(), 1, e)
        }),
        ("R47 width", invalid, 47, &|w, e| unsafe {
            tpack_writer_metadata(w, c"k".as_ptr(), NUL, 1, [0u8; 3].as_ptr(), 3, e)
        }),
        ("R48 bool 2", invalid, 48, &|w, e| unsafe {
            tpack_writer_metadata(w, c"k".as_ptr(), NUL, 4, [2u8].as_ptr(), 1, e)
        }),
        ("R49 string", invalid, 49, &|w, e| unsafe {
            tpack_writer_metadata_string(w, c"k".as_ptr(), NUL, b"\xff".as_ptr().cast(), 1, e)
        }),
        ("BAD_ARGUMENT", tpack_result::TPACK_RESULT_BAD_ARGUMENT, 0, &|w, e| unsafe {
            tpack_writer_metadata_bytes(w, c"k".as_ptr(), NUL, [0u8].as_ptr(), isize::MAX as usize + 1, e)
        }),
        ("NULL_ARGUMENT", tpack_result::TPACK_RESULT_NULL_ARGUMENT, 0, &|w, e| unsafe {
            tpack_writer_metadata_bytes(w, c"k".as_ptr(), NUL, std::ptr::null(), 3, e)
        }),
        ("MISALIGNED_STORAGE", tpack_result::TPACK_RESULT_MISALIGNED_STORAGE, 0, &|w, e| unsafe {
            let odd = f32s.as_ptr().cast::<u8>().add(1).cast::<f32>();
            tpack_writer_metadata_f32_array(w, c"k".as_ptr(), NUL, odd, 2, e)
        }),
        ("R18 name", invalid, 18, &|w, e| unsafe { tpack_writer_declare(w, &decl(b"\xff", &[1]), e) }),
        ("R23 rank 9", invalid, 23, &|w, e| unsafe { tpack_writer_declare(w, &decl(b"w", &[1; 9]), e) }),
    ];
    for (what, result, rule, call) in cases {
        assert_eq!(declaring(4, call), (result, rule, OK), "{what}: refused, and the writer goes on");
    }
}

#[test]
fn failures_of_the_writer_itself_poison_it() {
    let invalid = tpack_result::TPACK_RESULT_INVALID_CONTAINER;
    // SAFETY (every call): a filled writer, readable arguments, a writable error.
    let r17 = declaring(4, |w, e| unsafe { tpack_writer_declare(w, &decl(b"", &[1]), e) });
    assert_eq!(r17, (invalid, 17, POISONED), "R17");
    let r42 = declaring(4, |w, e| unsafe { tpack_writer_metadata_u8(w, c"".as_ptr(), NUL, 1, e) });
    assert_eq!(r42, (invalid, 42, POISONED), "R42");
    // One metadata record fits: the second is refused, and the writer is poisoned.
    let full = declaring(1, |w, e| unsafe {
        assert_eq!(tpack_writer_metadata_u8(w, c"a".as_ptr(), NUL, 1, e), OK);
        tpack_writer_metadata_u8(w, c"b".as_ptr(), NUL, 1, e)
    });
    assert_eq!(full, (tpack_result::TPACK_RESULT_WRITER_FULL, 0, POISONED), "WRITER_FULL");

    // After the first payload byte: a late metadata value or declaration (the C user's repro), too many bytes.
    let misuse = tpack_result::TPACK_RESULT_WRITER_MISUSE;
    let late: [(&str, Call); 3] = [
        ("late metadata", &|w, e| unsafe { tpack_writer_metadata_u8(w, c"late".as_ptr(), NUL, 1, e) }),
        ("late declaration", &|w, e| unsafe { tpack_writer_declare(w, &decl(b"v", &[1]), e) }),
        ("too many bytes", &|w, e| unsafe { tpack_writer_write(w, [0u8; 4].as_ptr(), 4, e) }),
    ];
    for (what, call) in late {
        let mut w = Writer::new(4);
        // SAFETY: a filled writer; readable arguments; writable errors.
        unsafe {
            assert_eq!(tpack_writer_declare(w.ptr(), &decl(b"e", &[4]), std::ptr::null_mut()), OK);
            assert_eq!(tpack_writer_write(w.ptr(), [1u8].as_ptr(), 1, std::ptr::null_mut()), OK);
            let mut e: tpack_error = std::mem::zeroed();
            assert_eq!(call(w.ptr(), &mut e), misuse, "{what}");
            assert_eq!(
                tpack_writer_write(w.ptr(), [2u8; 3].as_ptr(), 3, std::ptr::null_mut()),
                POISONED,
                "{what}"
            );
        }
    }
}
