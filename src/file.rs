//! Files (feature `std`): writing a container atomically, and reading one through a memory map.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use embedded_io_adapters::std::FromStd;

use crate::error::Error;
use crate::read::Container;
use crate::read::Entry;

/// The sink an [`AtomicFile`] lends to a writer: buffered, seekable, with `std::io::Error` as its error.
///
/// A type of its own rather than an `embedded-io-adapters` type, so that no adapter crate's version is part
/// of this crate's API.
pub struct FileSink<'a> {
    inner: FromStd<BufWriter<&'a mut File>>,
}

impl core::fmt::Debug for FileSink<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FileSink").finish_non_exhaustive()
    }
}

impl embedded_io::ErrorType for FileSink<'_> {
    type Error = io::Error;
}

impl embedded_io::Write for FileSink<'_> {
    fn write(&mut self, buf: &[u8]) -> Result<usize, io::Error> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> Result<(), io::Error> {
        self.inner.flush()
    }
}

impl embedded_io::Seek for FileSink<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, io::Error> {
        self.inner.seek(pos)
    }
}

/// Buffer between a writer and the file: small writes (descriptors, padding) are batched; payload chunks at
/// least this large go straight through.
const FILE_BUFFER: usize = 256 * 1024;

/// A file written under a temporary name in its destination's directory and renamed over the destination only
/// by [`AtomicFile::commit`], after an fsync: the destination holds either its old content or the complete new
/// file, never a partial one. Dropped without `commit`, the temporary file is deleted.
///
/// Permissions (Unix): a new file gets the mode any tool's new file gets, `0o666` less the process's umask. A
/// file that replaces an existing one keeps the permission bits (`0o777`) of the file it replaces; until then
/// the temporary file is readable by its owner only, so content that replaces a private file is never
/// exposed. Owner and group are the creating process's, as for any new file.
///
/// ```
/// use tpack::write::{EntryDecl, SeekWriter, VecBookkeeping};
/// use tpack::{AtomicFile, Dtype};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("model.tpack");
/// let mut file = AtomicFile::create(&path)?;
/// let mut writer = SeekWriter::new(file.sink(), VecBookkeeping);
/// writer.declare(EntryDecl::new("w", Dtype::U8, &[3]))?;
/// writer.write_entry(&[1, 2, 3])?;
/// drop(writer.finish()?);
/// file.commit()?;
/// let mapped = tpack::MappedFile::open(&path)?;
/// assert_eq!(mapped.container()?.get("w").unwrap().payload(), [1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    temp: tempfile::NamedTempFile,
    destination: PathBuf,
}

impl AtomicFile {
    /// Creates the temporary file next to `destination`.
    ///
    /// # Errors
    /// The I/O error of creating it (a missing or read-only directory, say).
    pub fn create(destination: impl AsRef<Path>) -> io::Result<Self> {
        let destination = destination.as_ref().to_path_buf();
        let dir = match destination.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".tpack-").suffix(".tmp");
        // tempfile's own default, 0o600, would make every output private whatever the umask.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(creation_mode(&destination)));
        let temp = builder.tempfile_in(dir)?;
        Ok(Self { temp, destination })
    }

    /// A buffered, seekable sink over the temporary file, for [`crate::write::SeekWriter`] or
    /// [`crate::write::StreamWriter`]. The writers flush it when they finish.
    pub fn sink(&mut self) -> FileSink<'_> {
        FileSink { inner: FromStd::new(BufWriter::with_capacity(FILE_BUFFER, self.temp.as_file_mut())) }
    }

    /// Makes the file durable and atomically gives it the destination's name: fsync the file, rename it, then
    /// fsync the directory so that the rename itself survives a crash. If the destination exists, its permission
    /// bits are first given to the new file (see [`AtomicFile`]).
    ///
    /// # Errors
    /// The I/O error of the step that failed. If the file's fsync or the rename failed, the destination still
    /// holds its old content (and the temporary file is deleted). If only the directory's fsync failed, the
    /// rename has happened — the destination holds the new, complete file — but a crash soon after could
    /// still undo the rename.
    pub fn commit(self) -> io::Result<()> {
        #[cfg(unix)]
        if let Some(mode) = replaced_mode(&self.destination) {
            self.temp.as_file().set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))?;
        }
        self.temp.as_file().sync_all()?;
        let dir = self.temp.path().parent().map(Path::to_path_buf);
        self.temp.persist(&self.destination).map_err(|e| e.error)?;
        #[cfg(unix)]
        if let Some(dir) = dir {
            File::open(dir)?.sync_all()?;
        }
        #[cfg(not(unix))]
        let _ = dir;
        Ok(())
    }
}

