//! The push decoder's buffer: the number announced for a stream suffices, nested containers included, and a
//! buffer too small is grown and the decoding goes on with nothing lost (issue 24, item 1: `nested.tpack` was
//! announced 444 bytes and then asked 604, then 1,657; a stopped decoder could not be resumed over a larger
//! buffer).

mod support;

use std::path::PathBuf;

use support::cases;
use tpack::format::Header;
use tpack::stream::{DecodeError, Decoder, Event};
use tpack::{Container, Dtype, Error};
use zerocopy::FromBytes;

/// What the reader says of `bytes`, and the payloads of a valid container's entries.
fn reference(bytes: &[u8]) -> (Result<(), Error>, Vec<Vec<u8>>) {
    match Container::parse(bytes) {
        Err(e) => (Err(e), Vec::new()),
        Ok(c) => (c.verify(), c.entries().map(|e| e.payload().to_vec()).collect()),
    }
}

/// The nested vectors of the spec, by name.
fn nested_vectors() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("spec/vectors/valid");
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().contains("nested"))
        .map(|p| (p.file_name().unwrap().to_str().unwrap().to_owned(), std::fs::read(&p).unwrap()))
        .collect();
    found.sort();
    assert!(found.len() >= 3, "the nested vectors are in {}", dir.display());
    found
}

/// How a decode went.
#[derive(Debug, Default)]
struct Run {
    /// The payload bytes per entry, in the order the events gave them.
    payloads: Vec<Vec<u8>>,
    /// Every `needed` of a `BufferTooSmall`, in order.
    asked: Vec<u64>,
    /// The buffer length after the prefix event, and what `stream_buffer_needed` said then.
    announced: Option<u64>,
}

/// Decodes `bytes` in `chunk`-byte pieces into a buffer of `initial` bytes. With `grow_to_announced`, the
/// buffer is grown to `stream_buffer_needed` at the prefix event; on `BufferTooSmall` it is grown to the
/// `needed` bytes and the stream fed again from the decoder's position. Gives the verdict and the run.
fn decode(
    bytes: &[u8],
    chunk: usize,
    initial: usize,
    grow_to_announced: bool,
) -> (Result<(), DecodeError>, Run) {
    // Buffers are leaked so that each grown one outlives the decoder (a test, not firmware).
    let mut decoder = Decoder::new(Box::leak(vec![0u8; initial].into_boxed_slice()));
    let mut run = Run::default();
    let mut at = 0usize;
    while at < bytes.len() {
        let end = (at + chunk).min(bytes.len());
        let mut rest = &bytes[at..end];
        loop {
            let before = decoder.position();
            match decoder.decode(rest) {
                Ok((used, event)) => {
                    rest = &rest[used..];
                    match event {
                        None => break,
                        Some(Event::Prefix) => {
                            run.payloads = vec![Vec::new(); decoder.prefix().unwrap().len()];
                            let announced = decoder.stream_buffer_needed().expect("announced at the prefix");
                            run.announced = Some(announced);
                            if grow_to_announced {
                                let larger = vec![0u8; announced as usize].into_boxed_slice();
                                decoder.grow(Box::leak(larger)).unwrap();
                            }
                        }
                        Some(Event::Payload { entry, offset, bytes: b, .. }) => {
                            let p = &mut run.payloads[entry as usize];
                            assert_eq!(offset, p.len() as u64, "no payload byte lost or repeated");
                            p.extend_from_slice(b);
                        }
                        Some(_) => {}
                    }
                }
                Err(DecodeError::BufferTooSmall { needed }) => {
                    // The bytes before the position were consumed (their events given), the rest not.
                    let consumed = (decoder.position() - before) as usize;
                    assert!(consumed <= rest.len());
                    rest = &rest[consumed..];
                    assert!(
                        run.asked.last().is_none_or(|&last| needed > last),
                        "each BufferTooSmall asks more than the last: {:?} then {needed}",
                        run.asked
                    );
                    run.asked.push(needed);
                    // Asked again, unchanged, while the buffer is short.
                    assert_eq!(decoder.decode(rest).unwrap_err(), DecodeError::BufferTooSmall { needed });
                    let larger = vec![0u8; needed as usize].into_boxed_slice();
                    decoder.grow(Box::leak(larger)).unwrap();
                }
                Err(e) => return (Err(e), run),
            }
        }
        at = end;
    }
    (decoder.finish(), run)
}

