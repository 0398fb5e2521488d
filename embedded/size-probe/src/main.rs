//! Validates a container in place — structure and every payload checksum — then looks up an entry and a
//! metadata key, as a bare-metal loader would; with `decoder`, also receives it through the push decoder in
//! small chunks, as a loader fed by a link would; with `signature`, authenticates it instead of checking its
//! CRCs alone: the signature against one trusted Ed25519 key, then every entry against its signed digest.
//! `black_box` keeps the optimiser from folding the work away.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use panic_halt as _;

/// The example model signed by test key 1 (counter 7), in every build: the model's bytes cancel out of each
/// difference `measure.sh` takes, and the reader's work is the same on it as on the unsigned example.
static MODEL: &[u8] = include_bytes!("../../../spec/vectors/valid/signed-ed25519.tpack");

/// The trusted key: test key 1's raw Ed25519 public key (its seed is SHA-256 of "tpack test key 1"; a
/// published test key, never for real use).
#[cfg(feature = "signature")]
const TRUSTED_KEY: [u8; 32] = [
    0x24, 0x1d, 0x42, 0x71, 0x28, 0x4f, 0xe5, 0xf3, 0xf7, 0x0c, 0x05, 0x3f, 0x3d, 0xaf, 0x1b, 0x1b, 0xd0,
    0x04, 0x39, 0xb3, 0x01, 0xd2, 0x62, 0x5b, 0xe8, 0x6e, 0xf2, 0xff, 0xbc, 0x7e, 0x67, 0x23,
];

/// What a loader's link delivers at a time (a UART or radio frame).
#[cfg(feature = "decoder")]
const CHUNK: usize = 64;

/// The decoder's buffer: the example's prefix, trailer and checksums, with room to spare.
#[cfg(feature = "decoder")]
const BUFFER_LEN: usize = 2048;

/// Feeds `bytes` to the push decoder in `CHUNK`-byte pieces, passing every event to `black_box` as a loader
/// would pass payloads to flash; the verdict's rule number, or 0. With `signature`, the decoder is the
/// `SignedDecoder`, authenticating the stream against the same policy as the reader.
#[cfg(feature = "decoder")]
fn receive(bytes: &[u8]) -> u8 {
    use tpack::stream::DecodeError;
    let mut buffer = [0u8; BUFFER_LEN];
    #[cfg(not(feature = "signature"))]
    let mut decoder = tpack::stream::Decoder::new(&mut buffer);
    #[cfg(feature = "signature")]
    let (mut digests, trusted) = ([0u8; DIGESTS_LEN], [trusted_key()]);
    #[cfg(feature = "signature")]
    let mut decoder = tpack::stream::SignedDecoder::new(
        &mut buffer,
        &mut digests,
        policy(&trusted),
        tpack::auth::SoftwareCrypto,
    );
    let verdict = (|| {
        for chunk in bytes.chunks(black_box(CHUNK)) {
            let mut rest = chunk;
            while let (used, Some(event)) = decoder.decode(rest)? {
                rest = rest.get(used..).unwrap_or(&[]);
                black_box(event);
            }
        }
        #[cfg(not(feature = "signature"))]
        black_box(decoder.prefix().map(|p| p.len()));
        #[cfg(feature = "signature")]
        black_box(decoder.decoder().prefix().map(|p| p.len()));
        decoder.finish().map(|_| ())
    })();
    match verdict {
        Ok(()) => 0,
        Err(DecodeError::Invalid(e)) => e.rule().number(),
        Err(_) => u8::MAX,
    }
}

/// The signed decoder's digests: 32 bytes for each of the example's entries, with room to spare.
#[cfg(all(feature = "decoder", feature = "signature"))]
const DIGESTS_LEN: usize = 32 * 16;

/// The one trusted key, its id computed from it.
#[cfg(feature = "signature")]
fn trusted_key() -> tpack::auth::TrustedKey<'static> {
    use tpack::auth::{Algorithm, SoftwareCrypto, TrustedKey};
    TrustedKey::new(&SoftwareCrypto, Algorithm::Ed25519, black_box(&TRUSTED_KEY))
}

/// A policy that requires a signature by one of `keys`, with a counter floor.
#[cfg(feature = "signature")]
fn policy<'k>(keys: &'k [tpack::auth::TrustedKey<'k>]) -> tpack::auth::Policy<'k> {
    tpack::auth::Policy { min_counter: black_box(7), ..tpack::auth::Policy::require(keys) }
}

/// What a device that runs only its vendor's models does instead of `Container::verify`: R58–R63 against a
/// one-key policy with a counter floor, then the payload checks with every entry's signed digest (R64).
#[cfg(feature = "signature")]
fn authenticate(c: &tpack::Container<'_>) -> Result<(), tpack::Error> {
    let crypto = tpack::auth::SoftwareCrypto;
    let trusted = [trusted_key()];
    let checked = c.authenticate(&policy(&trusted), &crypto)?;
    black_box(checked.signer().map(|s| s.counter));
    checked.verify(&crypto)
}

#[entry]
fn main() -> ! {
    let bytes: &[u8] = black_box(MODEL);
    #[cfg(feature = "reader")]
    {
        let result = tpack::Container::parse(bytes).and_then(|c| {
            #[cfg(not(feature = "signature"))]
            c.verify()?;
            #[cfg(feature = "signature")]
            authenticate(&c)?;
            let found = c.get(black_box("embed.weight")).map(|e| e.payload().len());
            let layers = c.metadata().get(black_box("layers"));
            black_box((found, layers));
            Ok(c.len())
        });
        let _ = black_box(result.map_err(|e| e.rule().number()));
    }
    #[cfg(feature = "decoder")]
    black_box(receive(black_box(MODEL)));
    black_box(bytes.len());
    loop {
        cortex_m_rt_spin();
    }
}

#[inline(never)]
fn cortex_m_rt_spin() {
    black_box(());
}
