//! The push decoder with a policy ([`SignedDecoder`]) gives the reader's verdict on every signed vector,
//! whatever the chunk sizes, and releases nothing after a prefix the policy refuses.

mod support;

use support::cases::{self, signature};
use tpack::auth::{Policy, SoftwareCrypto};
use tpack::stream::{Event, SignedDecoder};
use tpack::Rule;

/// Decodes `bytes` in chunks of `chunk` bytes; returns the verdict's rule and the events released after the
/// prefix (payload bytes and entry ends).
fn decode(bytes: &[u8], check: &signature::Check, chunk: usize) -> (Option<Rule>, usize, bool) {
    let keys = check.trusted_keys();
    let policy = check.policy(&keys);
    let mut buffer = vec![0u8; 1 << 16];
    let mut digests = vec![0u8; 32 * 64];
    let mut decoder = SignedDecoder::new(&mut buffer, &mut digests, policy, SoftwareCrypto);
    let mut released = 0;
    let mut prefix = false;
    for piece in bytes.chunks(chunk) {
        let mut rest = piece;
        loop {
            match decoder.decode(rest) {
                Ok((used, Some(event))) => {
                    rest = &rest[used..];
                    match event {
                        Event::Prefix => prefix = true,
                        Event::Payload { .. } | Event::EntryEnd { .. } => released += 1,
                        _ => {}
                    }
                }
                Ok((_, None)) => break,
                Err(e) => return (Some(e.rule_or_panic()), released, prefix),
            }
        }
    }
    (decoder.finish().err().map(|e| e.rule_or_panic()), released, prefix)
}

trait RuleOf {
    fn rule_or_panic(&self) -> Rule;
}

impl RuleOf for tpack::stream::DecodeError {
    fn rule_or_panic(&self) -> Rule {
        match self {
            tpack::stream::DecodeError::Invalid(e) => e.rule(),
            other => panic!("{other}"),
        }
    }
}

