//! Reading every payload of a container file into buffers the caller owns, at disk speed: large `pread`s
//! straight into each destination (one copy, from the page cache), several at once on threads, each block
//! CRC-32'd as it lands, so the payload-integrity group (R37, R50, R64, nested containers) is checked without
//! a second pass over memory.
//!
//! The structure comes from the container's memory map, which was validated when it was opened; only its
//! prefix and trailer pages are touched. The payload bytes come from `pread` on a file descriptor of the same
//! file, so a file truncated meanwhile gives a short read — an error — never SIGBUS.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use tpack::auth::{Authenticated, Crypto, Sha256, SoftwareCrypto};
use tpack::{Container, Error, Nesting};

/// Bytes one `pread` asks for: large enough that the per-call costs (the syscall, the CRC's set-up, the
/// threads' hand-over) vanish, small enough that every thread has blocks to take on a model of a few hundred
/// MiB and that a block's tail is still in the cache when its CRC runs behind the read.
pub const BLOCK: usize = 8 << 20;

/// Reading threads. Reads from the page cache are a copy, which scales with cores; reads from disk overlap
/// their waits. More than four gives no disk more queue depth that it can use and costs memory bandwidth.
const MAX_THREADS: usize = 4;

/// Where one entry's payload goes: `len` writable bytes at `address`, owned by the caller, disjoint from every
/// other destination, and alive and untouched by anyone else for the whole read.
#[derive(Clone, Copy)]
pub struct Destination {
    pub address: usize,
    pub len: usize,
}

/// One unit of work: a read of file bytes `[start, start + len)` into entry `entry`'s destination at `at`, or
/// (for `Padding`) a check that they are zero.
#[derive(Clone, Copy)]
enum Piece {
    Payload { entry: usize, start: u64, at: usize, len: usize },
    Padding { entry: usize, start: u64, len: usize },
}

/// What a piece found.
enum Outcome {
    /// The CRC-32 state of a payload piece's bytes (crc32fast's, which combines in order).
    Crc(crc32fast::Hasher),
    /// A padding piece: `None` when every byte is zero, else the offset of the first that is not.
    Padding(Option<u64>),
}

/// Why loading failed.
pub enum LoadError {
    /// Reading failed, or the file ended early (it shrank after it was opened): the error and the entry whose
    /// bytes were being read (`None`: the trailer's).
    Io(io::Error, Option<usize>),
    /// The first integrity or authenticity error in the spec's order (R37, R64, R50, a nested container's),
    /// and the entry it is about.
    Integrity(Error, usize),
}

/// Reads every payload of `container` (the outermost container of `file`) into `destinations` (one per entry,
/// in table order, each exactly the payload's length) and checks the payload-integrity group: for each entry
/// in table order, the padding before it is zero (R37), in an authenticated signed container its payload
/// matches its signed digest (R64), its payload matches its CRC (R50), and a nested container's payloads
/// verify. Returns the first problem in that order.
///
/// # Safety
/// Every destination must satisfy [`Destination`]'s contract for the whole call.
///
/// # Errors
/// [`LoadError::Io`] if a read fails or comes back short; [`LoadError::Integrity`] for the first damaged entry.
#[allow(unsafe_code)]
pub unsafe fn read_all(
    file: &File,
    container: &Container<'_>,
    authenticated: Option<&Authenticated<'_>>,
    destinations: &[Destination],
) -> Result<(), LoadError> {
    let stored = stored_checksums(file, container)?;
    let pieces = plan(container);
    let outcomes = run(file, &pieces, destinations)?;
    let mut checksums: Vec<Option<crc32fast::Hasher>> = vec![None; destinations.len()];
    let mut padding: Vec<Option<u64>> = vec![None; destinations.len()];
    for (piece, outcome) in pieces.iter().zip(outcomes) {
        match (piece, outcome) {
            (Piece::Payload { entry, .. }, Outcome::Crc(crc)) => {
                if let Some(slot) = checksums.get_mut(*entry) {
                    match slot {
                        Some(whole) => whole.combine(&crc),
                        None => *slot = Some(crc),
                    }
                }
            }
            (Piece::Padding { entry, .. }, Outcome::Padding(Some(offset))) => {
                if let Some(slot) = padding.get_mut(*entry) {
                    *slot = Some(offset);
                }
            }
            _ => {}
        }
    }
    let digests = match authenticated {
        Some(a) => signed_digests(a, destinations),
        None => Vec::new(),
    };
    for (position, entry) in container.entries().enumerate() {
        let index = u32::try_from(position).unwrap_or(u32::MAX);
        let fail = |e: Error| LoadError::Integrity(e, position);
        if let Some(Some(offset)) = padding.get(position) {
            return Err(fail(Error::PaddingNonZero { offset: *offset, nesting: Nesting::OUTERMOST }));
        }
        if let (Some(a), Some(Some(computed))) = (authenticated, digests.get(position)) {
            if a.digest(position) != Some(computed) {
                return Err(fail(Error::EntryDigest { entry: index }));
            }
        }
        let computed = checksums.get(position).and_then(|c| c.clone()).unwrap_or_default().finalize();
        let stored = stored.get(position).copied().unwrap_or_default();
        if computed != stored {
            return Err(fail(Error::EntryChecksum {
                entry: index,
                stored,
                computed,
                nesting: Nesting::OUTERMOST,
            }));
        }
        if entry.dtype() == tpack::Dtype::CONTAINER {
            // SAFETY: the read is over and the destination is the caller's, alive for the call.
            let bytes = unsafe { destination_bytes(destinations.get(position)) };
            // The map's copy was validated on open; this one is what the caller keeps, so it is the one checked.
            let checked = Container::parse(bytes).and_then(|nested| nested.verify());
            checked.map_err(|e| fail(e.held_by(index)))?;
        }
    }
    Ok(())
}

