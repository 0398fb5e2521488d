//! The push decoder against the reader: arbitrary bytes, cut into arbitrary chunks (and optionally saved and
//! resumed at a chunk boundary), get the verdict `Container::parse` + `verify` gives, and a valid container's
//! payload events are exactly its entries' payloads, in order.
//!
//! The input is `[plan byte][chunk sizes: plan & 7 bytes][container bytes]`. Each chunk size is `byte + 1`,
//! cycled; no sizes means one chunk. `plan >> 3`, if not zero, is the chunk after which the decoder's state
//! and buffer are copied and decoding resumes from the copy, as after a power cut. The seeds (.ci/run) are the
//! golden vectors behind a few such plans.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tpack::stream::{DecodeError, Decoder, Event};
use tpack::Container;

/// The most chunk sizes a plan holds.
const PLAN_MASK: u8 = 7;

/// Buffer bytes per input byte, and on top: a container needs at most its prefix plus 8 bytes per entry (each
/// descriptor is larger) plus 4, and each nested container being received as much again, within its outer
/// entry's bytes; nine levels at most. A buffer this large is never too small for a container whose length
/// is right, so `BufferTooSmall` must mean a length the reader rejects.
const BUFFER_PER_BYTE: usize = 20;
const BUFFER_EXTRA: usize = 4096;

/// The filler of the buffer: not zero, so that a read of a byte the decoder never wrote shows.
const FILL: u8 = 0xA5;

struct Decoded {
    verdict: Result<(), DecodeError>,
    payloads: Vec<Vec<u8>>,
    saw_prefix: bool,
    saw_end: bool,
}

fn decode(bytes: &[u8], sizes: &[u8], resume_after: usize) -> Decoded {
    let buffer_len = bytes.len().saturating_mul(BUFFER_PER_BYTE).saturating_add(BUFFER_EXTRA);
    let mut buffer = vec![FILL; buffer_len];
    let mut copy: Vec<u8>;
    let mut decoder = Decoder::new(&mut buffer);
    let mut out = Decoded { verdict: Ok(()), payloads: Vec::new(), saw_prefix: false, saw_end: false };
    let mut ended = 0u32;
    let mut at = 0usize;
    let mut chunk = 0usize;
    while at < bytes.len() {
        let size = sizes.get(chunk % sizes.len().max(1)).map_or(bytes.len(), |&s| usize::from(s) + 1);
        let end = at.saturating_add(size).min(bytes.len());
        let mut rest = &bytes[at..end];
        at = end;
        chunk += 1;
        loop {
            let (used, event) = match decoder.decode(rest) {
                Ok(step) => step,
                Err(e) => {
                    out.verdict = Err(e);
                    return out;
                }
            };
            assert!(used <= rest.len(), "used {used} of {}", rest.len());
            rest = &rest[used..];
            let Some(event) = event else {
                assert!(rest.is_empty(), "no event but {} bytes left", rest.len());
                break;
            };
            assert!(!out.saw_end, "{event:?} after End");
            match event {
                Event::Prefix => {
                    assert!(!out.saw_prefix, "a second Prefix");
                    out.saw_prefix = true;
                    out.payloads = vec![Vec::new(); decoder.prefix().expect("a prefix after Prefix").len()];
                }
                Event::Payload { entry, offset, target, bytes: b } => {
                    assert!(out.saw_prefix && entry == ended, "payload of entry {entry} out of order");
                    assert!(!b.is_empty(), "an empty Payload");
                    let prefix = decoder.prefix().expect("a prefix during payloads");
                    assert_eq!(target, prefix.entry(entry as usize).expect("entry in the prefix").target());
                    let p = &mut out.payloads[entry as usize];
                    assert_eq!(offset, p.len() as u64, "payload offsets are contiguous");
                    p.extend_from_slice(b);
                }
                Event::EntryEnd { entry } => {
                    assert!(out.saw_prefix && entry == ended, "entry {entry} ended out of order");
                    ended += 1;
                }
                Event::End => {
                    assert!(
                        !out.saw_prefix || ended as usize == out.payloads.len(),
                        "End before every entry"
                    );
                    out.saw_end = true;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        if chunk == resume_after {
            // Power cut: only the state and the buffer's bytes survive.
            assert_eq!(decoder.position(), at as u64, "the position is what was fed");
            let state = decoder.state();
            copy = buffer.clone();
            decoder = Decoder::resume(&mut copy, state);
        }
    }
    out.verdict = decoder.finish();
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&plan, rest)) = data.split_first() else { return };
    let n = usize::from(plan & PLAN_MASK).min(rest.len());
    let (sizes, bytes) = rest.split_at(n);
    let resume_after = usize::from(plan >> 3);

    let decoded = decode(bytes, sizes, resume_after);
    let expected = Container::parse(bytes).and_then(|c| c.verify().map(|()| c));
    match (&decoded.verdict, &expected) {
        (Err(DecodeError::BufferTooSmall { needed }), Err(_)) => {
            let len = bytes.len().saturating_mul(BUFFER_PER_BYTE).saturating_add(BUFFER_EXTRA) as u64;
            assert!(*needed > len, "BufferTooSmall {{ needed: {needed} }} with {len} bytes");
        }
        (Err(DecodeError::Invalid(got)), Err(want)) => assert_eq!(got, want, "the decoder's verdict"),
        (Ok(()), Ok(c)) => {
            assert!(decoded.saw_prefix && decoded.saw_end, "a valid container gives Prefix and End");
            let payloads: Vec<&[u8]> = c.entries().map(|e| e.payload()).collect();
            assert_eq!(decoded.payloads, payloads, "payload bytes per entry");
        }
        (got, want) => panic!("the decoder says {got:?}, the reader {:?}", want.as_ref().map(|_| ())),
    }
});