#[test]
fn nested_vectors_decode_at_every_chunking_with_the_buffer_announced_at_the_prefix() {
    for (name, bytes) in nested_vectors() {
        let (expected, payloads) = reference(&bytes);
        let header_need = Decoder::buffer_needed(&bytes).unwrap() as usize;
        let chunks: Vec<usize> = if cfg!(miri) { vec![64, bytes.len()] } else { (1..=bytes.len()).collect() };
        for chunk in chunks {
            let (verdict, run) = decode(&bytes, chunk, header_need, true);
            assert_eq!(verdict, expected.map_err(DecodeError::Invalid), "{name} in {chunk}-byte chunks");
            assert_eq!(
                run.asked,
                [] as [u64; 0],
                "{name} in {chunk}-byte chunks: the announced buffer sufficed"
            );
            assert_eq!(run.payloads, payloads, "{name} in {chunk}-byte chunks");
        }
    }
}

#[test]
fn a_buffer_too_small_grows_and_the_decode_goes_on_with_nothing_lost() {
    for (name, bytes) in nested_vectors() {
        let (expected, payloads) = reference(&bytes);
        for chunk in [1, 7, 64, 500, bytes.len()] {
            // From the smallest buffer the decoder accepts: every need is told and met on the way.
            let (verdict, run) = decode(&bytes, chunk, 160, false);
            assert_eq!(verdict, expected.map_err(DecodeError::Invalid), "{name} in {chunk}-byte chunks");
            assert_eq!(run.payloads, payloads, "{name} in {chunk}-byte chunks");
            assert!(!run.asked.is_empty(), "{name}: 160 bytes are too few");
            // The largest need met on the way is within what the prefix announced.
            let most = *run.asked.iter().max().unwrap();
            assert!(most <= run.announced.unwrap(), "{name}: asked {most}, announced {:?}", run.announced);
        }
    }
}

#[test]
fn the_announced_buffer_suffices_for_every_vector() {
    for case in cases::all() {
        let bytes = &case.bytes;
        let (expected, payloads) = reference(bytes);
        let Ok(header_need) = Decoder::buffer_needed(bytes) else { continue };
        for chunk in [3, 4096] {
            let (verdict, run) = decode(bytes, chunk, header_need as usize, true);
            let name = &case.name;
            assert_eq!(verdict, expected.map_err(DecodeError::Invalid), "{name} in {chunk}-byte chunks");
            if run.announced.is_some() {
                assert_eq!(run.asked, [] as [u64; 0], "{name}: the announced buffer sufficed");
            }
            if verdict.is_ok() {
                assert_eq!(run.payloads, payloads, "{name}");
            }
        }
    }
}

#[test]
fn the_announced_buffer_is_exact_without_nested_containers() {
    for case in cases::valid_cases() {
        let c = Container::parse(&case.bytes).unwrap();
        if c.entries().any(|e| e.dtype() == Dtype::CONTAINER) {
            continue;
        }
        let (_, run) = decode(&case.bytes, 4096, 160, false);
        assert_eq!(run.announced, Some(Decoder::buffer_needed(&case.bytes).unwrap()), "{}", case.name);
    }
}

#[test]
fn a_stopped_decoder_resumes_over_a_larger_buffer() {
    for (name, bytes) in nested_vectors() {
        let (expected, payloads) = reference(&bytes);
        let mut small = vec![0u8; 160];
        let mut decoder = Decoder::new(&mut small);
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut rest = &bytes[..];
        let needed = loop {
            let before = decoder.position();
            match decoder.decode(rest) {
                Ok((used, event)) => {
                    rest = &rest[used..];
                    match event {
                        Some(Event::Prefix) => got = vec![Vec::new(); decoder.prefix().unwrap().len()],
                        Some(Event::Payload { entry, bytes: b, .. }) => {
                            got[entry as usize].extend_from_slice(b)
                        }
                        None => panic!("{name}: the whole stream fit in 160 bytes"),
                        Some(_) => {}
                    }
                }
                Err(DecodeError::BufferTooSmall { needed }) => {
                    rest = &rest[(decoder.position() - before) as usize..];
                    break needed;
                }
                Err(e) => panic!("{name}: {e}"),
            }
        };
        // Saved, as after a reset: the state and the buffer's bytes, resumed over a larger buffer.
        let state = decoder.state();
        let mut large = vec![0u8; 1 << 16];
        large[..small.len()].copy_from_slice(&small);
        assert!(needed <= large.len() as u64);
        let mut decoder = Decoder::resume(&mut large, state);
        while !rest.is_empty() {
            let (used, event) = decoder.decode(rest).unwrap();
            rest = &rest[used..];
            match event {
                Some(Event::Prefix) => got = vec![Vec::new(); decoder.prefix().unwrap().len()],
                Some(Event::Payload { entry, bytes: b, .. }) => got[entry as usize].extend_from_slice(b),
                _ => {}
            }
        }
        assert_eq!(decoder.finish(), expected.map_err(DecodeError::Invalid), "{name}");
        assert_eq!(got, payloads, "{name}");
    }
}