/// The payload checksums as the trailer stores them, read with `pread` like the payloads (not through the map,
/// so that a file cut after it was opened is an error here too, not SIGBUS).
fn stored_checksums(file: &File, container: &Container<'_>) -> Result<Vec<u32>, LoadError> {
    let [.., trailer] = &container.header().sections;
    let len = container
        .len()
        .checked_mul(4)
        .ok_or_else(|| LoadError::Io(io::Error::other("trailer too long"), None))?;
    let mut bytes = vec![0u8; len];
    read_exact_at(file, &mut bytes, trailer.offset.get()).map_err(|e| LoadError::Io(e, None))?;
    Ok(bytes.chunks_exact(4).map(|c| <[u8; 4]>::try_from(c).map_or(0, u32::from_le_bytes)).collect())
}

/// The caller's bytes at `destination` (empty for none).
///
/// # Safety
/// As [`read_all`]; and no piece is being written into them.
#[allow(unsafe_code)]
unsafe fn destination_bytes<'d>(destination: Option<&Destination>) -> &'d [u8] {
    match destination {
        // SAFETY: the caller's contract: `len` initialized-by-the-read, live bytes at `address`.
        Some(d) if d.len > 0 => unsafe { std::slice::from_raw_parts(d.address as *const u8, d.len) },
        _ => &[],
    }
}

/// The pieces of the payload section in file order: for each entry, the padding before it (if any), then its
/// payload in blocks of at most [`BLOCK`] bytes.
fn plan(container: &Container<'_>) -> Vec<Piece> {
    let [.., payloads, _] = &container.header().sections;
    let mut cursor = payloads.offset.get();
    let mut pieces = Vec::new();
    for (entry, e) in container.entries().enumerate() {
        let gap = e.offset().saturating_sub(cursor);
        if gap > 0 {
            let len = usize::try_from(gap).unwrap_or(usize::MAX);
            pieces.push(Piece::Padding { entry, start: cursor, len });
        }
        let total = usize::try_from(e.byte_len()).unwrap_or(usize::MAX);
        let mut at = 0usize;
        while at < total {
            let len = BLOCK.min(total.saturating_sub(at));
            let start = e.offset().saturating_add(u64::try_from(at).unwrap_or(u64::MAX));
            pieces.push(Piece::Payload { entry, start, at, len });
            at = at.saturating_add(len);
        }
        cursor = e.range().end;
    }
    pieces
}

