//! The push decoder against the reader: for any bytes and any split into chunks, `Decoder`'s verdict is
//! `Container::parse` + `verify`'s, and the payload bytes it gives are the entries' payloads, in order.

mod support;

use proptest::prelude::*;
use support::cases;
use tpack::stream::{DecodeError, Decoder, DecoderState, Event, Layout, Placer, Region};
use tpack::write::{Builder, EntryDecl};
use tpack::{Container, Dtype, Error};

/// A buffer larger than any vector needs (their prefixes, and those of their nested containers, are a few
/// KiB).
const BUFFER: usize = 1 << 16;

/// The vectors a test goes through: all of them natively; under Miri (which interprets every instruction,
/// about a thousand times slower) every `miri_step`-th one of at most 2 KiB, so that a test takes seconds.
fn sample(
    cases: impl Iterator<Item = &'static cases::Case>,
    miri_step: usize,
) -> impl Iterator<Item = &'static cases::Case> {
    let small = |c: &&cases::Case| !cfg!(miri) || c.bytes.len() <= 2048;
    cases.filter(small).step_by(if cfg!(miri) { miri_step } else { 1 })
}

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
    let (verdict, got, saw_prefix) = decode(bytes, cuts, BUFFER);
    assert_eq!(verdict, expected.map_err(DecodeError::Invalid), "{name}, cut at {cuts:?}");
    if verdict.is_ok() {
        assert!(saw_prefix, "{name}: a valid container gives its prefix");
        assert_eq!(got, payloads, "{name}: payload bytes");
    }
}

#[test]
fn every_vector_at_every_chunk_size() {
    // Under Miri a decode in 5-byte chunks takes seconds: a sample, in 64-byte chunks and whole.
    let sizes: Vec<usize> =
        if cfg!(miri) { vec![64, 1 << 20] } else { (1..=64).chain([100, 1000, 4096, 1 << 20]).collect() };
    for case in sample(cases::all(), 8) {
        for &size in &sizes {
            let cuts: Vec<usize> = (size..case.bytes.len()).step_by(size).collect();
            check(&case.name, &case.bytes, &cuts);
        }
    }
}

#[test]
fn header_diagnosis_agrees_with_the_reader_for_every_flipped_version_or_flag_bit() {
    // Spec §12's header diagnosis: R3/R5 of an otherwise sound header wait for the prefix, whose checksum makes
    // them R13; whole, in small chunks, and cut before and after the prefix.
    let valid = &cases::valid_cases()[0].bytes;
    let step = if cfg!(miri) { 29 } else { 1 };
    for bit in (8 * 8..10 * 8).chain(16 * 8..24 * 8).step_by(step) {
        let mut damaged = valid.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        let name = format!("bit {bit} flipped");
        for len in [170, 400, damaged.len() - 1, damaged.len()] {
            let cuts: Vec<usize> = (7..len).step_by(7).collect();
            check(&name, &damaged[..len], &cuts);
            check(&name, &damaged[..len], &[]);
        }
    }
}

#[test]
fn every_vector_truncated_and_extended() {
    for case in sample(cases::all(), 32) {
        let b = &case.bytes;
        let lens: &[usize] = if cfg!(miri) {
            &[159, b.len() / 2, b.len().saturating_sub(1)]
        } else {
            &[0, 1, 159, 160, b.len() / 2, b.len().saturating_sub(4), b.len().saturating_sub(1)]
        };
        for &len in lens {
            check(&case.name, &b[..len.min(b.len())], &[]);
        }
        let mut longer = b.clone();
        longer.push(0);
        check(&case.name, &longer, &[b.len()]);
    }
}