#[test]
fn finish_after_an_unmet_buffer_too_small_says_so() {
    let (_, bytes) = nested_vectors().into_iter().find(|(n, _)| n == "nested.tpack").unwrap();
    let mut small = vec![0u8; Decoder::buffer_needed(&bytes).unwrap() as usize];
    let mut decoder = Decoder::new(&mut small);
    let mut rest = &bytes[..];
    let error = loop {
        match decoder.decode(rest) {
            Ok((used, _)) => rest = &rest[used..],
            Err(e) => break e,
        }
    };
    assert!(matches!(error, DecodeError::BufferTooSmall { .. }), "{error:?}");
    assert!(!decoder.is_doomed(), "a short buffer breaks no rule");
    assert_eq!(decoder.finish(), Err(error));
}

#[test]
fn grow_refuses_a_shorter_buffer_and_keeps_the_decoder() {
    let bytes = &cases::valid_cases()[0].bytes;
    let mut buffer = vec![0u8; 4096];
    let mut decoder = Decoder::new(&mut buffer);
    let (used, _) = decoder.decode(&bytes[..200]).unwrap();
    let mut shorter = [0u8; 1000];
    assert_eq!(decoder.grow(&mut shorter).unwrap_err(), DecodeError::BufferTooSmall { needed: 4096 });
    let mut rest = &bytes[used..];
    while let (n, Some(_)) = decoder.decode(rest).unwrap() {
        rest = &rest[n..];
    }
    assert_eq!(decoder.position(), bytes.len() as u64);
    assert_eq!(decoder.finish(), Ok(()));
}

/// `nested.tpack` with its first nested container's header claiming `extra` more bytes of metadata (and so
/// of total length) than its entry holds.
fn with_an_overlong_nested_header(extra: u64) -> Vec<u8> {
    let (_, mut bytes) = nested_vectors().into_iter().find(|(n, _)| n == "nested.tpack").unwrap();
    let at = {
        let c = Container::parse(&bytes).unwrap();
        let inner = c.entries().find(|e| e.dtype() == Dtype::CONTAINER).unwrap();
        inner.range().start as usize
    };
    let (header, _) = Header::mut_from_prefix(&mut bytes[at..]).unwrap();
    header.total_len.set(header.total_len.get() + extra);
    let [.., metadata, payloads, trailer] = &mut header.sections;
    metadata.length.set(metadata.length.get() + extra);
    payloads.offset.set(payloads.offset.get() + extra);
    trailer.offset.set(trailer.offset.get() + extra);
    bytes
}

#[test]
fn a_nested_header_claiming_more_than_its_entry_asks_no_more_than_the_entry() {
    // It used to ask for its whole claimed prefix: a gigabyte here, for a stream the reader finds invalid.
    let bytes = with_an_overlong_nested_header(1 << 30);
    let (expected, _) = reference(&bytes);
    assert!(expected.is_err());
    for chunk in [1, 64, bytes.len()] {
        let (verdict, run) = decode(&bytes, chunk, 160, false);
        assert_eq!(verdict, expected.map_err(DecodeError::Invalid), "in {chunk}-byte chunks");
        let most = run.asked.iter().max().copied().unwrap_or(0);
        assert!(most <= run.announced.unwrap(), "asked {most}, announced {:?}", run.announced);
        let (verdict, run) = decode(&bytes, chunk, Decoder::buffer_needed(&bytes).unwrap() as usize, true);
        assert_eq!(verdict, expected.map_err(DecodeError::Invalid), "in {chunk}-byte chunks");
        assert_eq!(run.asked, [] as [u64; 0]);
    }
}

