//! Validates a container in place — structure and every payload checksum — then looks up an entry and a
//! metadata key, as a bare-metal loader would. `black_box` keeps the optimiser from folding the work away.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use panic_halt as _;

static MODEL: &[u8] = include_bytes!("../../../spec/vectors/valid/example.tpack");

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
    black_box(bytes.len());
    loop {
        cortex_m_rt_spin();
    }
}

#[inline(never)]
fn cortex_m_rt_spin() {
    black_box(());
}
