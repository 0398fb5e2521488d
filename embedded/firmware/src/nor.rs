//! A flash-like region in RAM that behaves as NOR flash does, for the streaming phase's [`Placer`]: erasing
//! sets bytes to 0xFF, programming can only clear bits, and both go in whole blocks. It refuses what a flash
//! part would refuse or silently corrupt: a write outside the region or off the block grid, and a write into a
//! block not erased since it was last programmed. The streaming phase has two: the download slot the stream is
//! staged in, and the final region an authentic model is committed to; each counts the calls made to it.
//!
//! [`Placer`]: tpack::stream::Placer

use core::ops::Range;

use tpack::stream::{ReadRegion, Region};

/// The write (and erase) block in bytes.
pub const BLOCK: usize = 16;
/// The region's length: one 4 KiB sector.
pub const LEN: usize = 4096;
const BLOCKS: usize = LEN / BLOCK;

/// Why the region refused a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NorError {
    /// The range is not whole blocks inside the region.
    OffGrid,
    /// A block written into was not erased since it was last programmed.
    NotErased,
}

/// The region: `LEN` bytes, and which blocks are erased and not yet programmed.
pub struct Nor<'a> {
    bytes: &'a mut [u8; LEN],
    erased: [bool; BLOCKS],
    /// Calls made to `erase` and blocks programmed by `write`.
    pub erases: u32,
    pub blocks_written: u32,
}

impl<'a> Nor<'a> {
    /// The region over `bytes`, with unknown old contents (zeros) and nothing erased.
    pub fn new(bytes: &'a mut [u8; LEN]) -> Self {
        bytes.fill(0);
        Nor { bytes, erased: [false; BLOCKS], erases: 0, blocks_written: 0 }
    }

    /// The region's bytes, to read in place.
    pub fn bytes(&self) -> &[u8] {
        self.bytes
    }

    /// The blocks `[offset, offset + len)` covers, if it is whole blocks inside the region.
    fn blocks(offset: u64, len: usize) -> Result<Range<usize>, NorError> {
        let start = usize::try_from(offset).map_err(|_| NorError::OffGrid)?;
        let end = start.checked_add(len).filter(|&e| e <= LEN).ok_or(NorError::OffGrid)?;
        if !start.is_multiple_of(BLOCK) || !len.is_multiple_of(BLOCK) {
            return Err(NorError::OffGrid);
        }
        Ok(start / BLOCK..end / BLOCK)
    }
}

impl Region for Nor<'_> {
    type Error = NorError;

    fn len(&self) -> u64 {
        u64::try_from(LEN).unwrap_or(u64::MAX)
    }

    fn erase(&mut self, offset: u64, len: u64) -> Result<(), NorError> {
        let blocks = Self::blocks(offset, usize::try_from(len).map_err(|_| NorError::OffGrid)?)?;
        let bytes = blocks.start * BLOCK..blocks.end * BLOCK;
        self.erased.get_mut(blocks).ok_or(NorError::OffGrid)?.fill(true);
        self.bytes.get_mut(bytes).ok_or(NorError::OffGrid)?.fill(0xFF);
        self.erases += 1;
        Ok(())
    }

    fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), NorError> {
        let blocks = Self::blocks(offset, data.len())?;
        let bytes = blocks.start * BLOCK..blocks.end * BLOCK;
        let erased = self.erased.get_mut(blocks.clone()).ok_or(NorError::OffGrid)?;
        let cells = self.bytes.get_mut(bytes).ok_or(NorError::OffGrid)?;
        if !erased.iter().all(|&e| e) || cells.iter().any(|&b| b != 0xFF) {
            return Err(NorError::NotErased);
        }
        // Programming clears bits; on erased cells that leaves exactly `data`.
        for (cell, &byte) in cells.iter_mut().zip(data) {
            *cell &= byte;
        }
        erased.fill(false);
        self.blocks_written += u32::try_from(blocks.len()).unwrap_or(u32::MAX);
        Ok(())
    }
}

impl ReadRegion for Nor<'_> {
    fn read(&self, offset: u64, into: &mut [u8]) -> Result<(), NorError> {
        let start = usize::try_from(offset).map_err(|_| NorError::OffGrid)?;
        let end = start.checked_add(into.len()).ok_or(NorError::OffGrid)?;
        into.copy_from_slice(self.bytes.get(start..end).ok_or(NorError::OffGrid)?);
        Ok(())
    }
}
