//! The model received as a byte stream from the host, the way an over-the-air update arrives: read in small
//! chunks (never whole), validated by `tpack::stream::Decoder` as it arrives, and written by a `Placer` into a
//! flash-like region ([`Nor`]) byte for byte; once the decoder's verdict is in, the region is parsed, verified
//! and the model run from it, in place.
//!
//! Two corrupted streams come first, each with one bit flipped on the fly as it passes: in a payload, which
//! the decoder can only judge when the trailer's checksums have come (R50), after the placer wrote the
//! payloads into the region — they are never used; and in a name, which breaks the header checksum (R13): the
//! decoder says as soon as the prefix is in that the stream is doomed (where a device would stop the
//! transfer), and the region is neither erased nor written.

use core::ffi::CStr;
use core::fmt::Write as _; // for `say!`

use tpack::stream::{DecodeError, Decoder, DecoderState, Event, Layout, Placer};
use tpack::Container;

use crate::host_file::HostFile;
use crate::nor::{self, Nor};
use crate::{fail, run_model, Aligned};

/// Figures `build.rs` takes from the model: `BUFFER_LEN`, `MODEL_LEN`, `PAYLOAD_FLIP_AT`, `NAME_FLIP_AT`,
/// `FLIP`.
mod model {
    include!(concat!(env!("OUT_DIR"), "/stream.rs"));
}
use model::{BUFFER_LEN, FLIP, MODEL_LEN, NAME_FLIP_AT, PAYLOAD_FLIP_AT};

/// The host file streamed: the container in the repository, by absolute path so that QEMU's working
/// directory does not matter.
const MODEL_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tiny-mlp/tiny-mlp.tpack");
/// The same, as semihosting wants it. (Printed as `MODEL_PATH`: a `CStr`'s `Debug` costs 1 KB of flash.)
const MODEL_PATH_C: &CStr = match CStr::from_bytes_with_nul(
    concat!(env!("CARGO_MANIFEST_DIR"), "/../tiny-mlp/tiny-mlp.tpack\0").as_bytes(),
) {
    Ok(path) => path,
    Err(_) => panic!("the model's path holds a NUL"),
};

/// Bytes read from the host at a time: odd and prime, so that chunk boundaries fall inside the header, the
/// names, the payloads and the trailer.
const CHUNK: usize = 61;

/// What one transfer gave.
struct Transfer<'r> {
    /// The decoder's verdict: from `finish`, or the error `decode` stopped with.
    verdict: Result<(), DecodeError>,
    region: Nor<'r>,
    /// Stream bytes received, reads made, events the decoder gave.
    received: u64,
    reads: u32,
    events: u32,
    /// The bytes received when the decoder first said the stream was doomed (checked after each chunk).
    doomed_at: Option<u64>,
    /// The container's length, from the validated prefix.
    total_len: Option<u64>,
}

/// The streaming phase.
pub fn run() {
    let Some(buffer) = cortex_m::singleton!(: [u8; BUFFER_LEN] = [0; BUFFER_LEN]) else {
        fail(format_args!("the decoder's buffer is taken"))
    };
    let Some(storage) = cortex_m::singleton!(: Aligned<[u8; nor::LEN]> = Aligned([0; nor::LEN])) else {
        fail(format_args!("the flash-like region is taken"))
    };
    say!(
        "stream decoder RAM: state {} bytes (DecoderState::SIZE) + buffer {BUFFER_LEN} bytes \
         (Decoder::buffer_needed of the model's header)",
        DecoderState::SIZE
    );

    let t = transfer(buffer, &mut storage.0, Some(PAYLOAD_FLIP_AT));
    match t.verdict {
        Err(DecodeError::Invalid(e)) if e.rule().id() == "R50" => say!(
            "stream with a flipped payload byte refused by finish() after {} of {MODEL_LEN} bytes ({} blocks \
             placed, never used), nothing run: {e}",
            t.received,
            t.region.blocks_written
        ),
        Ok(()) => fail(format_args!("the stream with a flipped payload byte was accepted")),
        Err(e) => {
            fail(format_args!("the stream with a flipped payload byte failed with the wrong error: {e}"))
        }
    }

    let t = transfer(buffer, &mut storage.0, Some(NAME_FLIP_AT));
    match t.verdict {
        Err(DecodeError::Invalid(e)) if e.rule().id() == "R13" => {
            let untouched = t.region.bytes().iter().all(|&b| b == 0);
            if t.region.erases != 0 || t.region.blocks_written != 0 || !untouched {
                fail(format_args!(
                    "the stream with a flipped name byte reached the region: {} erases, {} blocks written",
                    t.region.erases, t.region.blocks_written
                ));
            }
            let Some(at) = t.doomed_at else {
                fail(format_args!("the stream with a flipped name byte was not doomed before its end"))
            };
            say!(
                "stream with a flipped name byte refused: {e}; doomed after {at} of {MODEL_LEN} bytes (where \
                 a device stops the transfer); region calls: {} erases, {} writes",
                t.region.erases,
                t.region.blocks_written
            );
        }
        Ok(()) => fail(format_args!("the stream with a flipped name byte was accepted")),
        Err(e) => fail(format_args!("the stream with a flipped name byte failed with the wrong error: {e}")),
    }

    let t = transfer(buffer, &mut storage.0, None);
    if let Err(e) = t.verdict {
        fail(format_args!("the stream was refused: {e}"));
    }
    say!(
        "stream received: {} bytes in {CHUNK}-byte reads ({} reads), {} decoder events; placed with {} \
         erase and {} writes of {}-byte blocks",
        t.received,
        t.reads,
        t.events,
        t.region.erases,
        t.region.blocks_written,
        nor::BLOCK
    );
    let len = t.total_len.and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
    let Some(bytes) = t.region.bytes().get(..len) else {
        fail(format_args!("the container ({len} bytes) is longer than the region"))
    };
    let c = match Container::parse(bytes).and_then(|c| c.verify().map(|()| c)) {
        Ok(c) => c,
        Err(e) => fail(format_args!("the placed image does not verify: {e}")),
    };
    say!(
        "streamed model in the flash-like region at {:#010x}: {} bytes, {} entries, parsed and every checksum \
         verified in place",
        bytes.as_ptr() as usize,
        bytes.len(),
        c.len()
    );
    run_model(&c, "the flash-like region");
}