/// The mode the temporary file is created with, before the umask: that of any new file, or owner-only while it
/// is to replace an existing file (whose own bits it gets at commit).
#[cfg(unix)]
fn creation_mode(destination: &Path) -> u32 {
    if replaced_mode(destination).is_some() {
        0o600
    } else {
        0o666
    }
}

/// The permission bits of the regular file `destination` names (through symlinks), if there is one.
#[cfg(unix)]
fn replaced_mode(destination: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(destination).ok()?;
    meta.is_file().then(|| meta.permissions().mode() & 0o777)
}

/// Why [`MappedFile::open`] failed.
///
/// Exhaustive on purpose: opening is I/O and then parsing, and a binding that maps the two to its own errors
/// (the Python package: `OSError`, `FormatError`) matches them exhaustively, so a third would fail to compile
/// there until it is mapped.
#[derive(Debug)]
pub enum OpenError {
    /// Opening or mapping the file failed.
    Io(io::Error),
    /// The file is not a valid container.
    Format(Error),
}

impl core::fmt::Display for OpenError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            OpenError::Io(e) => write!(f, "cannot map the file: {e}"),
            OpenError::Format(e) => write!(f, "not a valid tpack container: {e}"),
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpenError::Io(e) => Some(e),
            OpenError::Format(e) => Some(e),
        }
    }
}

/// A container read through a read-only memory map. Opening validates the structure, which reads the header,
/// table, index, names and metadata pages only — never payload pages (spec §12) — so it costs the same for a
/// 4 GiB file as for a 1 MiB one with the same table.
///
/// The file stays open as long as its map, so that [`MappedFile::private_payload`] maps the very file that was
/// validated, not whatever its path names later.
#[derive(Debug)]
pub struct MappedFile {
    map: memmap2::Mmap,
    file: File,
}

