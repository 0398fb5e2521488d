//! Placing a stream's bytes where they belong — a flash partition, RAM — as a [`super::Decoder`] releases
//! them: nothing is erased or written before the prefix is valid, writes come in whole write blocks, and each
//! range is erased once before it is written.

use core::fmt;

use super::{Decoder, Event, Prefix};

/// Memory a [`Placer`] writes into: a flash partition, a RAM region, a file.
pub trait Region {
    /// The region's own error (a flash driver's).
    type Error;

    /// The region's length in bytes.
    fn len(&self) -> u64;

    /// Whether the region is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Makes `[offset, offset + len)` writable (a flash erase; nothing for RAM). Called once for each range
    /// before any write into it; `offset` and `len` are multiples of the placer's write block.
    ///
    /// # Errors
    /// The region's own.
    fn erase(&mut self, offset: u64, len: u64) -> Result<(), Self::Error>;

    /// Writes `bytes` at `offset`. `offset` and `bytes.len()` are multiples of the placer's write block.
    ///
    /// # Errors
    /// The region's own.
    fn write(&mut self, offset: u64, bytes: &[u8]) -> Result<(), Self::Error>;
}

/// A [`Region`] that can be read back: a staging slot whose bytes [`Placer::commit`] copies to their final
/// place once the stream is authentic.
pub trait ReadRegion: Region {
    /// Reads `into.len()` bytes at `offset`.
    ///
    /// # Errors
    /// The region's own.
    fn read(&self, offset: u64, into: &mut [u8]) -> Result<(), Self::Error>;
}

/// Where a [`Placer`] puts the stream's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The whole container, byte for byte, from the region's start: afterwards `Container::parse` of the
    /// region's first `total_len` bytes gives the container, and payloads are used in place.
    Image,
    /// Each entry with a load address at `target - base` in the region; entries without one are not placed.
    /// Targets must be multiples of the write block, and entries' ranges must not overlap.
    Targets {
        /// The address of the region's first byte.
        base: u64,
    },
}

/// Why a [`Placer`] refused or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlaceError<E> {
    /// The container (or an entry at its target) does not fit in the region.
    TooLarge {
        /// The entry, or `None` for the whole image.
        entry: Option<u32>,
    },
    /// An entry's target is not inside the region, or not a multiple of the write block.
    BadTarget {
        /// The entry.
        entry: u32,
    },
    /// Two entries' target ranges overlap.
    Overlap {
        /// The later of the two entries, in table order.
        entry: u32,
    },
    /// An event came in an order a decoder does not give (payload bytes before the prefix).
    OutOfOrder,
    /// The region failed.
    Region(E),
}

impl<E: fmt::Debug> fmt::Display for PlaceError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlaceError::TooLarge { entry: None } => f.write_str("the container does not fit in the region"),
            PlaceError::TooLarge { entry: Some(e) } => write!(f, "entry {e} does not fit in the region"),
            PlaceError::BadTarget { entry } => {
                write!(f, "entry {entry}'s target is outside the region or not on a write block")
            }
            PlaceError::Overlap { entry } => {
                write!(f, "entry {entry}'s target range overlaps an earlier entry's")
            }
            PlaceError::OutOfOrder => f.write_str("payload bytes came before the prefix"),
            PlaceError::Region(e) => write!(f, "the region failed: {e:?}"),
        }
    }
}

/// An error when the region's error is one (`std::io::Error`, `Infallible`, …), with that error as its source.
impl<E: core::error::Error + 'static> core::error::Error for PlaceError<E> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            PlaceError::Region(e) => Some(e),
            PlaceError::TooLarge { .. }
            | PlaceError::BadTarget { .. }
            | PlaceError::Overlap { .. }
            | PlaceError::OutOfOrder => None,
        }
    }
}

/// Writes what a [`Decoder`] releases into a [`Region`], in whole blocks of `B` bytes (the flash's write
/// block; at most `B` bytes are held back at a time).
///
/// Feed it every event ([`Placer::place`]) with the decoder that gave it; call [`Placer::finish`] after
/// [`Decoder::finish`] accepted the stream. Until then the placed bytes are not known good: a stream that
/// fails its verdict has written payloads (never before its prefix was valid) that must not be used — mark
/// the region valid only after both `finish` calls succeed, as a bootloader marks an image.
pub struct Placer<R: Region, const B: usize> {
    region: R,
    layout: Layout,
    /// The block being filled: its region offset, and how many of its bytes are set.
    block: [u8; B],
    block_at: u64,
    fill: usize,
    /// Where the next byte goes in the region, or `None` before the prefix / for an entry not placed.
    next: Option<u64>,
    /// The end of the furthest block written: what [`Placer::commit`] copies.
    extent: u64,
}