/// Where the nested vectors' `CONTAINER` entries lie, and their headers: the bytes a damage below targets.
fn nested_ranges(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let c = Container::parse(bytes).unwrap();
    c.entries()
        .filter(|e| e.dtype() == Dtype::CONTAINER)
        .map(|e| e.range().start as usize..e.range().end as usize)
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 1000 }))]

    /// Nested containers damaged anywhere — their headers' lengths and sections included, made to claim up to
    /// a terabyte more than their entry holds — behind a sound outer prefix: the decoder grown as it asks from
    /// 160 bytes gives the reader's verdict, never asks more than the prefix announced, and with the announced
    /// buffer asks nothing.
    #[test]
    fn damaged_nested_containers_stay_within_the_announced_buffer(
        which in proptest::prelude::any::<proptest::sample::Index>(),
        inner in proptest::prelude::any::<proptest::sample::Index>(),
        edits in proptest::collection::vec(
            (proptest::prelude::any::<proptest::sample::Index>(), proptest::prelude::any::<u8>()),
            0..4,
        ),
        extra in proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..4096, 0u64..(1 << 40)],
        chunk in 1usize..300,
    ) {
        let vectors = nested_vectors();
        let (name, mut bytes) = vectors[which.index(vectors.len())].clone();
        let ranges = nested_ranges(&bytes);
        let range = ranges[inner.index(ranges.len())].clone();
        if extra > 0 {
            // The nested header claims `extra` more bytes of metadata, its sections still holding together.
            let (header, _) = Header::mut_from_prefix(&mut bytes[range.clone()]).unwrap();
            header.total_len.set(header.total_len.get().wrapping_add(extra));
            let [.., metadata, payloads, trailer] = &mut header.sections;
            metadata.length.set(metadata.length.get().wrapping_add(extra));
            payloads.offset.set(payloads.offset.get().wrapping_add(extra));
            trailer.offset.set(trailer.offset.get().wrapping_add(extra));
        }
        for (at, byte) in edits {
            bytes[range.start + at.index(range.len())] = byte;
        }
        let (expected, payloads) = reference(&bytes);
        let (verdict, run) = decode(&bytes, chunk, 160, false);
        proptest::prop_assert_eq!(verdict, expected.map_err(DecodeError::Invalid), "{} grown as asked", name);
        if let Some(announced) = run.announced {
            let most = run.asked.iter().max().copied().unwrap_or(0);
            proptest::prop_assert!(most <= announced, "{}: asked {}, announced {}", name, most, announced);
        }
        if verdict.is_ok() {
            proptest::prop_assert_eq!(&run.payloads, &payloads);
        }
        let header_need = Decoder::buffer_needed(&bytes).unwrap() as usize;
        let (verdict, run) = decode(&bytes, chunk, header_need, true);
        proptest::prop_assert_eq!(verdict, expected.map_err(DecodeError::Invalid), "{} announced", name);
        proptest::prop_assert!(run.asked.is_empty(), "{}: asked {:?} after the announced buffer", name, run.asked);
    }
}

/// Feeds `input` to `decoder` until it is all consumed, growing the buffer (leaked, as in `decode`) to what a
/// `BufferTooSmall` asks, and records the payload events in `payloads` (sized at the prefix event). The first
/// other error, if any.
fn feed_growing(
    decoder: &mut Decoder<'static>,
    mut input: &[u8],
    payloads: &mut Vec<Vec<u8>>,
) -> Result<(), DecodeError> {
    loop {
        let before = decoder.position();
        match decoder.decode(input) {
            Ok((used, event)) => {
                input = &input[used..];
                match event {
                    None => return Ok(()),
                    Some(Event::Prefix) => *payloads = vec![Vec::new(); decoder.prefix().unwrap().len()],
                    Some(Event::Payload { entry, bytes, .. }) => {
                        payloads[entry as usize].extend_from_slice(bytes)
                    }
                    Some(_) => {}
                }
            }
            Err(DecodeError::BufferTooSmall { needed }) => {
                input = &input[(decoder.position() - before) as usize..];
                decoder.grow(Box::leak(vec![0u8; needed as usize].into_boxed_slice())).unwrap();
            }
            Err(e) => return Err(e),
        }
    }
}

