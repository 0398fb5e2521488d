//! A Cortex-M4F firmware for QEMU's MPS2 AN386 board that uses tpack the way a bare-metal loader does, and
//! runs only models signed by its vendor's key:
//!
//! 1. A forged copy of the model (a byte of `fc1.weight` changed and every CRC recomputed at build time) is
//!    refused before any of its weights is used: its CRCs are intact, so `Container::verify` accepts it, and
//!    its signature, over the prefix and the entries' digests, verifies too; its entry digest does not (R64).
//! 2. The signed model, placed in flash at a 64-byte boundary, is parsed, authenticated against the device's
//!    policy (the trusted key compiled in, a counter floor, a subject) and fully verified in place: every
//!    structural rule, the signature, and every payload against its signed digest and its checksum. Nothing is
//!    copied to RAM.
//! 3. Typed metadata gives the layer sizes and labels; the weights are read through tpack's zero-copy views
//!    straight from flash; the model classifies the held-out inputs stored with it, and the run fails unless
//!    every logit equals, bit for bit, what the host computed from the same container (`tiny_mlp::expected`).
//! 4. As a loader: the RAW entry with a load address is copied to that address in RAM, its checksum is checked
//!    there, and the code is called.
//! 5. The no-alloc writer puts the results in a new container in a RAM buffer, which the reader parses back.
//! 6. With the `stream` feature (on by default): models are received from the host as byte streams, in small
//!    chunks, authenticated by `tpack::stream::SignedDecoder` as they arrive and staged by a `Placer` in a
//!    download slot; only an authentic one is committed to the final region, then verified and run from there.
//!    The forged copy (R64), the unsigned model (R58), one signed by another key (R59), one with a lower
//!    counter (R62) and one with a damaged name (R13) are refused, with zero writes to the final region (see
//!    `streamed.rs`).
//!
//! `build.rs` makes every image with tpack's signing API from the unsigned model and fixed test keys.
//! Output and exit status go to the host through semihosting; any failure exits non-zero.
#![no_std]
#![no_main]

use core::fmt::Write as _;
use core::panic::PanicInfo;

use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
use tiny_mlp::{expected, test_inputs, Model, MAX_WIDTH};
use tpack::auth::{Algorithm, Policy, SoftwareCrypto, TrustedKey};
use tpack::write::{EntryDecl, FixedBookkeeping, StreamWriter};
use tpack::zerocopy::little_endian::F32;
use tpack::{Container, Dtype, MetaValue};

/// Bytes with the alignment the container's payloads need (64) at their start.
#[repr(C, align(64))]
struct Aligned<T: ?Sized>(T);

/// The signed model, in flash (`.rodata`), aligned for its payloads.
static MODEL: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/signed.tpack")));
/// The same container with a byte of `fc1.weight` changed and every CRC recomputed by `build.rs`.
static FORGED: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/forged.tpack")));

/// What the device trusts, compiled in: `PUBLIC_KEY` (test key 1's), `SUBJECT` and the counter `FLOOR`.
mod trusted {
    include!(concat!(env!("OUT_DIR"), "/trusted_key.rs"));
}

/// The device's one trusted key: Ed25519, for models of its line only. Its id is computed from the key, so
/// that the two cannot disagree.
fn trusted_key() -> TrustedKey<'static> {
    TrustedKey::new(&SoftwareCrypto, Algorithm::Ed25519, &trusted::PUBLIC_KEY).with_subject(trusted::SUBJECT)
}

/// The device's policy: a signature by one of `keys` is required, and the counter must be at least the floor
/// (kept in monotonic storage on a real device, raised once a new model has been committed and found working).
fn device_policy<'k>(keys: &'k [TrustedKey<'k>]) -> Policy<'k> {
    Policy { min_counter: trusted::FLOOR, ..Policy::require(keys) }
}

/// The first 4 bytes of a key id in hex, for messages.
struct KeyIdPrefix<'a>(&'a [u8; 32]);

impl core::fmt::Display for KeyIdPrefix<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.iter().take(4).try_for_each(|b| write!(f, "{b:02x}"))?;
        f.write_str("…")
    }
}

