//! The push decoder's callback form, its prefix views and its saved state, through the `extern "C"`
//! functions: on every vector, a stream fed with `tpack_decoder_feed`, saved and resumed half-way into a fresh
//! handle and a copy of the buffer, gives the verdict and the payload bytes of parse + verify, and after
//! `TPACK_EVENT_PREFIX` its prefix describes the entries and metadata as the parsed container does.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::path::Path;

use tpack_capi::*;

#[path = "../../tests/support/manifest.rs"]
mod manifest;

const OK: tpack_result = tpack_result::TPACK_RESULT_OK;

fn vectors() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = manifest::read(&root);
    // Miri is slow: every 32nd vector there (each is fed at several chunkings, saved and resumed).
    let step = if cfg!(miri) { 32 } else { 1 };
    manifest::vectors(&manifest)
        .iter()
        .step_by(step)
        .map(|v| (v.file.to_string(), std::fs::read(root.join("spec/vectors").join(v.file)).expect("vector")))
        .collect()
}

/// What the callback saw.
#[derive(Default)]
struct Seen {
    payload: Vec<u8>,
    prefix: usize,
    ends: Vec<u32>,
    end: usize,
    /// Stop (return this) at the next event, once.
    stop_with: Option<i32>,
}

unsafe extern "C" fn on_event(user: *mut c_void, event: *const tpack_event) -> i32 {
    // SAFETY: `user` is the test's `Seen`; `event` is valid during the call.
    let (seen, event) = unsafe { (&mut *user.cast::<Seen>(), &*event) };
    if let Some(code) = seen.stop_with.take() {
        return code;
    }
    match event.kind {
        tpack_event_kind::TPACK_EVENT_PREFIX => seen.prefix += 1,
        tpack_event_kind::TPACK_EVENT_PAYLOAD => {
            // SAFETY: the event's bytes are the chunk's, valid during the call.
            seen.payload
                .extend_from_slice(unsafe { std::slice::from_raw_parts(event.bytes.data, event.bytes.len) })
        }
        tpack_event_kind::TPACK_EVENT_ENTRY_END => seen.ends.push(event.entry),
        tpack_event_kind::TPACK_EVENT_END => seen.end += 1,
        tpack_event_kind::TPACK_EVENT_NONE => panic!("a NONE event reached the callback"),
    }
    0
}

fn parse(bytes: &[u8]) -> Result<tpack_container, u32> {
    let mut c = MaybeUninit::<tpack_container>::uninit();
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: `bytes` outlives the container's uses; writable outputs.
    let r = unsafe { tpack_container_parse(bytes.as_ptr(), bytes.len(), c.as_mut_ptr(), e.as_mut_ptr()) };
    if r != OK {
        // SAFETY: written on failure.
        return Err(unsafe { e.assume_init() }.rule);
    }
    // SAFETY: filled on success.
    let c = unsafe { c.assume_init() };
    // SAFETY: a filled container; a writable error.
    let r = unsafe { tpack_container_verify(&c, e.as_mut_ptr()) };
    if r != OK {
        // SAFETY: written on failure.
        return Err(unsafe { e.assume_init() }.rule);
    }
    Ok(c)
}

fn str_of(s: tpack_str) -> Vec<u8> {
    // SAFETY: a `tpack_str` the API wrote points to `len` live bytes.
    unsafe { std::slice::from_raw_parts(s.data.cast::<u8>(), s.len) }.to_vec()
}

/// Feeds `chunk` with the callback; the rule of a failure (0 for a failure that is not a broken rule).
fn feed(d: *mut tpack_decoder, chunk: &[u8], seen: &mut Seen) -> Result<usize, (tpack_result, u32, u64)> {
    let mut used = usize::MAX;
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: a filled decoder; readable chunk; the callback and `seen` live across the call.
    let r = unsafe {
        tpack_decoder_feed(
            d,
            chunk.as_ptr(),
            chunk.len(),
            Some(on_event),
            (seen as *mut Seen).cast(),
            &mut used,
            e.as_mut_ptr(),
        )
    };
    if r == OK {
        assert_eq!(used, chunk.len(), "a successful feed consumes the whole chunk");
        Ok(used)
    } else {
        // SAFETY: written on failure.
        let e = unsafe { e.assume_init() };
        Err((r, e.rule, e.value))
    }
}

