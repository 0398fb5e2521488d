//! Validates a container in place — structure and every payload checksum — then looks up an entry and a
//! metadata key, as a bare-metal loader would; with `decoder`, also receives it through the push decoder in
//! small chunks, as a loader fed by a link would. `black_box` keeps the optimiser from folding the work away.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use panic_halt as _;

static MODEL: &[u8] = include_bytes!("../../../spec/vectors/valid/example.tpack");

/// What a loader's link delivers at a time (a UART or radio frame).
#[cfg(feature = "decoder")]
const CHUNK: usize = 64;

/// The decoder's buffer: the example's prefix, trailer and checksums, with room to spare.
#[cfg(feature = "decoder")]
const BUFFER_LEN: usize = 2048;

/// Feeds `bytes` to the push decoder in `CHUNK`-byte pieces, passing every event to `black_box` as a loader
/// would pass payloads to flash; the verdict's rule number, or 0.
#[cfg(feature = "decoder")]
fn receive(bytes: &[u8]) -> u8 {
    use tpack::stream::{DecodeError, Decoder};
    let mut buffer = [0u8; BUFFER_LEN];
    let mut decoder = Decoder::new(&mut buffer);
    let verdict = (|| {
        for chunk in bytes.chunks(black_box(CHUNK)) {
            let mut rest = chunk;
            while let (used, Some(event)) = decoder.decode(rest)? {
                rest = rest.get(used..).unwrap_or(&[]);
                black_box(event);
            }
        }
        black_box(decoder.prefix().map(|p| p.len()));
        decoder.finish()
    })();
    match verdict {
        Ok(()) => 0,
        Err(DecodeError::Invalid(e)) => e.rule().number(),
        Err(_) => u8::MAX,
    }
}

#[entry]
fn main() -> ! {
    let bytes: &[u8] = black_box(MODEL);
    #[cfg(feature = "reader")]
    {
        let result = tpack::Container::parse(bytes).and_then(|c| {
            c.verify()?;
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