extern "C" {
    static _load_zone_start: u8;
    static _load_zone_end: u8;
    static _stack_start: u8;
    static _stack_end: u8;
}

/// Stack use, measured by painting the free stack at boot and finding the lowest overwritten byte at the end.
mod stack {
    const PAINT: u8 = 0xa5;
    /// Bytes below the current stack pointer left unpainted (the painting code's own frame).
    const GUARD: usize = 256;
    /// Most bytes painted: enough for this firmware, quick to scan.
    const SPAN: usize = 64 * 1024;

    fn bounds() -> (usize, usize) {
        // SAFETY: addresses of linker-defined symbols, never read.
        let (top, floor) =
            unsafe { (&super::_stack_start as *const u8 as usize, &super::_stack_end as *const u8 as usize) };
        (top, floor.max(top.saturating_sub(SPAN)))
    }

    /// Paints the free stack below the caller's frame.
    pub fn paint() {
        let (_, floor) = bounds();
        let sp = cortex_m::register::msp::read() as usize - GUARD;
        for addr in floor..sp {
            // SAFETY: `floor..sp` is RAM below the live stack (no interrupts are enabled), used by nothing.
            unsafe { core::ptr::write_volatile(addr as *mut u8, PAINT) };
        }
    }

    /// The deepest the stack has reached since [`paint`], in bytes from its top.
    pub fn high_water() -> usize {
        let (top, floor) = bounds();
        // SAFETY: reading painted RAM below the live stack.
        let lowest = (floor..top).find(|&a| unsafe { core::ptr::read_volatile(a as *const u8) } != PAINT);
        top - lowest.unwrap_or(top)
    }
}

/// Semihosting output; a failure to print is not worth a failure of the run.
macro_rules! say {
    ($($arg:tt)*) => {{
        if let Ok(mut out) = ::cortex_m_semihosting::hio::hstdout() {
            let _ = writeln!(out, $($arg)*);
        }
    }};
}

#[cfg(feature = "stream")]
mod host_file;
#[cfg(feature = "stream")]
mod nor;
#[cfg(feature = "stream")]
mod streamed;

fn fail(why: core::fmt::Arguments<'_>) -> ! {
    say!("FAIL: {}", why);
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::bkpt();
    }
}

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    fail(format_args!("panic: {info}"))
}

#[entry]
fn main() -> ! {
    stack::paint();
    say!("tpack firmware on mps2-an386 (Cortex-M4F)");
    refuse_forged_copy();
    let model = load_and_verify();
    run_model(&model, "flash");
    load_segments(&model);
    write_results_to_ram(&model);
    #[cfg(feature = "stream")]
    streamed::run();
    say!("stack high-water mark: {} bytes", stack::high_water());
    say!("PASS");
    debug::exit(debug::EXIT_SUCCESS);
    loop {
        cortex_m::asm::bkpt();
    }
}

/// Refuses the forged copy, and shows why a CRC cannot: its checksums and its signature are intact.
fn refuse_forged_copy() {
    let c = match Container::parse(&FORGED.0) {
        Ok(c) => c,
        Err(e) => fail(format_args!("the forged copy does not parse: {e}")),
    };
    if let Err(e) = c.verify() {
        fail(format_args!("the forged copy's CRCs should be intact: {e}"));
    }
    let keys = [trusted_key()];
    let checked = match c.authenticate(&device_policy(&keys), &SoftwareCrypto) {
        Ok(checked) => checked,
        Err(e) => fail(format_args!("the forged copy's signature should verify: {e}")),
    };
    match checked.verify(&SoftwareCrypto) {
        Ok(()) => fail(format_args!("the forged copy was accepted")),
        Err(e) if e.rule().id() == "R64" => say!(
            "forged copy (a byte of fc1.weight changed, every CRC recomputed): Container::verify accepts it and \
             its signature verifies, but not its entry digest; refused, no weight used: {e}"
        ),
        Err(e) => fail(format_args!("the forged copy failed with the wrong rule: {e}")),
    }
}