/// The prefix, as the decoder describes it, next to the parsed container.
fn check_prefix(d: *const tpack_decoder, c: &tpack_container, file: &str) {
    let mut n = 0usize;
    let mut m = 0usize;
    // SAFETY: filled handles; writable outputs.
    unsafe {
        assert_eq!(tpack_decoder_prefix_entry_count(d, &mut n), OK, "{file}");
        let mut want = 0usize;
        assert_eq!(tpack_container_entry_count(c, &mut want), OK);
        assert_eq!(n, want, "{file}: entries");
        for i in 0..n {
            let (mut p, mut e) = (MaybeUninit::<tpack_entry>::uninit(), MaybeUninit::<tpack_entry>::uninit());
            assert_eq!(tpack_decoder_prefix_entry(d, i, p.as_mut_ptr()), OK);
            assert_eq!(tpack_container_entry(c, i, e.as_mut_ptr()), OK);
            let (p, e) = (p.assume_init(), e.assume_init());
            assert_eq!(str_of(p.name), str_of(e.name), "{file}: entry {i}");
            assert_eq!(
                (p.dtype, p.rank, p.dims, p.alignment, p.offset, p.position, p.has_target, p.target),
                (e.dtype, e.rank, e.dims, e.alignment, e.offset, e.position, e.has_target, e.target),
                "{file}: entry {i}"
            );
            assert!(
                !p.payload.data.is_null() && p.payload.len == 0 && p.length == e.payload.len as u64,
                "{file}: entry {i} payload"
            );
            let mut found = MaybeUninit::<tpack_entry>::uninit();
            assert_eq!(tpack_decoder_prefix_find(d, p.name.data, p.name.len, found.as_mut_ptr()), OK);
            assert_eq!(found.assume_init().position, p.position);
        }
        let mut past = MaybeUninit::<tpack_entry>::uninit();
        assert_eq!(tpack_decoder_prefix_entry(d, n, past.as_mut_ptr()), tpack_result::TPACK_RESULT_NOT_FOUND);
        assert_eq!(tpack_decoder_prefix_metadata_count(d, &mut m), OK);
        let mut want = 0usize;
        assert_eq!(tpack_metadata_count(c, &mut want), OK);
        assert_eq!(m, want, "{file}: metadata records");
        for i in 0..m {
            let (mut pk, mut ck) = (MaybeUninit::<tpack_str>::uninit(), MaybeUninit::<tpack_str>::uninit());
            let (mut pv, mut cv) =
                (MaybeUninit::<tpack_meta_value>::uninit(), MaybeUninit::<tpack_meta_value>::uninit());
            assert_eq!(tpack_decoder_prefix_metadata_at(d, i, pk.as_mut_ptr(), pv.as_mut_ptr()), OK);
            assert_eq!(tpack_metadata_at(c, i, ck.as_mut_ptr(), cv.as_mut_ptr()), OK);
            let key = pk.assume_init();
            assert_eq!(str_of(key), str_of(ck.assume_init()), "{file}: record {i}");
            let (mut pt, mut ct) = (0u8, 0u8);
            assert_eq!(tpack_meta_value_type(pv.as_ptr(), &mut pt), OK);
            assert_eq!(tpack_meta_value_type(cv.as_ptr(), &mut ct), OK);
            assert_eq!(pt, ct, "{file}: record {i} type");
            let mut by_key = MaybeUninit::<tpack_meta_value>::uninit();
            assert_eq!(tpack_decoder_prefix_metadata_get(d, key.data, key.len, by_key.as_mut_ptr()), OK);
        }
    }
}