/// Streams the model from the host into a fresh region over `storage`, flipping bit `FLIP` of byte `flip`.
fn transfer<'r>(buffer: &mut [u8], storage: &'r mut [u8; nor::LEN], flip: Option<u64>) -> Transfer<'r> {
    let Some(mut file) = HostFile::open(MODEL_PATH_C) else {
        fail(format_args!("the host cannot open {MODEL_PATH}"))
    };
    let mut decoder = Decoder::new(buffer);
    let mut placer: Placer<Nor<'r>, { nor::BLOCK }> = Placer::new(Nor::new(storage), Layout::Image);
    let mut chunk = [0u8; CHUNK];
    let (mut received, mut reads, mut events) = (0u64, 0u32, 0u32);
    let (mut doomed_at, mut total_len, mut verdict) = (None, None, Ok(()));
    'stream: loop {
        let n = match file.read(&mut chunk) {
            Some(0) => break,
            Some(n) => n,
            None => fail(format_args!("reading {MODEL_PATH} from the host failed")),
        };
        let piece = chunk.get_mut(..n).unwrap_or_default();
        let into = flip.and_then(|at| at.checked_sub(received)).and_then(|i| usize::try_from(i).ok());
        if let Some(byte) = into.and_then(|i| piece.get_mut(i)) {
            *byte ^= FLIP;
        }
        received = received.saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
        reads = reads.saturating_add(1);
        let mut rest: &[u8] = piece;
        loop {
            match decoder.decode(rest) {
                Ok((used, Some(event))) => {
                    rest = rest.get(used..).unwrap_or_default();
                    events = events.saturating_add(1);
                    if matches!(event, Event::Prefix) {
                        let prefix = decoder.prefix();
                        total_len = prefix.map(|p| p.total_len());
                        // The host's figure, built in, must be the one the received header gives.
                        let needed = prefix.and_then(|p| Decoder::buffer_needed(p.as_bytes())).unwrap_or(0);
                        if needed != u64::try_from(BUFFER_LEN).unwrap_or(0) {
                            fail(format_args!("the stream needs a {needed}-byte buffer, not {BUFFER_LEN}"));
                        }
                    }
                    if let Err(e) = placer.place(&decoder, &event) {
                        fail(format_args!("placing the stream failed: {e}"));
                    }
                }
                Ok((_, None)) => break,
                Err(e) => {
                    verdict = Err(e);
                    break 'stream;
                }
            }
        }
        // A device would stop the transfer here; the demo reads on to show the verdict, which only the whole
        // stream gives (cut short, it would be R8 Truncated, the first rule broken).
        if doomed_at.is_none() && decoder.is_doomed() {
            doomed_at = Some(received);
        }
    }
    if verdict.is_ok() {
        verdict = decoder.finish();
    }
    let region = match placer.finish() {
        Ok(region) => region,
        Err(e) => fail(format_args!("placing the stream's last block failed: {e}")),
    };
    Transfer { verdict, region, received, reads, events, doomed_at, total_len }
}
