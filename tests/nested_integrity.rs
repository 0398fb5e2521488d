//! An error found inside a nested container — a non-zero padding byte (R37) or a payload that does not match
//! its checksum (R50), spec §9 — says how deep that container is and which entry of the outermost container
//! holds it, and the reader (`verify`, `verification`), the authenticated verification, the push decoder at
//! any chunking and the signed decoder say it alike, field by field. Regression: they gave the nested
//! container's own entry and offset alone, and the signed decoder ordered such an error against R64 by the
//! nested entry's index, as if it were the outer container's.

use tpack::stream::{DecodeError, Decoder};
use tpack::write::{EntryDecl, StreamWriter, VecBookkeeping};
use tpack::{Container, Dtype, Error, Nesting, Rule};

/// A container of `entries` (name, dtype, one-dimensional payload), written as it is: a `CONTAINER` payload is
/// not looked into, so a damaged one stays damaged.
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

/// The innermost container: entries `a` and `b`, with padding between them (alignment 64).
fn innermost() -> Vec<u8> {
    written(&[("a", Dtype::U8, &[1, 2, 3, 4]), ("b", Dtype::U8, &[5, 6, 7, 8])])
}

/// The innermost container with a byte of entry `a`'s payload changed after its checksum was computed.
fn damaged_payload() -> Vec<u8> {
    let mut inner = innermost();
    let at = Container::parse(&inner).unwrap().entry(0).unwrap().offset() as usize;
    inner[at + 2] ^= 0x40;
    inner
}

/// The innermost container with the last padding byte before entry `b` set.
fn damaged_padding() -> Vec<u8> {
    let mut inner = innermost();
    let at = Container::parse(&inner).unwrap().entry(1).unwrap().offset() as usize;
    inner[at - 1] = 1;
    inner
}

/// `inner` two levels down: in entry `deep` (1) of a container in entry `mid` (2) of the outermost one.
fn two_down(inner: &[u8]) -> Vec<u8> {
    let middle = written(&[("x", Dtype::U8, &[9]), ("deep", Dtype::CONTAINER, inner)]);
    written(&[("p", Dtype::U8, &[0]), ("q", Dtype::U8, &[0]), ("mid", Dtype::CONTAINER, &middle)])
}

/// The push decoder's verdict on `bytes` fed in chunks of `chunk` bytes.
fn decoded(bytes: &[u8], chunk: usize) -> Result<(), DecodeError> {
    let mut buffer = vec![0u8; 1 << 16];
    let mut decoder = Decoder::new(&mut buffer);
    for piece in bytes.chunks(chunk) {
        let mut rest = piece;
        while let (used, Some(_)) = decoder.decode(rest)? {
            rest = &rest[used..];
        }
    }
    decoder.finish()
}

/// What every verifier must say of `inner` damaged two levels down: the innermost container's own error,
/// placed at depth 2 inside the outermost entry 2.
fn check_two_down(inner: &[u8], rule: Rule) {
    let own = Container::parse(inner).unwrap().verify().unwrap_err();
    assert_eq!(own.rule(), rule);
    assert_eq!((own.context().depth, own.context().outer_entry), (Some(0), None));
    let bytes = two_down(inner);
    let outer = Container::parse(&bytes).unwrap();
    let error = outer.verify().unwrap_err();
    let expected = match own {
        Error::PaddingNonZero { offset, .. } => Error::PaddingNonZero { offset, nesting: Nesting::new(2, 2) },
        Error::EntryChecksum { entry, stored, computed, .. } => {
            Error::EntryChecksum { entry, stored, computed, nesting: Nesting::new(2, 2) }
        }
        other => panic!("{other}"),
    };
    assert_eq!(error, expected);
    let context = error.context();
    assert_eq!((context.depth, context.outer_entry), (Some(2), Some(2)));
    // Its own entry and offset are the innermost container's.
    assert_eq!((context.entry, context.offset), (own.context().entry, own.context().offset));
    let message = error.to_string();
    assert!(message.starts_with(rule.id()), "{message}");
    assert!(message.ends_with(", in the container at depth 2 inside entry 2"), "{message}");

    // Entry by entry: the error is entry 2's.
    let found: Vec<_> = outer.verification().map(|v| v.result()).collect();
    assert_eq!(found, [Ok(()), Ok(()), Err(expected)]);
    // The middle container verified on its own: one level down, inside its entry 1.
    let middle = outer.entry(2).unwrap().nested().unwrap();
    assert_eq!(middle.verify().unwrap_err().context().outer_entry, Some(1));
    assert_eq!(middle.verify().unwrap_err().context().depth, Some(1));

    // The push decoder, at any chunking.
    for chunk in [1, 3, 64, 1000, bytes.len()] {
        assert_eq!(decoded(&bytes, chunk), Err(DecodeError::Invalid(expected)), "chunks of {chunk}");
    }
}

