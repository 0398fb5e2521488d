//! Test sinks: an in-memory seekable sink that can be told to fail at byte k, and its non-seekable twin.

#![allow(dead_code)]

use embedded_io::{ErrorKind, ErrorType, Seek, SeekFrom, Write};

/// Bytes in memory with a cursor; after `fail_at` bytes have been written in total (counting rewrites), every
/// write fails.
#[derive(Debug, Default)]
pub struct MemSink {
    pub bytes: Vec<u8>,
    pub position: usize,
    pub fail_at: Option<usize>,
    pub written: usize,
    pub seeks: usize,
}

impl MemSink {
    pub fn failing_at(k: usize) -> Self {
        Self { fail_at: Some(k), ..Self::default() }
    }
}

impl ErrorType for MemSink {
    type Error = ErrorKind;
}

impl Write for MemSink {
    fn write(&mut self, data: &[u8]) -> Result<usize, ErrorKind> {
        if data.is_empty() {
            return Ok(0);
        }
        let room = self.fail_at.map_or(usize::MAX, |k| k.saturating_sub(self.written));
        if room == 0 {
            return Err(ErrorKind::Other);
        }
        let n = data.len().min(room);
        let end = self.position + n;
        if self.bytes.len() < end {
            self.bytes.resize(end, 0);
        }
        self.bytes[self.position..end].copy_from_slice(&data[..n]);
        self.position = end;
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> Result<(), ErrorKind> {
        Ok(())
    }
}

impl Seek for MemSink {
    fn seek(&mut self, pos: SeekFrom) -> Result<u64, ErrorKind> {
        self.seeks += 1;
        self.position = match pos {
            SeekFrom::Start(p) => p as usize,
            SeekFrom::End(d) => (self.bytes.len() as i64 + d) as usize,
            SeekFrom::Current(d) => (self.position as i64 + d) as usize,
        };
        Ok(self.position as u64)
    }
}

/// A sink that can only append.
#[derive(Debug, Default)]
pub struct PipeSink(pub MemSink);

impl ErrorType for PipeSink {
    type Error = ErrorKind;
}

impl Write for PipeSink {
    fn write(&mut self, data: &[u8]) -> Result<usize, ErrorKind> {
        self.0.write(data)
    }
    fn flush(&mut self) -> Result<(), ErrorKind> {
        Ok(())
    }
}