#[test]
fn fed_with_a_callback_saved_and_resumed_the_decoder_agrees_with_the_reader() {
    // Enough for every vector's prefix; smaller under Miri, where each copy and fill of it is slow.
    let mut buffer = vec![0u8; if cfg!(miri) { 1 << 16 } else { 1 << 20 }];
    for (file, bytes) in vectors() {
        let reader = parse(&bytes);
        let mut seen = Seen::default();
        let mut d = Box::<tpack_decoder>::new_uninit();
        // SAFETY: writable storage; the buffer outlives the decoder and is not touched meanwhile.
        assert_eq!(
            unsafe {
                tpack_decoder_init(d.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), std::ptr::null_mut())
            },
            OK
        );
        let half = bytes.len() / 2;
        let mut verdict = None;
        let mut resumed_buffer: Vec<u8>;
        let mut prefix_checked = false;
        // Under Miri, where each call through the boundary is slow, 61-byte chunks: still many per prefix.
        let step = if cfg!(miri) { 61 } else { 7 };
        for (at, chunk) in bytes.chunks(step).enumerate().map(|(i, c)| (i * step, c)) {
            if at >= half && at < half + step {
                // Save, copy the buffer, and go on in a new handle over the copy.
                let mut state = Box::<tpack_decoder_state>::new_uninit();
                // SAFETY: a filled decoder; writable state storage.
                assert_eq!(unsafe { tpack_decoder_save(d.as_ptr(), state.as_mut_ptr()) }, OK);
                resumed_buffer = buffer.clone();
                let mut fresh = Box::<tpack_decoder>::new_uninit();
                // SAFETY: writable storage; the copied buffer lives as long as the new decoder; a saved state.
                let r = unsafe {
                    tpack_decoder_resume(
                        fresh.as_mut_ptr(),
                        resumed_buffer.as_mut_ptr(),
                        resumed_buffer.len(),
                        state.as_ptr(),
                        std::ptr::null_mut(),
                    )
                };
                assert_eq!(r, OK);
                buffer.fill(0xEE); // the old buffer is no longer the decoder's
                d = fresh;
                let mut position = 0u64;
                // SAFETY: a filled decoder; a writable output.
                assert_eq!(unsafe { tpack_decoder_position(d.as_ptr(), &mut position) }, OK);
                assert_eq!(position, at as u64, "{file}");
                match feed(d.as_mut_ptr(), chunk, &mut seen) {
                    Ok(_) => {}
                    Err((_, rule, _)) => {
                        verdict = Some(rule);
                    }
                }
                if verdict.is_some() {
                    break;
                }
                // Keep feeding the resumed decoder, whose buffer is the copy.
                continue;
            }
            if let Err((_, rule, _)) = feed(d.as_mut_ptr(), chunk, &mut seen) {
                verdict = Some(rule);
                break;
            }
            if seen.prefix == 1 && !prefix_checked {
                if let Ok(c) = &reader {
                    check_prefix(d.as_ptr(), c, &file);
                }
                prefix_checked = true;
            }
        }
        let verdict = verdict.unwrap_or_else(|| {
            let mut e = MaybeUninit::<tpack_error>::uninit();
            // SAFETY: a filled decoder; a writable error.
            let r = unsafe { tpack_decoder_finish(d.as_mut_ptr(), e.as_mut_ptr()) };
            // SAFETY: written on failure.
            if r == OK {
                0
            } else {
                unsafe { e.assume_init() }.rule
            }
        });
        assert_eq!(verdict, reader.as_ref().map_or_else(|&rule| rule, |_| 0), "{file}");
        if let Ok(c) = &reader {
            assert_eq!(seen.end, 1, "{file}");
            let mut n = 0usize;
            // SAFETY: a filled container; a writable output.
            assert_eq!(unsafe { tpack_container_entry_count(c, &mut n) }, OK);
            assert_eq!(seen.ends, (0..n as u32).collect::<Vec<_>>(), "{file}: entry ends");
            let mut want = Vec::new();
            for i in 0..n {
                let mut e = MaybeUninit::<tpack_entry>::uninit();
                // SAFETY: as above.
                assert_eq!(unsafe { tpack_container_entry(c, i, e.as_mut_ptr()) }, OK);
                // SAFETY: filled on success; the payload points into `bytes`.
                let e = unsafe { e.assume_init() };
                want.extend_from_slice(unsafe { std::slice::from_raw_parts(e.payload.data, e.payload.len) });
            }
            assert_eq!(seen.payload, want, "{file}: payload bytes");
        }
        buffer.fill(0);
    }
}