/// Parses, authenticates and verifies `bytes` in place against the device's policy, or fails the run.
fn authenticate<'a>(bytes: &'a [u8], place: &str) -> Container<'a> {
    let c = match Container::parse(bytes) {
        Ok(c) => c,
        Err(e) => fail(format_args!("model in {place} refused: {e}")),
    };
    let keys = [trusted_key()];
    let checked = match c.authenticate(&device_policy(&keys), &SoftwareCrypto) {
        Ok(checked) => checked,
        Err(e) => fail(format_args!("model in {place} refused: {e}")),
    };
    if let Err(e) = checked.verify(&SoftwareCrypto) {
        fail(format_args!("model in {place} refused: {e}"));
    }
    // Authenticated from a policy that requires a signature: there is a signer.
    let Some(signer) = checked.signer() else { fail(format_args!("model in {place}: no signer")) };
    say!(
        "model in {place} at {:#010x}: {} bytes, {} entries, signed by key {} (counter {}, subject {:?}): \
         signature, every entry digest and every checksum verified in place",
        bytes.as_ptr() as usize,
        bytes.len(),
        c.len(),
        KeyIdPrefix(signer.key_id),
        signer.counter,
        signer.subject.unwrap_or("")
    );
    // The container itself, not `checked.container()`: an `Authenticated` lives no longer than the policy's
    // key list, local here.
    c
}

fn load_and_verify() -> Container<'static> {
    let bytes: &'static [u8] = &MODEL.0;
    let at = bytes.as_ptr() as usize;
    if !at.is_multiple_of(64) {
        fail(format_args!("the container is not 64-byte aligned in flash ({at:#x})"));
    }
    authenticate(bytes, "flash")
}

/// Runs the model in `c`, which lies in `place`, on the stored inputs, and fails unless every logit equals the
/// host's.
fn run_model(c: &Container<'_>, place: &str) {
    let name = match c.metadata().get("model.name") {
        Some(MetaValue::String(s)) => s,
        _ => "?",
    };
    let model = match Model::from_container(c) {
        Ok(m) => m,
        Err(e) => fail(format_args!("not a usable model: {e:?}")),
    };
    let [n_in, n_hidden, n_out] = model.widths;
    say!("model {name:?}: layers {n_in} -> {n_hidden} -> {n_out} (from metadata model.layers)");
    let weights = c.get("fc1.weight").map_or(0, |e| e.payload().as_ptr() as usize);
    say!("weights read in place: fc1.weight at {weights:#010x} ({place})");
    let labels = match c.metadata().get("model.labels") {
        Some(MetaValue::StringArray(items)) => Some(items),
        _ => None,
    };
    let inputs: &[F32] = match test_inputs(c, n_in) {
        Ok(x) => x,
        Err(e) => fail(format_args!("no test inputs: {e:?}")),
    };
    let count = inputs.len() / n_in;
    if count != expected::CLASSES.len() {
        fail(format_args!("{count} inputs, but the host expects {}", expected::CLASSES.len()));
    }
    for (i, x) in inputs.chunks(n_in).enumerate() {
        let mut input = [0f32; MAX_WIDTH];
        for (slot, v) in input.iter_mut().zip(x) {
            *slot = v.get();
        }
        let mut logits = [0f32; MAX_WIDTH];
        let class = model.infer(&input[..n_in], &mut logits[..n_out]);
        let label = labels.and_then(|mut l| l.nth(class)).unwrap_or("?");
        say!("input {i}: class {class} ({label}), logits {:?}", &logits[..n_out]);
        if class != expected::CLASSES[i] {
            fail(format_args!("input {i}: class {class}, but the host computed {}", expected::CLASSES[i]));
        }
        for (o, (got, want)) in logits.iter().zip(expected::LOGIT_BITS[i]).enumerate() {
            if got.to_bits() != want {
                fail(format_args!(
                    "input {i}, logit {o}: {:#010x}, but the host computed {want:#010x}",
                    got.to_bits()
                ));
            }
        }
    }
    say!("all {count} results equal the host's, bit for bit (model in {place})");
}

