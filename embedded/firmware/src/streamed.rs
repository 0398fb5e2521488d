//! Models received as byte streams from the host, the way an over-the-air update arrives: read in small chunks
//! (never whole), authenticated by `tpack::stream::SignedDecoder` against the device's policy as they arrive,
//! and staged by a `Placer` in a download slot ([`Nor`]); only once the decoder's verdict says the stream is
//! authentic does `Placer::commit` copy it to the final region, where it is verified and the model run from
//! it, in place — as MCUboot stages an image in its secondary slot.
//!
//! The refused streams come first, each with zero writes to the final region:
//! - a byte of a payload changed and every CRC recomputed (R64): it passes every check but the entry's digest,
//!   which only the whole stream decides, so the payloads reach the download slot and stay there, never
//!   committed;
//! - the unsigned model (R58), one signed by another key (R59), one whose counter is below the floor (R62):
//!   the decoder refuses them from the prefix alone (where a device would stop the transfer) and releases
//!   nothing more, so the download slot is not touched either;
//! - the signed model with a bit of a name flipped on the fly, which breaks the header checksum (R13): doomed
//!   as soon as the prefix is in, nothing written anywhere.

use core::ffi::CStr;
use core::fmt::Write as _; // for `say!`

use tpack::auth::SoftwareCrypto;
use tpack::stream::{Authentic, DecodeError, DecoderState, Event, Layout, Placer, SignedDecoder};

use crate::host_file::HostFile;
use crate::nor::{self, Nor};
use crate::{authenticate, device_policy, fail, run_model, trusted_key, Aligned};

/// Figures `build.rs` takes from the images: `BUFFER_LEN`, `DIGESTS_LEN`, `NAME_FLIP_AT`, `FLIP`.
mod model {
    include!(concat!(env!("OUT_DIR"), "/stream.rs"));
}
use model::{BUFFER_LEN, DIGESTS_LEN, FLIP, NAME_FLIP_AT};

/// The absolute path of a host file, NUL-terminated as semihosting wants it (a `CStr`'s `Debug` costs 1 KB of
/// flash, so images are named in words instead).
macro_rules! host_path {
    ($($part:expr),+) => {
        match CStr::from_bytes_with_nul(concat!($($part),+, "\0").as_bytes()) {
            Ok(path) => path,
            Err(_) => panic!("a path holds a NUL"),
        }
    };
}

/// A stream to receive: what it is, the host file, a byte to flip on the fly, and the rule that refuses it
/// (`None`: accepted).
struct Stream {
    what: &'static str,
    path: &'static CStr,
    flip: Option<u64>,
    rule: Option<&'static str>,
}

/// The streams refused, in the order they are tried.
const REFUSED: [Stream; 5] = [
    Stream {
        what: "with a payload byte changed and every CRC recomputed",
        path: host_path!(env!("OUT_DIR"), "/forged.tpack"),
        flip: None,
        rule: Some("R64"),
    },
    Stream {
        what: "of the unsigned model",
        path: host_path!(env!("CARGO_MANIFEST_DIR"), "/../tiny-mlp/tiny-mlp.tpack"),
        flip: None,
        rule: Some("R58"),
    },
    Stream {
        what: "signed by another key",
        path: host_path!(env!("OUT_DIR"), "/other-key.tpack"),
        flip: None,
        rule: Some("R59"),
    },
    Stream {
        what: "with a counter below the floor",
        path: host_path!(env!("OUT_DIR"), "/rollback.tpack"),
        flip: None,
        rule: Some("R62"),
    },
    Stream {
        what: "with a flipped name byte",
        path: host_path!(env!("OUT_DIR"), "/signed.tpack"),
        flip: Some(NAME_FLIP_AT),
        rule: Some("R13"),
    },
];

/// The stream accepted: the signed model.
const SIGNED: Stream = Stream {
    what: "of the signed model",
    path: host_path!(env!("OUT_DIR"), "/signed.tpack"),
    flip: None,
    rule: None,
};

/// Bytes read from the host at a time: odd and prime, so that chunk boundaries fall inside the header, the
/// names, the payloads, the signature entry and the trailer.
const CHUNK: usize = 61;

