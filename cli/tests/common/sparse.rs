//! Big containers that cost no disk: their zero payloads are holes. Shared by tests/signals.rs and
//! benches/memory.rs (which includes this file by its path).

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use tpack::write::{EntryDecl, SeekWriter, VecBookkeeping};
use tpack::Dtype;

/// A file sink that seeks over chunks of zeros instead of writing them; `flush` sets the file's length to the
/// furthest byte reached, so trailing holes count too.
struct Sparse {
    file: File,
    end: u64,
}

impl embedded_io::ErrorType for Sparse {
    type Error = std::io::Error;
}

impl embedded_io::Write for Sparse {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.iter().all(|&b| b == 0) {
            self.file.seek(SeekFrom::Current(i64::try_from(buf.len()).unwrap()))?;
        } else {
            self.file.write_all(buf)?;
        }
        self.end = self.end.max(self.file.stream_position()?);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.set_len(self.end)
    }
}

impl embedded_io::Seek for Sparse {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> std::io::Result<u64> {
        self.file.seek(match pos {
            embedded_io::SeekFrom::Start(n) => SeekFrom::Start(n),
            embedded_io::SeekFrom::End(n) => SeekFrom::End(n),
            embedded_io::SeekFrom::Current(n) => SeekFrom::Current(n),
        })
    }
}

/// Writes at `path` a container of `entries` U8 entries named `blocks.{i}.weight`, sharing `total` zero
/// payload bytes equally (the remainder of the division is dropped), sparsely: gigabytes cost no disk.
pub fn sparse_container(path: &Path, entries: u64, total: u64) {
    let each = total / entries;
    let names: Vec<String> = (0..entries).map(|i| format!("blocks.{i}.weight")).collect();
    let sink = Sparse { file: File::create(path).unwrap(), end: 0 };
    let mut w = SeekWriter::new(sink, VecBookkeeping);
    for name in &names {
        w.declare(EntryDecl::new(name, Dtype::U8, &[each])).unwrap();
    }
    let zeros = vec![0u8; 8 << 20];
    for _ in &names {
        let mut left = each;
        while left > 0 {
            let n = usize::try_from(left).unwrap().min(zeros.len());
            w.write(&zeros[..n]).unwrap();
            left -= n as u64;
        }
        w.end_entry().unwrap();
    }
    let mut sink = w.finish().unwrap();
    embedded_io::Write::flush(&mut sink).unwrap();
}