/// Nine levels (the container and eight depths of nesting) of plain numbers, at the figure the README gives
/// (its text is read here, so the docs and the type cannot drift apart). Regression: this test compared
/// `SIZE` with the expression that defines it, which could not fail.
#[test]
fn the_state_is_small_and_its_size_is_the_documented_one() {
    const { assert!(DecoderState::SIZE <= 2048) };
    if cfg!(target_pointer_width = "64") {
        let readme = include_str!("../README.md");
        let documented = format!(
            "| RAM: stream decoder state, on the stack (`DecoderState::SIZE`) | {} |",
            DecoderState::SIZE
        );
        assert!(
            readme.contains(&documented),
            "README.md does not give the decoder state as {} bytes",
            DecoderState::SIZE
        );
        assert!(readme.contains(&format!("a fixed {}-byte state", DecoderState::SIZE)));
    }
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
    for case in sample(cases::all(), 24) {
        let bytes = &case.bytes;
        let points: &[usize] = if cfg!(miri) {
            &[160, bytes.len() / 2]
        } else {
            &[1, 160, bytes.len() / 3, bytes.len() / 2, bytes.len().saturating_sub(1)]
        };
        for &at in points {
            let at = at.min(bytes.len());
            let mut first = vec![0u8; BUFFER];
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
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 2000 }))]

    /// Damaged vectors, cut anywhere: the decoder and the reader agree on every one.
    #[test]
    fn decoder_and_reader_agree_on_damaged_files(
        which in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        resize in prop_oneof![Just(0i64), -8i64..8],
    ) {
        let all: Vec<_> = sample(cases::all(), 1).collect();
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
        let (verdict, got, _) = decode(&bytes, &cuts, BUFFER);
        prop_assert_eq!(verdict, expected.map_err(DecodeError::Invalid));
        if verdict.is_ok() {
            prop_assert_eq!(got, payloads);
        }
    }
}

/// A RAM stand-in for a flash partition: erase sets 0xFF, writes must be whole aligned blocks into erased
/// bytes, and every call is logged.
struct Flash {
    bytes: Vec<u8>,
    block: usize,
    erased: Vec<bool>,
    calls: Vec<String>,
}

impl Flash {
    fn new(len: usize, block: usize) -> Self {
        Flash { bytes: vec![0x5A; len], block, erased: vec![false; len], calls: Vec::new() }
    }
}

impl Region for Flash {
    type Error = String;

    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn erase(&mut self, offset: u64, len: u64) -> Result<(), String> {
        let (o, l) = (offset as usize, len as usize);
        assert_eq!((o % self.block, l % self.block), (0, 0), "erase on blocks");
        self.bytes[o..o + l].fill(0xFF);
        self.erased[o..o + l].fill(true);
        self.calls.push(format!("erase {o} {l}"));
        Ok(())
    }

    fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), String> {
        let o = offset as usize;
        assert_eq!((o % self.block, data.len() % self.block), (0, 0), "write on blocks");
        assert!(self.erased[o..o + data.len()].iter().all(|&e| e), "write into erased bytes only, once");
        self.erased[o..o + data.len()].fill(false);
        self.bytes[o..o + data.len()].copy_from_slice(data);
        self.calls.push(format!("write {o} {}", data.len()));
        Ok(())
    }
}

/// Decodes `bytes` in `chunk`-byte pieces into `flash` with a placer of write block `B`.
fn place<const B: usize>(
    bytes: &[u8],
    chunk: usize,
    flash: Flash,
    layout: Layout,
) -> (Result<(), String>, Flash) {
    let mut buffer = vec![0u8; BUFFER];
    let mut decoder = Decoder::new(&mut buffer);
    let mut placer: Placer<Flash, B> = Placer::new(flash, layout);
    for piece in bytes.chunks(chunk) {
        let mut rest = piece;
        loop {
            match decoder.decode(rest) {
                Err(e) => return (Err(e.to_string()), placer.finish().map_err(|e| e.to_string()).unwrap()),
                Ok((used, event)) => {
                    rest = &rest[used..];
                    let Some(event) = event else { break };
                    if let Err(e) = placer.place(&decoder, &event) {
                        return (Err(e.to_string()), placer.finish().unwrap_or_else(|_| panic!()));
                    }
                }
            }
        }
    }
    let verdict = decoder.finish().map_err(|e| e.to_string());
    (verdict, placer.finish().map_err(|e| e.to_string()).unwrap())
}