#[test]
fn a_callback_that_stops_is_reported_and_the_rest_can_be_fed_again() {
    let bytes =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../embedded/tiny-mlp/tiny-mlp.tpack"))
            .expect("tiny-mlp");
    let mut buffer = vec![0u8; 1 << 16];
    let mut d = Box::<tpack_decoder>::new_uninit();
    // SAFETY: writable storage and buffer.
    assert_eq!(
        unsafe {
            tpack_decoder_init(d.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), std::ptr::null_mut())
        },
        OK
    );
    let mut seen = Seen { stop_with: Some(-7), ..Seen::default() };
    // The first event (the prefix) stops the feed: IO, the callback's number, the bytes up to the event used.
    let (r, _, value) = feed(d.as_mut_ptr(), &bytes, &mut seen).expect_err("stopped");
    assert_eq!((r, value), (tpack_result::TPACK_RESULT_IO, (-7i64) as u64));
    let mut position = 0u64;
    // SAFETY: a filled decoder; a writable output.
    assert_eq!(unsafe { tpack_decoder_position(d.as_ptr(), &mut position) }, OK);
    assert!(position > 0 && position < bytes.len() as u64);
    // The prefix is readable now, and the decoder goes on from where it stopped.
    let mut n = 0usize;
    // SAFETY: as above.
    assert_eq!(unsafe { tpack_decoder_prefix_entry_count(d.as_ptr(), &mut n) }, OK);
    assert!(n > 0);
    feed(d.as_mut_ptr(), &bytes[position as usize..], &mut seen).expect("the rest");
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: a filled decoder; a writable error.
    assert_eq!(unsafe { tpack_decoder_finish(d.as_mut_ptr(), e.as_mut_ptr()) }, OK);
    assert_eq!(seen.end, 1);

    // Before the prefix there is none to read; a NULL callback and an unsaved state are refused.
    let mut d = Box::<tpack_decoder>::new_uninit();
    // SAFETY: writable storage and buffer; then the calls under test, with writable outputs.
    unsafe {
        assert_eq!(
            tpack_decoder_init(d.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), std::ptr::null_mut()),
            OK
        );
        assert_eq!(
            tpack_decoder_prefix_entry_count(d.as_ptr(), &mut n),
            tpack_result::TPACK_RESULT_NOT_FOUND
        );
        let mut used = 0usize;
        let r = tpack_decoder_feed(
            d.as_mut_ptr(),
            bytes.as_ptr(),
            1,
            None,
            std::ptr::null_mut(),
            &mut used,
            std::ptr::null_mut(),
        );
        assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);
        let zeroed: Box<tpack_decoder_state> = Box::new(std::mem::zeroed());
        let r = tpack_decoder_resume(
            d.as_mut_ptr(),
            buffer.as_mut_ptr(),
            buffer.len(),
            &*zeroed,
            std::ptr::null_mut(),
        );
        assert_eq!(r, tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE);
    }
}

/// The nested vector, fed through a 160-byte buffer grown as `TPACK_RESULT_BUFFER_TOO_SMALL` asks: into a
/// longer part of the same array, and into other memory, alternately (the in-place move takes the old buffer
/// out of the decoder before it lends the new one: Miri checks that no borrow of the old is used after).
#[test]
fn a_buffer_too_small_is_grown_in_place_or_elsewhere_and_the_stream_goes_on() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors/valid");
    let bytes = std::fs::read(root.join("nested.tpack")).expect("vector");
    let c = parse(&bytes).expect("valid");
    let mut want = Vec::new();
    let mut count = 0usize;
    // SAFETY: `c` is a parsed container over `bytes`; each entry's payload lies in `bytes`.
    unsafe {
        assert_eq!(tpack_container_entry_count(&c, &mut count), OK);
        for i in 0..count {
            let mut e = MaybeUninit::<tpack_entry>::uninit();
            assert_eq!(tpack_container_entry(&c, i, e.as_mut_ptr()), OK);
            let e = e.assume_init();
            want.extend_from_slice(std::slice::from_raw_parts(e.payload.data, e.payload.len));
        }
    }
    let mut arenas = [vec![0u8; 1 << 14], vec![0u8; 1 << 14]];
    let mut d = MaybeUninit::<tpack_decoder>::uninit();
    let d = d.as_mut_ptr();
    let (mut current, mut len) = (0usize, 160usize);
    // SAFETY: the decoder's storage and buffers live to the end of the test; the arenas are touched only
    // through the decoder once lent.
    unsafe {
        assert_eq!(tpack_decoder_init(d, arenas[0].as_mut_ptr(), len, std::ptr::null_mut()), OK);
        let mut seen = Seen::default();
        let mut rest = &bytes[..];
        let mut grown = 0;
        while !rest.is_empty() {
            let (mut used, mut error) = (usize::MAX, MaybeUninit::<tpack_error>::uninit());
            let seen_ptr = std::ptr::from_mut(&mut seen).cast::<c_void>();
            let r = tpack_decoder_feed(
                d,
                rest.as_ptr(),
                rest.len(),
                Some(on_event),
                seen_ptr,
                &mut used,
                error.as_mut_ptr(),
            );
            rest = &rest[used..];
            if r == OK {
                continue;
            }
            assert_eq!(r, tpack_result::TPACK_RESULT_BUFFER_TOO_SMALL);
            let needed = usize::try_from(error.assume_init().value).unwrap();
            assert!(needed > len && needed <= 1 << 14);
            // In place every other time; otherwise into the other arena.
            if grown % 2 == 1 {
                current = 1 - current;
            }
            let r = tpack_decoder_grow(d, arenas[current].as_mut_ptr(), needed, std::ptr::null_mut());
            assert_eq!(r, OK);
            len = needed;
            grown += 1;
        }
        assert!(grown >= 2, "grown {grown} times");
        assert_eq!(tpack_decoder_finish(d, std::ptr::null_mut()), OK);
        assert_eq!(seen.payload, want);
        assert_eq!(seen.ends.len(), count);
    }
}

