//! The push decoder against the reader: for any bytes and any split into chunks, `Decoder`'s verdict is
//! `Container::parse` + `verify`'s, and the payload bytes it gives are the entries' payloads, in order.

mod support;

use proptest::prelude::*;
use support::cases;
use tpack::stream::{DecodeError, Decoder, DecoderState, Event};
use tpack::{Container, Error};

/// What the reader says of `bytes`, and the payloads of the entries of a valid container.
fn reference(bytes: &[u8]) -> (Result<(), Error>, Vec<Vec<u8>>) {
    match Container::parse(bytes) {
        Err(e) => (Err(e), Vec::new()),
        Ok(c) => (c.verify(), c.entries().map(|e| e.payload().to_vec()).collect()),
    }
}

/// What the decoder does with `bytes` cut at `cuts` (sorted positions): its verdict, and per entry the bytes
/// its events gave, checking the events' order as it goes.
fn decode(bytes: &[u8], cuts: &[usize], buffer_len: usize) -> (Result<(), DecodeError>, Vec<Vec<u8>>, bool) {
    let mut buffer = vec![0u8; buffer_len];
    let mut decoder = Decoder::new(&mut buffer);
    let mut payloads: Vec<Vec<u8>> = Vec::new();
    let mut saw_prefix = false;
    let mut ended = 0u32;
    let mut start = 0;
    let bounds = cuts.iter().copied().chain([bytes.len()]);
    for end in bounds {
        let mut rest = &bytes[start..end.max(start)];
        start = end.max(start);
        loop {
            match decoder.decode(rest) {
                Err(e) => return (Err(e), payloads, saw_prefix),
                Ok((used, event)) => {
                    rest = &rest[used..];
                    match event {
                        None => {
                            assert!(rest.is_empty(), "no event but bytes left");
                            break;
                        }
                        Some(Event::Prefix) => {
                            assert!(!saw_prefix);
                            saw_prefix = true;
                            payloads = vec![Vec::new(); decoder.prefix().unwrap().len()];
                        }
                        Some(Event::Payload { entry, offset, bytes: b, target }) => {
                            assert!(saw_prefix && entry == ended, "payload of entry {entry} out of order");
                            let p = &mut payloads[entry as usize];
                            assert_eq!(offset, p.len() as u64);
                            assert_eq!(
                                target,
                                decoder.prefix().unwrap().entry(entry as usize).unwrap().target()
                            );
                            p.extend_from_slice(b);
                        }
                        Some(Event::EntryEnd { entry }) => {
                            assert_eq!(entry, ended, "entries end in order");
                            ended += 1;
                        }
                        Some(Event::End) => assert!(!saw_prefix || ended as usize == payloads.len()),
                        Some(other) => panic!("unexpected {other:?}"),
                    }
                }
            }
        }
    }
    let verdict = decoder.finish();
    (verdict, payloads, saw_prefix)
}

fn check(name: &str, bytes: &[u8], cuts: &[usize]) {
    let (expected, payloads) = reference(bytes);
    let (verdict, got, saw_prefix) = decode(bytes, cuts, 1 << 20);
    assert_eq!(verdict, expected.map_err(DecodeError::Invalid), "{name}, cut at {cuts:?}");
    if verdict.is_ok() {
        assert!(saw_prefix, "{name}: a valid container gives its prefix");
        assert_eq!(got, payloads, "{name}: payload bytes");
    }
}

#[test]
fn every_vector_at_every_chunk_size() {
    let sizes: Vec<usize> = if cfg!(miri) {
        vec![1, 7, 64, 1 << 20]
    } else {
        (1..=64).chain([100, 1000, 4096, 1 << 20]).collect()
    };
    for case in cases::all() {
        for &size in &sizes {
            let cuts: Vec<usize> = (size..case.bytes.len()).step_by(size).collect();
            check(&case.name, &case.bytes, &cuts);
        }
    }
}

