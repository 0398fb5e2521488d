//! Errors inside nested containers through the `extern "C"` functions: a payload damaged two containers down
//! (R50), or a padding byte set there (R37), gives the same `tpack_error` from `tpack_container_verify` and
//! from the push decoder — the nested container's own entry and offset, `depth` 2, `outer_entry` the
//! outermost entry that holds it — and `tpack_error_message` says where. Regression: `depth` was 0 and there
//! was no outer entry.

use std::ffi::CStr;
use std::mem::MaybeUninit;

use tpack::write::{EntryDecl, StreamWriter, VecBookkeeping};
use tpack::{Container, Dtype};
use tpack_capi::*;

const OK: tpack_result = tpack_result::TPACK_RESULT_OK;
const INVALID: tpack_result = tpack_result::TPACK_RESULT_INVALID_CONTAINER;

fn written(entries: &[(&str, Dtype, &[u8])]) -> Vec<u8> {
    let mut w = StreamWriter::new(Vec::new(), VecBookkeeping);
    let shapes: Vec<[u64; 1]> = entries.iter().map(|(_, _, p)| [p.len() as u64]).collect();
    for ((name, dtype, _), shape) in entries.iter().zip(&shapes) {
        w.declare(EntryDecl::new(name, *dtype, shape)).unwrap();
    }
    for (_, _, payload) in entries {
        w.write_entry(payload).unwrap();
    }
    w.finish().unwrap()
}

/// Entries `a` and `b` with padding between them, damaged by `damage` (given the container and its bytes).
fn innermost(damage: fn(&Container<'_>) -> usize, set: u8) -> Vec<u8> {
    let mut bytes = written(&[("a", Dtype::U8, &[1, 2, 3, 4]), ("b", Dtype::U8, &[5, 6, 7, 8])]);
    let at = damage(&Container::parse(&bytes).unwrap());
    bytes[at] ^= set;
    bytes
}

fn two_down(inner: &[u8]) -> Vec<u8> {
    let middle = written(&[("x", Dtype::U8, &[9]), ("deep", Dtype::CONTAINER, inner)]);
    written(&[("p", Dtype::U8, &[0]), ("q", Dtype::U8, &[0]), ("mid", Dtype::CONTAINER, &middle)])
}

fn blank() -> tpack_error {
    // SAFETY: every field of a `tpack_error` is an integer.
    unsafe { MaybeUninit::zeroed().assume_init() }
}

/// Copied into memory aligned for the payloads (64 bytes), as a flash-mapped image is.
fn aligned(bytes: &[u8]) -> Vec<u64> {
    let mut words = vec![0u64; bytes.len().div_ceil(8) + 8];
    let start = words.as_ptr().align_offset(64);
    // SAFETY: `words` has room for `bytes` after `start` words.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), words.as_mut_ptr().add(start).cast::<u8>(), bytes.len())
    };
    words.drain(..start);
    words
}

fn verified(bytes: &[u8]) -> (tpack_result, tpack_error) {
    let copy = aligned(bytes);
    let mut c = MaybeUninit::<tpack_container>::uninit();
    let mut e = blank();
    // SAFETY: readable bytes that outlive the container's uses; writable out-parameters.
    unsafe {
        let r = tpack_container_parse(copy.as_ptr().cast(), bytes.len(), c.as_mut_ptr(), &mut e);
        if r != OK {
            return (r, e);
        }
        (tpack_container_verify(c.as_ptr(), &mut e), e)
    }
}

fn decoded(bytes: &[u8], chunk: usize) -> (tpack_result, tpack_error) {
    let mut storage = Box::new(MaybeUninit::<tpack_decoder>::uninit());
    let mut buffer = vec![0u8; 1 << 14];
    let mut e = blank();
    let d = storage.as_mut_ptr();
    // SAFETY: writable storage and buffer that outlive the decoder; readable chunks.
    unsafe {
        assert_eq!(tpack_decoder_init(d, buffer.as_mut_ptr(), buffer.len(), &mut e), OK);
        for piece in bytes.chunks(chunk) {
            let mut rest = piece;
            loop {
                let (mut used, mut event) = (0usize, MaybeUninit::<tpack_event>::uninit());
                let r =
                    tpack_decoder_decode(d, rest.as_ptr(), rest.len(), &mut used, event.as_mut_ptr(), &mut e);
                if r != OK {
                    return (r, e);
                }
                rest = &rest[used..];
                if event.assume_init().kind == tpack_event_kind::TPACK_EVENT_NONE {
                    break;
                }
            }
        }
        (tpack_decoder_finish(d, &mut e), e)
    }
}

fn message(e: &tpack_error) -> String {
    let mut buf = [0 as std::ffi::c_char; 512];
    // SAFETY: a readable error; a writable buffer of that length.
    assert_eq!(unsafe { tpack_error_message(e, buf.as_mut_ptr(), buf.len()) }, OK);
    // SAFETY: NUL-terminated by the call.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_owned()
}

fn check(inner: &[u8], rule: u32) {
    let (r, own) = verified(inner);
    assert_eq!((r, own.rule, own.depth, own.outer_entry), (INVALID, rule, 0, TPACK_NONE));
    let bytes = two_down(inner);
    let (r, e) = verified(&bytes);
    assert_eq!(r, INVALID);
    assert_eq!(e, tpack_error { depth: 2, outer_entry: 2, ..own });
    assert!(message(&e).ends_with(", in the container at depth 2 inside entry 2"), "{}", message(&e));
    // Under Miri (slow), byte-at-a-time feeding is left to the native run: a few thousand calls there.
    let chunks: &[usize] = if cfg!(miri) { &[5, bytes.len()] } else { &[1, 5, 64, bytes.len()] };
    for &chunk in chunks {
        assert_eq!(decoded(&bytes, chunk), (INVALID, e), "chunks of {chunk}");
    }
}

#[test]
fn a_payload_damaged_two_levels_down_gives_depth_and_outer_entry() {
    check(&innermost(|c| c.entry(0).unwrap().offset() as usize + 2, 0x40), 50);
}

#[test]
fn padding_damaged_two_levels_down_gives_depth_and_outer_entry() {
    check(&innermost(|c| c.entry(1).unwrap().offset() as usize - 1, 1), 37);
}

#[test]
fn the_one_pass_writer_says_it_refuses_an_open_ended_entry() {
    let e = tpack_error { result: 14, entry: 3, ..blank() };
    let e = tpack_error { rule: 0, record: TPACK_NONE, position: TPACK_NONE, section: TPACK_NONE, ..e };
    let e = tpack_error { outer_entry: TPACK_NONE, offset: TPACK_NONE64, value: TPACK_NONE64, ..e };
    let text = message(&e);
    assert!(text.contains("entry 3 is open-ended") && text.contains("seekable writer"), "{text}");
    // A misuse with a number is another one: the result's own text.
    let text = message(&tpack_error { value: 16, ..e });
    assert!(!text.contains("open-ended"), "{text}");
}