/// What one transfer gave.
struct Transfer<'r> {
    /// The decoder's verdict: from `finish`, or the error `decode` stopped with.
    verdict: Result<Authentic, DecodeError>,
    /// The download slot the stream was staged in, and the final region (written only by a commit).
    staging: Nor<'r>,
    destination: Nor<'r>,
    /// Stream bytes received, reads made, events the decoder gave.
    received: u64,
    reads: u32,
    events: u32,
    /// The bytes received when the decoder first said the stream was doomed (checked after each chunk).
    doomed_at: Option<u64>,
    /// The container's length, from the validated prefix.
    total_len: Option<u64>,
}

/// The memory a transfer uses: the decoder's buffer, the digests, the download slot and the final region.
struct Memory {
    buffer: &'static mut [u8; BUFFER_LEN],
    digests: &'static mut [u8; DIGESTS_LEN],
    staging: &'static mut Aligned<[u8; nor::LEN]>,
    destination: &'static mut Aligned<[u8; nor::LEN]>,
}

/// The streaming phase.
pub fn run() {
    let (Some(buffer), Some(digests), Some(staging), Some(destination)) = (
        cortex_m::singleton!(: [u8; BUFFER_LEN] = [0; BUFFER_LEN]),
        cortex_m::singleton!(: [u8; DIGESTS_LEN] = [0; DIGESTS_LEN]),
        cortex_m::singleton!(: Aligned<[u8; nor::LEN]> = Aligned([0; nor::LEN])),
        cortex_m::singleton!(: Aligned<[u8; nor::LEN]> = Aligned([0; nor::LEN])),
    ) else {
        fail(format_args!("the streaming phase's memory is taken"))
    };
    let mut memory = Memory { buffer, digests, staging, destination };
    say!(
        "stream decoder RAM: state {} bytes (DecoderState::SIZE) + buffer {BUFFER_LEN} bytes (the largest \
         Decoder::buffer_needed of the images) + digests {DIGESTS_LEN} bytes (32 per entry)",
        DecoderState::SIZE
    );

    for stream in &REFUSED {
        let t = transfer(&mut memory, stream);
        refused(stream, &t);
    }

    let t = transfer(&mut memory, &SIGNED);
    let proof = match t.verdict {
        Ok(proof) => proof,
        Err(e) => fail(format_args!("the stream {} was refused: {e}", SIGNED.what)),
    };
    let counter = proof.signer().map_or(0, |s| s.counter);
    say!(
        "stream {} received: {} bytes in {CHUNK}-byte reads ({} reads), {} decoder events; authentic (counter \
         {counter}); staged with {} erase and {} writes of {}-byte blocks, then committed to the final region \
         with {} erases and {} block writes",
        SIGNED.what,
        t.received,
        t.reads,
        t.events,
        t.staging.erases,
        t.staging.blocks_written,
        nor::BLOCK,
        t.destination.erases,
        t.destination.blocks_written
    );
    let len = t.total_len.and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
    let Some(bytes) = t.destination.bytes().get(..len) else {
        fail(format_args!("the container ({len} bytes) is longer than the region"))
    };
    let c = authenticate(bytes, "the final region");
    run_model(&c, "the final region");
}

