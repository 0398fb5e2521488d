//! `Authenticated::verify` reads each signed payload once, hashing and checksumming it piece by piece: every
//! piece counts for both (R64 and R50), R64 is reported before R50, and the lazy `verify_entry` checks R64 alone.
//! Natively only: it signs, which takes minutes per signature under Miri (see .ci/run's Miri step).
#![cfg(not(miri))]

mod support;

use support::raw::{fix, section};
use tpack::auth::{Policy, SoftwareCrypto};
use tpack::checksum::crc32;
use tpack::sign::{SignOptions, SigningKey};
use tpack::write::{Builder, NewEntry};
use tpack::{Container, Dtype, Error};

/// Longer than two of the pieces `verify` works in (16 KiB), and not a multiple of one.
const BIG: usize = 40_000;

fn key() -> SigningKey {
    SigningKey::from_secret_bytes(tpack::auth::Algorithm::Ed25519, &[7; 32]).unwrap()
}

/// A signed container: `big` (`BIG` bytes) then `small`.
fn signed() -> Vec<u8> {
    let big: Vec<u8> = (0..BIG).map(|i| (i * 31 % 251) as u8).collect();
    let mut builder = Builder::new();
    builder.push(NewEntry::new("big", Dtype::U8, &[BIG as u64], &big)).unwrap();
    builder.push(NewEntry::new("small", Dtype::U8, &[3], &[1, 2, 3])).unwrap();
    builder.sign(&key(), &SignOptions::default()).unwrap();
    builder.finish().unwrap()
}

fn payload_start(bytes: &[u8]) -> usize {
    Container::parse(bytes).unwrap().get("big").unwrap().offset() as usize
}

/// Authenticates `bytes` (which must pass), then runs `verify` and `verify_entry(0)`.
fn verdicts(bytes: &[u8]) -> (Result<(), Error>, Result<(), Error>) {
    let key = key();
    let trusted = [key.public().trusted()];
    let checked =
        Container::parse(bytes).unwrap().authenticate(&Policy::require(&trusted), &SoftwareCrypto).unwrap();
    (checked.verify(&SoftwareCrypto), checked.verify_entry(0, &SoftwareCrypto).map(|_| ()))
}

#[test]
fn an_intact_payload_of_several_pieces_verifies() {
    assert_eq!(verdicts(&signed()), (Ok(()), Ok(())));
}

#[test]
fn a_byte_changed_in_the_last_piece_is_r64_with_or_without_its_crc_recomputed() {
    for recompute in [false, true] {
        let mut bytes = signed();
        let at = payload_start(&bytes) + BIG - 5;
        bytes[at] ^= 0x40;
        if recompute {
            fix(&mut bytes);
        }
        let digest = Err(Error::EntryDigest { entry: 0 });
        assert_eq!(verdicts(&bytes), (digest, digest), "CRC recomputed: {recompute}");
    }
}

/// A trailer checksum that does not match an authentic payload: `verify` still checks R50 (the trailer is
/// not signed), while the lazy `verify_entry` of a signed container checks the digest alone.
#[test]
fn a_wrong_crc_of_an_authentic_payload_is_r50_for_verify() {
    let mut bytes = signed();
    let (trailer, _) = section(&bytes, 5);
    bytes[trailer] ^= 1;
    let n = Container::parse(&signed()).unwrap().len();
    let crc = crc32(&bytes[trailer..trailer + 4 * n]);
    bytes[trailer + 4 * n..trailer + 4 * n + 4].copy_from_slice(&crc.to_le_bytes());
    let (verify, lazy) = verdicts(&bytes);
    assert!(matches!(verify, Err(Error::EntryChecksum { entry: 0, .. })), "{verify:?}");
    assert_eq!(lazy, Ok(()));
}