impl MappedFile {
    /// Maps `path` and validates it.
    ///
    /// # Errors
    /// [`OpenError::Io`] if the file cannot be opened or mapped ([`io::ErrorKind::IsADirectory`] for a
    /// directory), [`OpenError::Format`] if it breaks a structural rule.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OpenError> {
        let path = path.as_ref();
        // A directory opens on Unix, and mapping it then fails with ENODEV ("No such device"); on Windows opening
        // it fails with "Access denied". Neither says the cause.
        let directory = || OpenError::Io(io::ErrorKind::IsADirectory.into());
        let file =
            File::open(path).map_err(|e| if path.is_dir() { directory() } else { OpenError::Io(e) })?;
        if file.metadata().map_err(OpenError::Io)?.is_dir() {
            return Err(directory());
        }
        // SAFETY: a shared read-only mapping. The one hazard is another process truncating or rewriting the
        // file while it is mapped, which no safe API can rule out for mapped files (safetensors and every other
        // mmap reader share it); the reader itself never trusts the bytes, so a concurrent change can give a
        // wrong answer or an error, while truncation can give SIGBUS, as with any mapped file.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(OpenError::Io)?;
        let mapped = Self { map, file };
        mapped.container().map_err(OpenError::Format)?;
        Ok(mapped)
    }

    /// The container, viewed again in O(1) from the layout that [`MappedFile::open`] validated: nothing is
    /// parsed twice, however often it is called.
    ///
    /// A file changed underneath its map since `open` can make the view's answers wrong (never a panic or
    /// undefined behaviour: every accessor slices with checks), as it can for any `Container` held across the
    /// change; re-open the file to validate it again.
    ///
    /// # Errors
    /// When the header now places a section outside the file, the rule the bytes now break (the file is
    /// parsed again to name it).
    pub fn container(&self) -> Result<Container<'_>, Error> {
        match Container::from_checked(&self.map) {
            Some(container) => Ok(container),
            None => Container::parse(&self.map),
        }
    }

    /// The mapped bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.map
    }

    /// Asks the kernel to read `entry`'s payload pages ahead of use (`madvise(MADV_WILLNEED)`); a no-op where
    /// that does not exist. `entry` may belong to this file's container or to a container nested in it: the
    /// pages are found from where its payload lies in the map, not from its offset, which a nested
    /// container counts from its own start.
    ///
    /// # Errors
    /// [`io::ErrorKind::InvalidInput`] for an entry whose payload is not in this map (an entry of another
    /// file); the I/O error of the advice call.
    pub fn prefetch(&self, entry: &Entry<'_>) -> io::Result<()> {
        let (start, len) = self.payload_range(entry)?;
        #[cfg(unix)]
        if len > 0 {
            self.map.advise_range(memmap2::Advice::WillNeed, start, len)?;
        }
        #[cfg(not(unix))]
        let _ = (start, len);
        Ok(())
    }

    /// `entry`'s payload in a private, copy-on-write mapping of this file (`MAP_PRIVATE`; `FILE_MAP_COPY` on
    /// Windows): writable, read from the file's pages as they are touched (nothing is copied up front), and
    /// never written back — a write copies that one page into process memory. Each call maps anew, so two
    /// results never share a written page. `entry` may belong to a container nested in this file, as for
    /// [`MappedFile::prefetch`].
    ///
    /// The hazards are the shared map's: a file truncated under the mapping raises SIGBUS where a page past
    /// its new end is touched; a page not yet written shows the file's current bytes.
    ///
    /// # Errors
    /// [`io::ErrorKind::InvalidInput`] for an entry whose payload is not in this map; the I/O error of the
    /// mapping call.
    pub fn private_payload(&self, entry: &Entry<'_>) -> io::Result<PrivatePayload> {
        let (start, len) = self.payload_range(entry)?;
        let offset = u64::try_from(start).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a private mapping of the file this map was made from, which the process never writes
        // through (writes land in private pages); its hazards are the shared map's (see `open`).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::MmapOptions::new().offset(offset).len(len).map_copy(&self.file) }?;
        Ok(PrivatePayload { map })
    }

    /// Where `entry`'s payload lies in the map: `(start, len)` in bytes.
    fn payload_range(&self, entry: &Entry<'_>) -> io::Result<(usize, usize)> {
        let map = self.map.as_ptr_range();
        let payload = entry.payload().as_ptr_range();
        if payload.start < map.start || payload.end > map.end {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "the entry is not in this mapped file"));
        }
        // Both differences are in range: the payload lies inside the map, checked just above.
        let start = payload.start.addr().wrapping_sub(map.start.addr());
        let len = payload.end.addr().wrapping_sub(payload.start.addr());
        Ok((start, len))
    }
}

/// One entry's payload in a private, copy-on-write mapping of its file, made by
/// [`MappedFile::private_payload`]: a writable copy of the payload that costs no memory until written, and
/// whose writes never reach the file. Unmapped when dropped.
#[derive(Debug)]
pub struct PrivatePayload {
    map: memmap2::MmapMut,
}

impl PrivatePayload {
    /// The payload's bytes (the file's, or the process's where written).
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.map
    }

    /// The payload's bytes, writable; writes stay in this process.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map
    }
}