/// A decoder stopped at positions all along each vector, from a buffer grown as asked, saved, and resumed over
/// a copy of its buffer's first bytes: shorter than `DecoderState::kept_len` it refuses, consuming nothing,
/// with `BufferTooSmall { needed: kept_len }` (from `decode` and from `finish`); with exactly `kept_len` bytes
/// it goes on to the reader's verdict and payloads. It used to take a shorter buffer and end valid streams
/// with a false R12 (the C user's `repro_resume_shorter.c`: 6,014 false verdicts over `example.tpack`).
#[test]
fn a_decoder_resumed_over_a_shorter_buffer_refuses_it_rather_than_give_a_false_rule() {
    let mut checked = 0usize;
    // Under Miri every 16th case (three full decodes per stop there).
    for case in cases::all().step_by(if cfg!(miri) { 16 } else { 1 }) {
        let bytes = &case.bytes[..];
        let (expected, payloads) = reference(bytes);
        let expected = expected.map_err(DecodeError::Invalid);
        let step = if cfg!(miri) { bytes.len().max(1) } else { (bytes.len() / 150).max(1) };
        for stop in (0..=bytes.len()).step_by(step) {
            let mut got = Vec::new();
            let mut decoder = Decoder::new(Box::leak(vec![0u8; 160].into_boxed_slice()));
            let early = feed_growing(&mut decoder, &bytes[..stop], &mut got);
            let (buffer, state) = decoder.into_parts();
            let kept = state.kept_len();
            assert!(kept <= buffer.len() as u64, "{} at {stop}: keeps {kept} of {}", case.name, buffer.len());
            let kept = kept as usize;
            if early.is_ok() {
                for short in [kept.saturating_sub(1), kept / 2, 160.min(kept.saturating_sub(1))] {
                    if short >= kept {
                        continue;
                    }
                    let mut copy = buffer[..short].to_vec();
                    let mut resumed = Decoder::resume(&mut copy, state);
                    let refused = Err(DecodeError::BufferTooSmall { needed: kept as u64 });
                    assert_eq!(
                        resumed.decode(&bytes[stop..]).map(|_| ()),
                        refused,
                        "{} at {stop}, {short} bytes",
                        case.name
                    );
                    assert_eq!(resumed.position(), stop as u64, "nothing consumed");
                    assert_eq!(resumed.finish(), refused, "{} at {stop}, {short} bytes", case.name);
                    checked += 1;
                }
            }
            let copy = Box::leak(buffer[..kept].to_vec().into_boxed_slice());
            let mut resumed = Decoder::resume(copy, state);
            let verdict = early
                .and_then(|()| feed_growing(&mut resumed, &bytes[stop..], &mut got))
                .and_then(|()| resumed.finish());
            assert_eq!(
                verdict, expected,
                "{} stopped at {stop}, resumed over its {kept} kept bytes",
                case.name
            );
            if verdict.is_ok() {
                assert_eq!(got, payloads, "{} stopped at {stop}", case.name);
            }
        }
    }
    assert!(checked > if cfg!(miri) { 10 } else { 1000 }, "{checked} shorter buffers refused");
}