impl<R: Region, const B: usize> fmt::Debug for Placer<R, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Placer")
            .field("layout", &self.layout)
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl<R: Region, const B: usize> Placer<R, B> {
    /// A placer into `region`.
    pub fn new(region: R, layout: Layout) -> Self {
        Placer { region, layout, block: [0; B], block_at: 0, fill: 0, next: None, extent: 0 }
    }

    /// Places what `event` (just returned by `decoder`) releases.
    ///
    /// # Errors
    /// A container or target that does not fit (checked, and the region erased, at [`Event::Prefix`]); the
    /// region's errors.
    pub fn place(&mut self, decoder: &Decoder<'_>, event: &Event<'_>) -> Result<(), PlaceError<R::Error>> {
        match *event {
            Event::Prefix => {
                let prefix = decoder.prefix().ok_or(PlaceError::OutOfOrder)?;
                self.start(&prefix)
            }
            Event::Payload { entry, offset, bytes, .. } => {
                let prefix = decoder.prefix().ok_or(PlaceError::OutOfOrder)?;
                let Some(e) = prefix.entry(usize::try_from(entry).unwrap_or(usize::MAX)) else {
                    return Err(PlaceError::OutOfOrder);
                };
                let at = match self.layout {
                    Layout::Image => Some(e.range().start),
                    Layout::Targets { base } => e.target().map(|t| t.saturating_sub(base)),
                };
                let Some(at) = at else { return Ok(()) };
                self.write_at(at.saturating_add(offset), bytes)
            }
            Event::EntryEnd { .. } => match self.layout {
                // Each entry ends its own blocks (targets are on write blocks, so nothing else shares them).
                Layout::Targets { .. } => self.flush(),
                Layout::Image => Ok(()),
            },
            Event::End => match (self.layout, decoder.trailer(), decoder.prefix()) {
                (Layout::Image, Some(trailer), Some(prefix)) => {
                    let at =
                        prefix.total_len().saturating_sub(u64::try_from(trailer.len()).unwrap_or(u64::MAX));
                    self.write_at(at, trailer)
                }
                _ => Ok(()),
            },
        }
    }

    /// Writes the last partial block and gives the region back.
    ///
    /// # Errors
    /// The region's.
    pub fn finish(mut self) -> Result<R, PlaceError<R::Error>> {
        self.flush()?;
        Ok(self.region)
    }

    /// Stage, then commit: for a [`Placer`] that wrote into a staging region (a download slot), copies what it
    /// staged — `[0, extent)` of the staging region, whole blocks — into `destination` at the same offsets,
    /// after one erase of that range, and gives the staging region back. `proof` is what
    /// [`super::SignedDecoder::finish`] returns when it accepts the stream, so nothing reaches `destination`
    /// before the verdict: a refused stream (a forged model, a rollback) writes nothing there.
    ///
    /// # Errors
    /// [`PlaceError::TooLarge`] if `destination` is smaller than what was staged; the regions' errors.
    pub fn commit<D: Region<Error = R::Error>>(
        mut self,
        proof: &super::Authentic,
        destination: &mut D,
    ) -> Result<R, PlaceError<R::Error>>
    where
        R: ReadRegion,
    {
        let _ = proof;
        self.flush()?;
        if self.extent > destination.len() {
            return Err(PlaceError::TooLarge { entry: None });
        }
        // One erase of the whole extent, as `start` does: a flash whose erase sectors are larger than its
        // write block would wipe blocks already committed if each block were erased on its own.
        if self.extent > 0 {
            destination.erase(0, self.extent).map_err(PlaceError::Region)?;
        }
        let block = block_len::<B>();
        let mut at = 0u64;
        while at < self.extent {
            self.region.read(at, &mut self.block).map_err(PlaceError::Region)?;
            destination.write(at, &self.block).map_err(PlaceError::Region)?;
            at = at.saturating_add(block);
        }
        self.block = [0; B];
        Ok(self.region)
    }

    /// The prefix is valid: check the room, erase, and (for an image) write the prefix.
    fn start(&mut self, prefix: &Prefix<'_>) -> Result<(), PlaceError<R::Error>> {
        let block = block_len::<B>();
        match self.layout {
            Layout::Image => {
                let span = round_up(prefix.total_len(), block).ok_or(PlaceError::TooLarge { entry: None })?;
                if span > self.region.len() {
                    return Err(PlaceError::TooLarge { entry: None });
                }
                self.region.erase(0, span).map_err(PlaceError::Region)?;
                self.write_at(0, prefix.as_bytes())
            }
            Layout::Targets { base } => {
                // Every check before the first erase, so that a refused stream leaves the region as it was.
                for e in prefix.entries() {
                    let entry = u32::try_from(e.position()).unwrap_or(u32::MAX);
                    let Some((start, end)) = target_span(&e, base, block)? else { continue };
                    if end > self.region.len() {
                        return Err(PlaceError::TooLarge { entry: Some(entry) });
                    }
                    // Targets may come in any order: compare with every earlier entry.
                    for other in prefix.entries().take(e.position()) {
                        if let Ok(Some((s, t))) = target_span::<R::Error>(&other, base, block) {
                            if start < t && s < end {
                                return Err(PlaceError::Overlap { entry });
                            }
                        }
                    }
                }
                for e in prefix.entries() {
                    if let Some((start, end)) = target_span(&e, base, block)? {
                        if end > start {
                            self.region
                                .erase(start, end.saturating_sub(start))
                                .map_err(PlaceError::Region)?;
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// Writes `bytes` at region offset `at`, through the block buffer. In an image the gap since the last
    /// byte (padding) is zeros; a jump elsewhere (another entry's target) closes the block being filled.
    fn write_at(&mut self, at: u64, bytes: &[u8]) -> Result<(), PlaceError<R::Error>> {
        let block = block_len::<B>();
        match self.next {
            Some(n) if at >= n && self.layout == Layout::Image => {
                const ZEROS: [u8; 64] = [0; 64];
                let mut gap = at.saturating_sub(n);
                while gap > 0 {
                    let now = gap.min(64);
                    self.push(ZEROS.get(..usize::try_from(now).unwrap_or(64)).unwrap_or(&ZEROS))?;
                    gap = gap.saturating_sub(now);
                }
            }
            Some(n) if at == n => {}
            _ => {
                self.flush()?;
                let into = at.checked_rem(block).unwrap_or(0);
                self.block_at = at.saturating_sub(into);
                self.fill = usize::try_from(into).unwrap_or(0);
            }
        }
        self.push(bytes)?;
        self.next = Some(at.saturating_add(u64::try_from(bytes.len()).unwrap_or(u64::MAX)));
        Ok(())
    }

    /// Appends to the blocks being filled, writing each out when it is full.
    fn push(&mut self, mut bytes: &[u8]) -> Result<(), PlaceError<R::Error>> {
        while !bytes.is_empty() {
            let room = B.saturating_sub(self.fill);
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            let end = self.fill.saturating_add(now.len());
            if let Some(dest) = self.block.get_mut(self.fill..end) {
                dest.copy_from_slice(now);
            }
            self.fill = end;
            bytes = rest;
            if self.fill >= B {
                self.region.write(self.block_at, &self.block).map_err(PlaceError::Region)?;
                self.extent = self.extent.max(self.block_at.saturating_add(block_len::<B>()));
                self.block_at = self.block_at.saturating_add(block_len::<B>());
                self.block = [0; B];
                self.fill = 0;
            }
        }
        Ok(())
    }

    /// Writes the block being filled, zero-padded to a whole block.
    fn flush(&mut self) -> Result<(), PlaceError<R::Error>> {
        if self.fill > 0 {
            self.region.write(self.block_at, &self.block).map_err(PlaceError::Region)?;
            self.extent = self.extent.max(self.block_at.saturating_add(block_len::<B>()));
            self.block = [0; B];
            self.fill = 0;
        }
        self.next = None;
        Ok(())
    }
}

/// The write block in bytes (at least 1).
fn block_len<const B: usize>() -> u64 {
    u64::try_from(B).unwrap_or(u64::MAX).max(1)
}

/// The region range `[start, end)` an entry with a target takes (end rounded up to a block), or `None`
/// for an entry without a target.
fn target_span<E>(
    e: &super::PrefixEntry<'_>,
    base: u64,
    block: u64,
) -> Result<Option<(u64, u64)>, PlaceError<E>> {
    let Some(target) = e.target() else { return Ok(None) };
    let entry = u32::try_from(e.position()).unwrap_or(u32::MAX);
    let start = target.checked_sub(base).ok_or(PlaceError::BadTarget { entry })?;
    if start.checked_rem(block) != Some(0) {
        return Err(PlaceError::BadTarget { entry });
    }
    let end = start.checked_add(e.byte_len()).and_then(|end| round_up(end, block));
    Ok(Some((start, end.ok_or(PlaceError::TooLarge { entry: Some(entry) })?)))
}

fn round_up(v: u64, block: u64) -> Option<u64> {
    v.checked_next_multiple_of(block)
}