/// Fails the run unless `t` was refused by `stream.rule` with the final region untouched, and, for a refusal
/// the prefix decides, the download slot too; says so.
fn refused(stream: &Stream, t: &Transfer<'_>) {
    let e = match t.verdict {
        Err(DecodeError::Invalid(e)) if Some(e.rule().id()) == stream.rule => e,
        Ok(_) => fail(format_args!("the stream {} was accepted", stream.what)),
        Err(e) => fail(format_args!("the stream {} failed with the wrong error: {e}", stream.what)),
    };
    let untouched = |region: &Nor<'_>| {
        region.erases == 0 && region.blocks_written == 0 && region.bytes().iter().all(|&b| b == 0)
    };
    if !untouched(&t.destination) {
        fail(format_args!(
            "the stream {} reached the final region: {} erases, {} blocks written",
            stream.what, t.destination.erases, t.destination.blocks_written
        ));
    }
    // Every rule but R64 is decided by the prefix: nothing may be staged either.
    if e.rule().id() != "R64" && (!untouched(&t.staging) || t.doomed_at.is_none()) {
        fail(format_args!(
            "the stream {} was refused late: {} erases and {} blocks written to the download slot",
            stream.what, t.staging.erases, t.staging.blocks_written
        ));
    }
    let total = t.total_len.unwrap_or(t.received);
    if let Some(at) = t.doomed_at.filter(|&at| at < total) {
        say!(
            "stream {} refused: {e}; doomed after {at} of {total} bytes (where a device stops the transfer); \
             download slot: {} erases, {} block writes; final region: {} erases, {} block writes",
            stream.what,
            t.staging.erases,
            t.staging.blocks_written,
            t.destination.erases,
            t.destination.blocks_written
        );
    } else {
        say!(
            "stream {} refused by finish(): {e}; download slot: {} erases, {} block writes (never committed); \
             final region: {} erases, {} block writes",
            stream.what,
            t.staging.erases,
            t.staging.blocks_written,
            t.destination.erases,
            t.destination.blocks_written
        );
    }
}

/// Streams `stream` from the host through the signed decoder into a fresh download slot, flipping bit `FLIP`
/// of byte `stream.flip`, and commits it to a fresh final region if the decoder accepts it.
fn transfer<'r>(memory: &'r mut Memory, stream: &Stream) -> Transfer<'r> {
    let Some(mut file) = HostFile::open(stream.path) else {
        fail(format_args!("the host cannot open the stream {}", stream.what))
    };
    let keys = [trusted_key()];
    let mut decoder = SignedDecoder::new(
        &mut memory.buffer[..],
        &mut memory.digests[..],
        device_policy(&keys),
        SoftwareCrypto,
    );
    let mut placer: Placer<Nor<'r>, { nor::BLOCK }> =
        Placer::new(Nor::new(&mut memory.staging.0), Layout::Image);
    let mut destination = Nor::new(&mut memory.destination.0);
    let mut chunk = [0u8; CHUNK];
    let (mut received, mut reads, mut events) = (0u64, 0u32, 0u32);
    let (mut doomed_at, mut total_len, mut stopped) = (None, None, None);
    'stream: loop {
        let n = match file.read(&mut chunk) {
            Some(0) => break,
            Some(n) => n,
            None => fail(format_args!("reading the stream {} from the host failed", stream.what)),
        };
        let piece = chunk.get_mut(..n).unwrap_or_default();
        let into = stream.flip.and_then(|at| at.checked_sub(received)).and_then(|i| usize::try_from(i).ok());
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
                        let prefix = decoder.decoder().prefix();
                        total_len = prefix.map(|p| p.total_len());
                        // The host's figure, built in, must cover what the received header asks for.
                        let needed =
                            prefix.and_then(|p| tpack::stream::Decoder::buffer_needed(p.as_bytes()).ok());
                        if needed.is_none_or(|n| n > u64::try_from(BUFFER_LEN).unwrap_or(0)) {
                            fail(format_args!("the stream needs a {needed:?}-byte buffer, not {BUFFER_LEN}"));
                        }
                    }
                    if let Err(e) = placer.place(decoder.decoder(), &event) {
                        fail(format_args!("placing the stream failed: {e}"));
                    }
                }
                Ok((_, None)) => break,
                Err(e) => {
                    stopped = Some(e);
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
    let verdict = match stopped {
        Some(e) => Err(e),
        None => decoder.finish(),
    };
    let staged = match &verdict {
        // Stage, then commit: the final region is written only with the decoder's proof.
        Ok(proof) => placer.commit(proof, &mut destination),
        Err(_) => placer.finish(),
    };
    let staging = match staged {
        Ok(region) => region,
        Err(e) => fail(format_args!("placing the stream's last blocks failed: {e}")),
    };
    Transfer { verdict, staging, destination, received, reads, events, doomed_at, total_len }
}