/// NULL with length 0 is the empty chunk, as the header says of every input whose empty value means
/// something: `tpack_decoder_decode`, `tpack_decoder_feed` and `tpack_signed_decoder_decode` consume nothing
/// and give no event (they used to refuse it with `TPACK_RESULT_NULL_ARGUMENT`, the C user's
/// `repro_null_chunk.c`); NULL with a length is still refused.
#[test]
fn a_null_chunk_of_length_zero_is_an_empty_chunk() {
    let null = std::ptr::null::<u8>();
    let mut buffer = vec![0u8; 4096];
    let mut d = Box::<tpack_decoder>::new_uninit();
    let mut seen = Seen::default();
    let (mut used, mut event) = (usize::MAX, MaybeUninit::<tpack_event>::uninit());
    // SAFETY: writable storage, buffer and outputs; the callback and `seen` live across the call.
    unsafe {
        assert_eq!(
            tpack_decoder_init(d.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), std::ptr::null_mut()),
            OK
        );
        let r = tpack_decoder_decode(
            d.as_mut_ptr(),
            null,
            0,
            &mut used,
            event.as_mut_ptr(),
            std::ptr::null_mut(),
        );
        assert_eq!((r, used, event.assume_init().kind), (OK, 0, tpack_event_kind::TPACK_EVENT_NONE));
        used = usize::MAX;
        let user = (&mut seen as *mut Seen).cast();
        let r = tpack_decoder_feed(
            d.as_mut_ptr(),
            null,
            0,
            Some(on_event),
            user,
            &mut used,
            std::ptr::null_mut(),
        );
        assert_eq!((r, used), (OK, 0));
        let r = tpack_decoder_decode(
            d.as_mut_ptr(),
            null,
            1,
            &mut used,
            event.as_mut_ptr(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);
        let r = tpack_decoder_feed(
            d.as_mut_ptr(),
            null,
            1,
            Some(on_event),
            user,
            &mut used,
            std::ptr::null_mut(),
        );
        assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);
    }
    assert_eq!((seen.prefix, seen.end), (0, 0));

    let mut signed = Box::<tpack_signed_decoder>::new_uninit();
    let mut digests = vec![0u8; 1024];
    let policy = tpack_policy {
        keys: std::ptr::null(),
        key_count: 0,
        require_signature: false,
        min_counter: 0,
        subject: std::ptr::null(),
        subject_len: 0,
    };
    used = usize::MAX;
    // SAFETY: writable storage, buffers and outputs; a readable policy.
    unsafe {
        let r = tpack_signed_decoder_init(
            signed.as_mut_ptr(),
            buffer.as_mut_ptr(),
            buffer.len(),
            digests.as_mut_ptr(),
            digests.len(),
            &policy,
            std::ptr::null(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, OK);
        let s = signed.as_mut_ptr();
        let r = tpack_signed_decoder_decode(s, null, 0, &mut used, event.as_mut_ptr(), std::ptr::null_mut());
        assert_eq!((r, used, event.assume_init().kind), (OK, 0, tpack_event_kind::TPACK_EVENT_NONE));
        let r = tpack_signed_decoder_decode(s, null, 1, &mut used, event.as_mut_ptr(), std::ptr::null_mut());
        assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);
    }
}