/// `Decoder::buffer_needed` over every vector of a header rule (R1–R7, R10–R12), given the first 160 bytes as
/// the docs say: it refuses with the vector's rule exactly when a decoder is sure of it from the header —
/// at once for R2–R7, at `finish` for R1 and R10–R12. It gives a length instead for a header breaking R3 or
/// R5 that the header diagnosis of spec §12 judges, whose rule the prefix decides: a decoder with that length
/// takes the header without an error, holds the prefix and reports the vector's rule, and one byte less is
/// refused with that length.
#[test]
fn buffer_needed_agrees_with_the_decoder_on_every_header_rule_vector() {
    let mut lengths_given = Vec::new();
    for case in cases::invalid_cases() {
        let rule = case.rule.unwrap();
        if !matches!(rule.number(), 1..=7 | 10..=12) {
            continue;
        }
        let (bytes, name) = (&case.bytes[..], &case.name);
        let header = &bytes[..bytes.len().min(160)];
        let mut buffer = vec![0u8; 1 << 16];
        let mut decoder = Decoder::new(&mut buffer);
        let at_once = decoder.decode(header).map(|_| ());
        match Decoder::buffer_needed(header) {
            Err(e) => {
                assert_eq!(e.rule(), rule, "{name}");
                if matches!(rule.number(), 2..=7) {
                    assert_eq!(at_once, Err(DecodeError::Invalid(e)), "{name}: at once");
                } else {
                    assert_eq!(at_once, Ok(()), "{name}: held");
                    let (verdict, _) = decode(bytes, 4096, 1 << 16, false);
                    assert_eq!(verdict, Err(DecodeError::Invalid(e)), "{name}: at the end");
                }
            }
            Ok(needed) => {
                assert!(matches!(rule.number(), 3 | 5), "{name}: a length for {rule:?}");
                assert_eq!(at_once, Ok(()), "{name}: the header alone decides nothing");
                assert!(decoder.is_doomed(), "{name}");
                // Under Miri not byte by byte (a call per byte there).
                let chunks =
                    if cfg!(miri) { &[7, bytes.len().max(1)][..] } else { &[1, 7, bytes.len().max(1)][..] };
                for &chunk in chunks {
                    let (verdict, run) = decode(bytes, chunk, needed as usize, false);
                    assert_eq!(
                        verdict.map_err(|e| match e {
                            DecodeError::Invalid(e) => e.rule(),
                            other => panic!("{name}: {other}"),
                        }),
                        Err(rule),
                        "{name} in {chunk}-byte chunks"
                    );
                    assert_eq!(run.asked, [] as [u64; 0], "{name}: the length sufficed");
                }
                let mut short = vec![0u8; needed as usize - 1];
                let mut decoder = Decoder::new(&mut short);
                assert_eq!(
                    decoder.decode(bytes).map(|_| ()),
                    Err(DecodeError::BufferTooSmall { needed }),
                    "{name}"
                );
                lengths_given.push(name.clone());
            }
        }
    }
    lengths_given.sort();
    assert_eq!(lengths_given, ["R3-major-2", "R5-bit0", "R5-damaged-and-cut-short"]);
}

/// Why `buffer_needed` cannot name the rule of `R3-major-2` from its header: the same header before a damaged
/// prefix is R13 (the header diagnosis: the checksum over the prefix does not match), with the same length.
#[test]
fn the_prefix_decides_between_r3_and_r13_for_the_same_header() {
    let case = cases::invalid_cases().iter().find(|c| c.name == "R3-major-2").unwrap();
    let mut damaged = case.bytes.clone();
    let needed = Decoder::buffer_needed(&damaged[..160]).unwrap();
    damaged[200] ^= 1; // in the table, inside the checksummed prefix
    assert_eq!(Decoder::buffer_needed(&damaged[..160]), Ok(needed));
    let rules: Vec<u8> = [&case.bytes, &damaged]
        .iter()
        .map(|bytes| match decode(bytes, 64, needed as usize, false).0 {
            Err(DecodeError::Invalid(e)) => e.rule().number(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(rules, [3, 13]);
}

/// `replace_buffer` with a buffer shorter than the bytes the state keeps is refused as `resume` refuses it,
/// until a buffer that long, holding them, replaces it.
#[test]
fn a_shorter_replaced_buffer_is_refused_until_a_long_enough_one_replaces_it() {
    let bytes = &cases::valid_cases()[0].bytes;
    let (expected, payloads) = reference(bytes);
    let mut decoder = Decoder::new(Box::leak(vec![0u8; 4096].into_boxed_slice()));
    let (used, _) = decoder.decode(&bytes[..200]).unwrap();
    let kept = decoder.state().kept_len() as usize;
    assert_eq!(kept as u64, Decoder::buffer_needed(bytes).unwrap(), "the prefix, trailer and checksums");
    let old = decoder.replace_buffer(Box::leak(vec![0u8; kept - 1].into_boxed_slice()));
    let exact = Box::leak(old[..kept].to_vec().into_boxed_slice());
    let refused = Err(DecodeError::BufferTooSmall { needed: kept as u64 });
    assert_eq!(decoder.decode(&bytes[used..]).map(|_| ()), refused);
    assert_eq!(decoder.position(), used as u64, "nothing consumed");
    assert!(!decoder.is_doomed(), "a short buffer breaks no rule");
    decoder.replace_buffer(exact);
    let mut got = Vec::new();
    assert_eq!(
        feed_growing(&mut decoder, &bytes[used..], &mut got).and_then(|()| decoder.finish()),
        expected.map_err(DecodeError::Invalid)
    );
    assert_eq!(got, payloads);
}