#[test]
fn an_image_is_placed_byte_for_byte_in_whole_blocks() {
    for case in sample(cases::valid_cases().iter(), 6) {
        for chunk in if cfg!(miri) { &[64][..] } else { &[1, 7, 64, 4096][..] } {
            let chunk = *chunk;
            let (verdict, flash) = place::<16>(&case.bytes, chunk, Flash::new(1 << 20, 16), Layout::Image);
            verdict.unwrap_or_else(|e| panic!("{}: {e}", case.name));
            assert!(flash.bytes[..case.bytes.len()] == case.bytes[..], "{} at chunk {chunk}", case.name);
            let c = Container::parse(&flash.bytes[..case.bytes.len()]).unwrap();
            c.verify().unwrap();
        }
    }
}

#[test]
fn nothing_is_erased_or_written_for_an_invalid_prefix() {
    // The rules that the prefix alone decides; the others (the length R8-R9, the trailer R14, a nested
    // container R38-R39, the payloads R37 and R50) are only known once payloads have flowed.
    let late = [8, 9, 14, 37, 38, 39, 50];
    let mut checked = 0;
    let prefix_rules = cases::invalid_cases().iter().filter(|c| !late.contains(&c.rule.unwrap().number()));
    for case in sample(prefix_rules, 12) {
        let chunk = if cfg!(miri) { 64 } else { 5 };
        let (verdict, flash) = place::<8>(&case.bytes, chunk, Flash::new(1 << 20, 8), Layout::Image);
        assert!(verdict.is_err(), "{}", case.name);
        assert!(flash.calls.is_empty(), "{}: {:?}", case.name, &flash.calls[..flash.calls.len().min(4)]);
        checked += 1;
    }
    assert!(checked > if cfg!(miri) { 5 } else { 100 }, "{checked}");
}

#[test]
fn targets_are_placed_at_their_addresses() {
    let mut b = Builder::new();
    let a: Vec<u8> = (0..40).collect();
    let c: Vec<u8> = (100..150).collect();
    b.push(EntryDecl::new("hi", Dtype::U8, &[50]).with_target(0x2000_0040).with_data(&c)).unwrap();
    b.push(EntryDecl::new("lo", Dtype::U8, &[40]).with_target(0x2000_0000).with_data(&a)).unwrap();
    b.push(EntryDecl::new("none", Dtype::U8, &[3]).with_data(&[9, 9, 9])).unwrap();
    let bytes = b.finish().unwrap();
    let layout = Layout::Targets { base: 0x2000_0000 };
    let (verdict, flash) = place::<16>(&bytes, 3, Flash::new(256, 16), layout);
    verdict.unwrap();
    assert_eq!(&flash.bytes[..40], &a[..]);
    assert_eq!(&flash.bytes[0x40..0x40 + 50], &c[..]);
    assert!(flash.bytes[0x80..].iter().all(|&v| v == 0x5A), "nothing else touched");
    // Too small a region, a target off the write block, a target below the base: refused before any erase.
    for (flash, layout, why) in [
        (Flash::new(100, 16), layout, "does not fit"),
        (Flash::new(256, 32), Layout::Targets { base: 0x2000_0010 }, "not on a write block"),
        (Flash::new(256, 16), Layout::Targets { base: 0x2000_0020 }, "outside the region"),
    ] {
        let block = flash.block;
        let (verdict, flash) = if block == 32 {
            place::<32>(&bytes, 5, flash, layout)
        } else {
            place::<16>(&bytes, 5, flash, layout)
        };
        let e = verdict.unwrap_err();
        assert!(e.contains(why), "{e}");
        assert!(flash.calls.is_empty(), "{:?}", flash.calls);
    }
    let mut b = Builder::new();
    b.push(EntryDecl::new("a", Dtype::U8, &[20]).with_target(0x2000_0000).with_data(&[1; 20])).unwrap();
    b.push(EntryDecl::new("b", Dtype::U8, &[20]).with_target(0x2000_0010).with_data(&[2; 20])).unwrap();
    let overlapping = b.finish().unwrap();
    let (verdict, flash) = place::<16>(&overlapping, 5, Flash::new(256, 16), layout);
    assert!(verdict.unwrap_err().contains("overlaps"));
    assert!(flash.calls.is_empty());
}