/// Copies every entry with a load address to it, checks the copy's checksum there, and calls it: the entries
/// with targets here are Thumb functions returning 42.
fn load_segments(c: &Container<'static>) {
    // SAFETY: taking the addresses of linker-defined symbols; they are never read.
    let zone = unsafe { (&_load_zone_start as *const u8 as usize)..(&_load_zone_end as *const u8 as usize) };
    for e in c.entries().filter(|e| e.target().is_some()) {
        let target = e.target().unwrap_or(0);
        let len = e.payload().len();
        let end = target.saturating_add(len as u64);
        if target < zone.start as u64 || end > zone.end as u64 {
            fail(format_args!(
                "entry {:?} wants {target:#x}..{end:#x}, outside the load zone {:#x}..{:#x}",
                e.name(),
                zone.start,
                zone.end
            ));
        }
        let dst = target as usize as *mut u8;
        // SAFETY: `dst..dst + len` lies in the load zone, RAM that the linker script gives to nothing else.
        let copy = unsafe {
            core::ptr::copy_nonoverlapping(e.payload().as_ptr(), dst, len);
            core::slice::from_raw_parts(dst, len)
        };
        let crc = tpack::checksum::crc32(copy);
        if crc != e.checksum() {
            fail(format_args!("entry {:?}: the copy at {target:#x} has checksum {crc:#010x}", e.name()));
        }
        say!("loaded {:?} ({len} bytes) to {target:#010x}; checksum {crc:#010x} matches in RAM", e.name());
        if e.dtype() == Dtype::RAW {
            cortex_m::asm::dsb();
            cortex_m::asm::isb();
            // SAFETY: the bytes just verified are the Thumb code `movs r0, #42; bx lr` (cli/demo/tiny-mlp);
            // bit 0 set selects Thumb state.
            let function: extern "C" fn() -> u32 = unsafe { core::mem::transmute(target as usize | 1) };
            let returned = function();
            if returned != 42 {
                fail(format_args!("the loaded code returned {returned}, not 42"));
            }
            say!("called the loaded code: it returned {returned}");
        }
    }
}

/// Writes the results into a container in a RAM buffer with the no-alloc writer, then parses it back.
fn write_results_to_ram(c: &Container<'static>) {
    let mut buffer = [0u8; 1024];
    let classes: [u8; 6] = expected::CLASSES.map(|k| k as u8);
    let mut logits = [0u8; 6 * 3 * 4];
    for (slot, bits) in logits.chunks_mut(4).zip(expected::LOGIT_BITS.iter().flatten()) {
        slot.copy_from_slice(&bits.to_le_bytes());
    }
    let name = match c.metadata().get("model.name") {
        Some(MetaValue::String(s)) => s,
        _ => "?",
    };
    let len = {
        let sink: &mut [u8] = &mut buffer;
        let total = sink.len();
        let mut w = StreamWriter::new(sink, FixedBookkeeping::<4, 128>);
        let written = (|| {
            w.declare(EntryDecl::new("classes", Dtype::U8, &[6]))?;
            w.declare(EntryDecl::new("logits", Dtype::F32, &[6, 3]))?;
            w.metadata("model", MetaValue::String(name))?;
            w.metadata("board", MetaValue::String("mps2-an386"))?;
            w.write_entry(&classes)?;
            w.write_entry(&logits)?;
            w.finish()
        })();
        match written {
            Ok(rest) => total - rest.len(),
            Err(e) => fail(format_args!("writing the results container failed: {e}")),
        }
    };
    let bytes = &buffer[..len];
    let back = match Container::parse(bytes).and_then(|r| r.verify().map(|()| r)) {
        Ok(r) => r,
        Err(e) => fail(format_args!("the results container does not read back: {e}")),
    };
    let same = back.get("classes").map(|e| e.payload()) == Some(&classes[..])
        && back.get("logits").map(|e| e.payload()) == Some(&logits[..])
        && back.metadata().get("board") == Some(MetaValue::String("mps2-an386"));
    if !same {
        fail(format_args!("the results container reads back different values"));
    }
    say!("wrote a {len}-byte results container to RAM with the no-alloc writer; it parses and verifies");
}