#[test]
fn a_payload_damaged_two_levels_down_says_its_depth_and_outer_entry() {
    check_two_down(&damaged_payload(), Rule::EntryChecksum);
}

#[test]
fn padding_damaged_two_levels_down_says_its_depth_and_outer_entry() {
    check_two_down(&damaged_padding(), Rule::PaddingNonZero);
}

#[cfg(not(miri))] // Signs: minutes per signature under Miri.
mod signed {
    use tpack::auth::{Algorithm, Policy, SoftwareCrypto};
    use tpack::sign::{SignOptions, SigningKey};
    use tpack::stream::{DecodeError, SignedDecoder};
    use tpack::write::{Builder, NewEntry};
    use tpack::{Container, Dtype, Error, Rule};

    fn key() -> SigningKey {
        SigningKey::from_secret_bytes(Algorithm::Ed25519, &[7; 32]).unwrap()
    }

    /// The outermost container of [`super::two_down`], signed.
    fn signed_two_down(inner: &[u8]) -> Vec<u8> {
        let middle = super::written(&[("x", Dtype::U8, &[9]), ("deep", Dtype::CONTAINER, inner)]);
        let mut builder = Builder::new();
        builder.push(NewEntry::new("p", Dtype::U8, &[1], &[0])).unwrap();
        builder.push(NewEntry::new("q", Dtype::U8, &[1], &[0])).unwrap();
        builder.push(NewEntry::new("mid", Dtype::CONTAINER, &[middle.len() as u64], &middle)).unwrap();
        builder.sign(&key(), &SignOptions::default()).unwrap();
        builder.finish().unwrap()
    }

    fn authenticated(bytes: &[u8]) -> Result<(), Error> {
        let key = key();
        let trusted = [key.public().trusted()];
        let container = Container::parse(bytes).unwrap();
        container.authenticate(&Policy::require(&trusted), &SoftwareCrypto).unwrap().verify(&SoftwareCrypto)
    }

    fn signed_decoded(bytes: &[u8], chunk: usize) -> Result<(), DecodeError> {
        let key = key();
        let trusted = [key.public().trusted()];
        let mut buffer = vec![0u8; 1 << 16];
        let mut digests = vec![0u8; 32 * 8];
        let mut decoder =
            SignedDecoder::new(&mut buffer, &mut digests, Policy::require(&trusted), SoftwareCrypto);
        for piece in bytes.chunks(chunk) {
            let mut rest = piece;
            while let (used, Some(_)) = decoder.decode(rest)? {
                rest = &rest[used..];
            }
        }
        decoder.finish().map(|_| ())
    }

    #[test]
    fn the_authenticated_verifications_place_a_nested_error_like_the_reader() {
        for inner in [super::damaged_payload(), super::damaged_padding()] {
            let bytes = signed_two_down(&inner);
            let expected = Container::parse(&bytes).unwrap().verify().unwrap_err();
            assert_eq!((expected.context().depth, expected.context().outer_entry), (Some(2), Some(2)));
            assert_eq!(authenticated(&bytes), Err(expected));
            for chunk in [1, 7, 4096] {
                assert_eq!(
                    signed_decoded(&bytes, chunk),
                    Err(DecodeError::Invalid(expected)),
                    "chunks of {chunk}"
                );
            }
        }
    }

    /// Entry 1's payload changed after signing, its checksum recomputed (R64 there, no R50), and a payload
    /// damaged inside entry 2 (at the nested entry 0): R64 at entry 1 comes first. Regression: the signed
    /// decoder placed the nested error by its own entry 0 and reported it first.
    #[test]
    fn r64_of_an_earlier_entry_comes_before_a_nested_error() {
        use tpack::checksum::crc32;
        let mut bytes = signed_two_down(&super::damaged_payload());
        let c = Container::parse(&bytes).unwrap();
        let (at, n) = (c.entry(1).unwrap().offset() as usize, c.len());
        let trailer = c.header().sections[5].offset.get() as usize;
        bytes[at] ^= 1;
        let crc = crc32(&bytes[at..at + 1]);
        bytes[trailer + 4..trailer + 8].copy_from_slice(&crc.to_le_bytes());
        let crc = crc32(&bytes[trailer..trailer + 4 * n]);
        bytes[trailer + 4 * n..trailer + 4 * n + 4].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(authenticated(&bytes), Err(Error::EntryDigest { entry: 1 }));
        for chunk in [1, 7, 4096] {
            let verdict = signed_decoded(&bytes, chunk);
            assert_eq!(
                verdict,
                Err(DecodeError::Invalid(Error::EntryDigest { entry: 1 })),
                "chunks of {chunk}"
            );
        }
        // Without authentication, the nested error stands.
        let unsigned = Container::parse(&bytes).unwrap().verify().unwrap_err();
        assert_eq!((unsigned.rule(), unsigned.context().outer_entry), (Rule::EntryChecksum, Some(2)));
    }
}