#[test]
fn every_vector_truncated_and_extended() {
    for case in cases::all().step_by(if cfg!(miri) { 9 } else { 1 }) {
        let b = &case.bytes;
        for len in [0, 1, 159, 160, b.len() / 2, b.len().saturating_sub(4), b.len().saturating_sub(1)] {
            check(&case.name, &b[..len.min(b.len())], &[]);
        }
        let mut longer = b.clone();
        longer.push(0);
        check(&case.name, &longer, &[b.len()]);
    }
}

#[test]
fn the_state_is_small_and_fixed() {
    // Nine levels (the container and eight depths of nesting) of plain numbers.
    assert!(DecoderState::SIZE <= 2048, "{}", DecoderState::SIZE);
    assert_eq!(DecoderState::SIZE, core::mem::size_of::<DecoderState>());
}

#[test]
fn a_buffer_too_small_is_told_with_the_size_needed() {
    let bytes = &cases::valid_cases()[0].bytes;
    let needed = Decoder::buffer_needed(bytes).unwrap();
    let (verdict, _, _) = decode(bytes, &[], needed as usize - 1);
    assert_eq!(verdict, Err(DecodeError::BufferTooSmall { needed }));
    let (verdict, _, _) = decode(bytes, &[], needed as usize);
    assert_eq!(verdict, Ok(()));
    let (verdict, _, _) = decode(bytes, &[], 100);
    assert_eq!(verdict, Err(DecodeError::BufferTooSmall { needed: 160 }));
}

#[test]
fn a_transfer_resumes_from_a_saved_state() {
    for case in cases::all().step_by(if cfg!(miri) { 13 } else { 1 }) {
        let bytes = &case.bytes;
        for at in [1, 160, bytes.len() / 3, bytes.len() / 2, bytes.len().saturating_sub(1)] {
            let at = at.min(bytes.len());
            let mut first = vec![0u8; 1 << 16];
            let mut decoder = Decoder::new(&mut first);
            let mut stopped = None;
            let mut rest = &bytes[..at];
            while !rest.is_empty() {
                match decoder.decode(rest) {
                    Ok((used, _)) => rest = &rest[used..],
                    Err(e) => {
                        stopped = Some(e);
                        break;
                    }
                }
            }
            let state = decoder.state();
            let position = decoder.position();
            // Power off: the state and the buffer's bytes are all that survive.
            let mut second = first.clone();
            let mut resumed = Decoder::resume(&mut second, state);
            let verdict = match stopped {
                Some(e) => Err(e),
                None => {
                    let mut rest = &bytes[position as usize..];
                    loop {
                        match resumed.decode(rest) {
                            Ok((used, Some(_))) => rest = &rest[used..],
                            Ok((_, None)) => break resumed.finish(),
                            Err(e) => break Err(e),
                        }
                    }
                }
            };
            assert_eq!(
                verdict,
                reference(bytes).0.map_err(DecodeError::Invalid),
                "{} resumed at {at}",
                case.name
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 2000 }))]

    /// Damaged vectors, cut anywhere: the decoder and the reader agree on every one.
    #[test]
    fn decoder_and_reader_agree_on_damaged_files(
        which in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        resize in prop_oneof![Just(0i64), -8i64..8],
    ) {
        let all: Vec<_> = cases::all().collect();
        let mut bytes = all[which.index(all.len())].bytes.clone();
        for (at, value) in &edits {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] = *value;
            }
        }
        if resize < 0 {
            bytes.truncate(bytes.len().saturating_sub((-resize) as usize));
        } else {
            bytes.extend(std::iter::repeat_n(0u8, resize as usize));
        }
        let mut cuts: Vec<usize> = cut.iter().map(|c| c.index(bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let (expected, payloads) = reference(&bytes);
        let (verdict, got, _) = decode(&bytes, &cuts, 1 << 20);
        prop_assert_eq!(verdict, expected.map_err(DecodeError::Invalid));
        if verdict.is_ok() {
            prop_assert_eq!(got, payloads);
        }
    }
}