/// Decodes `bytes` whole with the decoder in `d`, growing its buffer as `TPACK_RESULT_BUFFER_TOO_SMALL` asks,
/// and finishes it: the result and the rule.
fn decode_to_end(d: *mut tpack_decoder, mut bytes: &[u8]) -> (tpack_result, u32) {
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // The grown buffers, which the decoder uses until it is finished.
    let mut grown: Vec<Vec<u8>> = Vec::new();
    loop {
        let (mut used, mut event) = (0usize, MaybeUninit::<tpack_event>::uninit());
        // SAFETY: a filled decoder; readable bytes; writable outputs.
        let r = unsafe {
            tpack_decoder_decode(
                d,
                bytes.as_ptr(),
                bytes.len(),
                &mut used,
                event.as_mut_ptr(),
                e.as_mut_ptr(),
            )
        };
        if r == tpack_result::TPACK_RESULT_BUFFER_TOO_SMALL {
            bytes = &bytes[used..];
            // SAFETY: written on failure.
            grown.push(vec![0u8; unsafe { e.assume_init() }.value as usize]);
            let larger = grown.last_mut().unwrap();
            // SAFETY: a filled decoder; the larger buffer outlives its uses (until `grown` is dropped).
            let r = unsafe { tpack_decoder_grow(d, larger.as_mut_ptr(), larger.len(), std::ptr::null_mut()) };
            assert_eq!(r, OK);
            continue;
        }
        if r != OK {
            // SAFETY: written on failure.
            return (r, unsafe { e.assume_init() }.rule);
        }
        bytes = &bytes[used..];
        // SAFETY: written on success.
        if unsafe { event.assume_init() }.kind == tpack_event_kind::TPACK_EVENT_NONE {
            break;
        }
    }
    // SAFETY: a filled decoder; a writable error.
    let r = unsafe { tpack_decoder_finish(d, e.as_mut_ptr()) };
    // SAFETY: written on failure.
    (r, if r == OK { 0 } else { unsafe { e.assume_init() }.rule })
}

/// The C user's `repro_resume_shorter.c` at every stop position of `example.tpack`: a decoder saved there and
/// resumed over the first 400 bytes of its 4,096-byte buffer. `tpack_decoder_resume` used to accept every
/// such buffer, and valid streams then ended in a false R12; now it refuses a buffer shorter than the bytes
/// the state keeps with `TPACK_RESULT_SHORT_STORAGE` and the length needed (at most the saved buffer's),
/// and over that many bytes the stream is valid.
#[test]
fn resume_refuses_a_buffer_shorter_than_the_state_keeps() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors/valid");
    let bytes = std::fs::read(root.join("example.tpack")).expect("vector");
    let step = if cfg!(miri) { 97 } else { 1 };
    let mut refused = 0usize;
    for stop in (0..=bytes.len()).step_by(step) {
        let mut buffer = vec![0u8; 4096];
        let mut d = Box::<tpack_decoder>::new_uninit();
        let mut state = Box::<tpack_decoder_state>::new_uninit();
        // SAFETY: writable storage and buffer, which outlives the decoder; a filled decoder.
        unsafe {
            assert_eq!(
                tpack_decoder_init(d.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), std::ptr::null_mut()),
                OK
            );
            let mut seen = Seen::default();
            let user = (&mut seen as *mut Seen).cast();
            let chunk = &bytes[..stop];
            let r = tpack_decoder_feed(
                d.as_mut_ptr(),
                chunk.as_ptr(),
                chunk.len(),
                Some(on_event),
                user,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            assert_eq!(r, OK);
            assert_eq!(tpack_decoder_save(d.as_ptr(), state.as_mut_ptr()), OK);
        }
        let mut shorter = buffer[..400].to_vec();
        let mut e = MaybeUninit::<tpack_error>::uninit();
        // SAFETY: writable storage; the copy outlives the decoder; a saved state.
        let r = unsafe {
            tpack_decoder_resume(
                d.as_mut_ptr(),
                shorter.as_mut_ptr(),
                shorter.len(),
                state.as_ptr(),
                e.as_mut_ptr(),
            )
        };
        let kept = if r == OK {
            assert_eq!(
                decode_to_end(d.as_mut_ptr(), &bytes[stop..]),
                (OK, 0),
                "stopped at {stop}, resumed over 400 bytes"
            );
            continue;
        } else {
            assert_eq!(r, tpack_result::TPACK_RESULT_SHORT_STORAGE, "stopped at {stop}");
            // SAFETY: written on failure.
            unsafe { e.assume_init() }.value as usize
        };
        refused += 1;
        assert!(kept > 400 && kept <= buffer.len(), "stopped at {stop}: {kept} bytes needed");
        let mut kept_bytes = buffer[..kept].to_vec();
        // SAFETY: as above.
        let r = unsafe {
            tpack_decoder_resume(
                d.as_mut_ptr(),
                kept_bytes.as_mut_ptr(),
                kept,
                state.as_ptr(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(r, OK);
        assert_eq!(
            decode_to_end(d.as_mut_ptr(), &bytes[stop..]),
            (OK, 0),
            "stopped at {stop}, resumed over {kept} bytes"
        );
    }
    assert!(refused > bytes.len() / 2 / step, "{refused} refused");
}