#[test]
fn the_signed_decoder_agrees_with_the_reader_on_every_check() {
    let mut checked = 0;
    for case in cases::valid_cases() {
        for check in &case.checks {
            let expected = signature::verdict(&case.bytes, check);
            // Under Miri (checks decided by the prefix only, see `cases::signature`), one chunk size.
            let chunks: &[usize] = if cfg!(miri) { &[64] } else { &[1, 7, 64, 1 << 20] };
            for &chunk in chunks {
                let (verdict, released, prefix) = decode(&case.bytes, check, chunk);
                assert_eq!(verdict, expected, "{} in chunks of {chunk}: {check:?}", case.name);
                // A refusal the prefix decides releases nothing: not the prefix, no payload byte.
                if matches!(expected, Some(r) if r.number() >= 58 && r.number() <= 62) {
                    assert_eq!((released, prefix), (0, false), "{}: released after a refusal", case.name);
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= if cfg!(miri) { 10 } else { 20 }, "{checked}");
}

/// Integrity errors and digest errors interleave entry by entry: a payload changed without fixing its CRC is
/// R64 (its digest comes before its CRC), and a bad CRC of an earlier entry comes before a later digest.
#[test]
#[cfg_attr(
    miri,
    ignore = "signs and checks Ed25519 signatures: minutes each under Miri; natively on every run"
)]
fn digest_and_checksum_errors_follow_the_entry_order() {
    let k1 = signature::trust(&signature::test_key(1));
    let check =
        signature::Check { keys: vec![k1], require: true, min_counter: 0, subject: None, verdict: None };
    let signed = signature::signed_example();
    let c = tpack::Container::parse(&signed).unwrap();
    let first = c.entry(0).unwrap().range();
    let second = c.entry(1).unwrap().range();
    // Entry 1's payload changed, CRCs not fixed: R64 at entry 1.
    let mut bytes = signed.clone();
    bytes[second.start as usize] ^= 1;
    assert_eq!(signature::verdict(&bytes, &check), Some(Rule::EntryDigest));
    assert_eq!(decode(&bytes, &check, 13).0, Some(Rule::EntryDigest));
    // And entry 0's stored CRC wrong too (the trailer's checksum fixed): R50 at entry 0 comes first.
    let trailer = tpack::Container::parse(&signed).unwrap().header().sections[5].offset.get() as usize;
    bytes[trailer] ^= 1;
    let n = c.len();
    let crc = tpack::checksum::crc32(&bytes[trailer..trailer + 4 * n]);
    bytes[trailer + 4 * n..trailer + 4 * n + 4].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(signature::verdict(&bytes, &check), Some(Rule::EntryChecksum));
    assert_eq!(decode(&bytes, &check, 13).0, Some(Rule::EntryChecksum));
    // Regression (found by the C fuzz harness): a non-zero padding byte before entry 0 and a later entry's
    // payload changed, every CRC recomputed. R37 at entry 0 comes first; the decoder placed the padding error
    // with a prefix view that its own verdict had already ended, and said R64.
    let mut bytes = signed.clone();
    let padding = first.start as usize - 1;
    bytes[padding] = 1;
    bytes[second.start as usize] ^= 1;
    support::raw::fix(&mut bytes);
    assert_eq!(signature::verdict(&bytes, &check), Some(Rule::PaddingNonZero));
    assert_eq!(decode(&bytes, &check, 13).0, Some(Rule::PaddingNonZero));
}

/// A RAM region that counts what it is asked to do.
struct Ram {
    bytes: Vec<u8>,
    writes: usize,
    erases: usize,
}

impl Ram {
    fn new(len: usize) -> Self {
        Ram { bytes: vec![0xff; len], writes: 0, erases: 0 }
    }
}

impl tpack::stream::Region for Ram {
    type Error = std::convert::Infallible;
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn erase(&mut self, offset: u64, len: u64) -> Result<(), Self::Error> {
        self.erases += 1;
        self.bytes[offset as usize..(offset + len) as usize].fill(0xff);
        Ok(())
    }
    fn write(&mut self, offset: u64, bytes: &[u8]) -> Result<(), Self::Error> {
        self.writes += 1;
        self.bytes[offset as usize..offset as usize + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }
}

impl tpack::stream::ReadRegion for Ram {
    fn read(&self, offset: u64, into: &mut [u8]) -> Result<(), Self::Error> {
        into.copy_from_slice(&self.bytes[offset as usize..offset as usize + into.len()]);
        Ok(())
    }
}

/// Streams `bytes` into a staging region and, if the signed decoder accepts it, commits it to a final region.
/// Returns the verdict, the staging region and the final region.
fn stage_and_commit(bytes: &[u8], policy: Policy<'_>) -> (Option<Rule>, Ram, Ram) {
    use tpack::stream::{Layout, Placer};
    let mut buffer = vec![0u8; 1 << 16];
    let mut digests = vec![0u8; 32 * 64];
    let mut decoder = SignedDecoder::new(&mut buffer, &mut digests, policy, SoftwareCrypto);
    let mut placer = Placer::<_, 32>::new(Ram::new(8192), Layout::Image);
    let mut destination = Ram::new(8192);
    for piece in bytes.chunks(100) {
        let mut rest = piece;
        while let (used, Some(event)) = decoder.decode(rest).unwrap() {
            rest = &rest[used..];
            placer.place(decoder.decoder(), &event).unwrap();
        }
    }
    match decoder.finish() {
        Ok(proof) => {
            let staging = placer.commit(&proof, &mut destination).unwrap();
            (None, staging, destination)
        }
        Err(e) => (Some(e.rule_or_panic()), placer.finish().unwrap(), destination),
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "signs and checks Ed25519 signatures: minutes each under Miri; natively on every run"
)]
fn only_an_authentic_stream_is_committed_and_a_prefix_refusal_writes_nothing() {
    let key1 = signature::test_key(1);
    let trusted = [key1.public().trusted()];
    let signed = signature::signed_example();
    // Accepted: committed byte for byte.
    let (verdict, staging, destination) = stage_and_commit(&signed, Policy::require(&trusted));
    assert_eq!(verdict, None);
    assert_eq!(&destination.bytes[..signed.len()], &signed[..]);
    assert!(staging.writes > 0 && destination.writes > 0);
    // Lower counter than the floor: refused from the prefix, nothing erased or written anywhere.
    let policy = Policy { min_counter: 8, ..Policy::require(&trusted) };
    let (verdict, staging, destination) = stage_and_commit(&signed, policy);
    assert_eq!(verdict, Some(Rule::Rollback));
    assert_eq!((staging.writes, staging.erases, destination.writes, destination.erases), (0, 0, 0, 0));
    // Another key: the same.
    let key2 = signature::test_key(2);
    let other = [key2.public().trusted()];
    let (verdict, staging, destination) = stage_and_commit(&signed, Policy::require(&other));
    assert_eq!(verdict, Some(Rule::UnknownKey));
    assert_eq!((staging.writes, destination.writes), (0, 0));
    // Unsigned, a signature required: the same.
    let unsigned = tpack::sign::unsign_container(&signed).unwrap();
    let (verdict, staging, destination) = stage_and_commit(&unsigned, Policy::require(&trusted));
    assert_eq!(verdict, Some(Rule::SignatureRequired));
    assert_eq!((staging.writes, destination.writes), (0, 0));
    // A payload changed and every CRC recomputed: staged (the verdict comes at the end), never committed.
    let case = cases::valid_cases().iter().find(|c| c.name == "signed-tampered-payload").unwrap();
    let (verdict, staging, destination) = stage_and_commit(&case.bytes, Policy::require(&trusted));
    assert_eq!(verdict, Some(Rule::EntryDigest));
    assert!(staging.writes > 0);
    assert_eq!((destination.writes, destination.erases), (0, 0));
}