/// Runs every piece on up to [`MAX_THREADS`] threads, each taking the next piece not yet taken; the outcomes
/// in the pieces' order. Stops at the first read error.
fn run(file: &File, pieces: &[Piece], destinations: &[Destination]) -> Result<Vec<Outcome>, LoadError> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let outcomes: Vec<Mutex<Option<Outcome>>> = pieces.iter().map(|_| Mutex::new(None)).collect();
    let failure: Mutex<Option<(usize, LoadError)>> = Mutex::new(None);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(2, MAX_THREADS);
    let work = || {
        let mut scratch = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(piece) = pieces.get(index) else { break };
            match do_piece(file, piece, destinations, &mut scratch) {
                Ok(outcome) => {
                    if let Some(slot) = outcomes.get(index) {
                        *slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(outcome);
                    }
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    let mut first = failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    // The earliest piece's error, whichever thread met its own first.
                    if first.as_ref().is_none_or(|(at, _)| index < *at) {
                        *first = Some((index, e));
                    }
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
    if let Some((_, e)) = failure.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        return Err(e);
    }
    outcomes
        .into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| LoadError::Io(io::Error::other("a piece of the file was not read"), None))
}

/// Reads one piece and checksums (or checks) it.
fn do_piece(
    file: &File,
    piece: &Piece,
    destinations: &[Destination],
    scratch: &mut Vec<u8>,
) -> Result<Outcome, LoadError> {
    match *piece {
        Piece::Payload { entry, start, at, len } => {
            let destination = destinations.get(entry).copied().ok_or_else(|| missing(entry))?;
            let address = destination.address.checked_add(at).ok_or_else(|| missing(entry))?;
            if at.checked_add(len).is_none_or(|end| end > destination.len) {
                return Err(missing(entry));
            }
            // SAFETY: `[at, at + len)` lies in the destination (checked above), which the caller lent for the
            // call, disjoint from every other; no other piece covers these bytes.
            #[allow(unsafe_code)]
            let bytes = unsafe { std::slice::from_raw_parts_mut(address as *mut u8, len) };
            read_exact_at(file, bytes, start).map_err(|e| LoadError::Io(e, Some(entry)))?;
            let mut crc = crc32fast::Hasher::new();
            crc.update(bytes);
            Ok(Outcome::Crc(crc))
        }
        Piece::Padding { entry, start, len } => {
            scratch.clear();
            scratch.resize(len, 0);
            read_exact_at(file, scratch, start).map_err(|e| LoadError::Io(e, Some(entry)))?;
            let first = scratch.iter().position(|&b| b != 0);
            Ok(Outcome::Padding(first.map(|at| start.saturating_add(u64::try_from(at).unwrap_or(u64::MAX)))))
        }
    }
}

fn missing(entry: usize) -> LoadError {
    LoadError::Io(io::Error::other("no destination of the payload's length"), Some(entry))
}

/// `pread` until `buf` is full; a read that returns nothing first means the file ended: `UnexpectedEof`.
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the file ends at byte {offset}, inside a payload: it shrank after it was opened"
                    ),
                ))
            }
            Ok(n) => {
                buf = buf.get_mut(n..).unwrap_or_default();
                offset = offset.saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One positioned read (`pread`), which leaves the file's cursor alone, so threads can share the file.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// One positioned read. It moves the handle's cursor, which no reader here uses.
#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

/// The SHA-256 of every destination whose entry has a signed digest (`None` for the others), computed on the
/// reading threads' count of threads, entry by entry.
fn signed_digests(authenticated: &Authenticated<'_>, destinations: &[Destination]) -> Vec<Option<[u8; 32]>> {
    if authenticated.signer().is_none() {
        return Vec::new();
    }
    let next = AtomicUsize::new(0);
    let digests: Vec<Mutex<Option<[u8; 32]>>> = destinations.iter().map(|_| Mutex::new(None)).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_THREADS);
    let work = || loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        let Some(destination) = destinations.get(index) else { break };
        if authenticated.digest(index).is_none() {
            continue;
        }
        // SAFETY: the read is over; the destination is the caller's, alive for the call.
        #[allow(unsafe_code)]
        let bytes = unsafe { destination_bytes(Some(destination)) };
        let mut hasher = SoftwareCrypto.hasher();
        hasher.update(bytes);
        if let Some(slot) = digests.get(index) {
            *slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(hasher.finish());
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
    digests.into_iter().map(|d| d.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)).collect()
}
