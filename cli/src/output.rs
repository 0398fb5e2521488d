//! Outputs that appear complete or not at all, even when a signal ends the tool: a file written under a
//! temporary name and renamed over its destination ([`TempOutput`]), and a staging directory whose content is
//! moved into place at the end ([`StagingDir`]). Both are registered with [`crate::signals`] while they exist.
//!
//! Permissions are those of any tool's output: a new file gets `0o666` less the umask (a new directory
//! `0o777` less it), and a replaced file keeps its permission bits — as `tpack::AtomicFile` does. Rejected:
//! using `AtomicFile` itself, which does not tell its temporary file's name, and the name is what a signal
//! handler must delete.

use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, Write};
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::signals::{self, Registration};

/// Buffer between a writer and the file, as `tpack::AtomicFile`'s: small writes batched, large ones direct.
const FILE_BUFFER: usize = 256 * 1024;

/// Name prefix of every temporary file and staging directory.
const PREFIX: &str = ".tpack-";

/// Name suffix of every temporary file and staging directory.
const SUFFIX: &str = ".tmp";

/// The directory `path` is in, `.` for a bare name.
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The permission bits of the regular file `path` names (through symlinks), if there is one.
fn replaced_mode(path: &Path) -> Option<fs::Permissions> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let permissions = meta.permissions();
    #[cfg(unix)]
    let permissions = fs::Permissions::from_mode(permissions.mode() & 0o777);
    Some(permissions)
}

/// A file written under a temporary name in its destination's directory and renamed over the destination only
/// by [`TempOutput::commit`], after an fsync. Dropped without `commit`, or ended by a signal, the temporary
/// file is deleted.
#[derive(Debug)]
pub(crate) struct TempOutput {
    // Declared before `registration`: dropped (deleted) before it is deregistered.
    temp: tempfile::NamedTempFile,
    registration: Registration,
    destination: PathBuf,
    /// Owner-only (`0o600`) from creation to commit, whatever a replaced file's bits were: for private keys.
    private: bool,
}

impl TempOutput {
    /// Creates the temporary file next to `destination`: with the mode of a new file, or owner-only when it is
    /// to replace one (it gets that file's bits at commit).
    ///
    /// # Errors
    /// The I/O error of creating it.
    pub(crate) fn create(destination: &Path) -> io::Result<Self> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(PREFIX).suffix(SUFFIX);
        #[cfg(unix)]
        builder.permissions(fs::Permissions::from_mode(if replaced_mode(destination).is_some() {
            0o600
        } else {
            0o666
        }));
        let held = signals::lock();
        let temp = builder.tempfile_in(parent_of(destination))?;
        let registration = signals::register(&held, temp.path(), false);
        Ok(Self { temp, registration, destination: destination.to_path_buf(), private: false })
    }

    /// Creates the temporary file next to `destination` readable and writable by its owner only (`0o600`),
    /// which it stays after the commit, even over a file with wider permissions: the output is a secret.
    ///
    /// # Errors
    /// The I/O error of creating it.
    pub(crate) fn create_private(destination: &Path) -> io::Result<Self> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(PREFIX).suffix(SUFFIX);
        #[cfg(unix)]
        builder.permissions(fs::Permissions::from_mode(0o600));
        let held = signals::lock();
        let temp = builder.tempfile_in(parent_of(destination))?;
        let registration = signals::register(&held, temp.path(), false);
        Ok(Self { temp, registration, destination: destination.to_path_buf(), private: true })
    }

    /// Writes all of `bytes` to the temporary file (for an output built in memory).
    ///
    /// # Errors
    /// The I/O error of writing.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.temp.as_file_mut().write_all(bytes)
    }

    /// The temporary file itself, for a writer that needs `std::io::Write + Seek` (the zip archive of an
    /// `.npz`).
    pub(crate) fn file_mut(&mut self) -> &mut File {
        self.temp.as_file_mut()
    }

    /// A buffered, seekable sink over the temporary file for `tpack::write::SeekWriter`; it flushes when the writer
    /// finishes.
    pub(crate) fn sink(&mut self) -> Sink<'_> {
        Sink(BufWriter::with_capacity(FILE_BUFFER, self.temp.as_file_mut()))
    }

    /// Gives the file an existing destination's permission bits, fsyncs it, renames it over the destination and
    /// fsyncs the directory; an interrupt meanwhile waits until this is done.
    ///
    /// # Errors
    /// The I/O error of the step that failed; before the rename, the destination is unchanged and the
    /// temporary file is deleted.
    pub(crate) fn commit(self) -> io::Result<()> {
        let Self { temp, registration, destination, private } = self;
        let _held = signals::lock();
        // `temp` is consumed, and deleted if it was not renamed, before it is deregistered.
        let renamed = persist(temp, &destination, private);
        drop(registration);
        renamed?;
        sync_directory(&parent_of(&destination))
    }
}

/// Writes `bytes`, built in memory, to `path` atomically through a [`TempOutput`]: owner-only (`0o600`) when
/// `private`.
///
/// # Errors
/// [`crate::Kind::Io`] naming `path` and the step that failed; `path` is then unchanged.
pub(crate) fn write_file(path: &Path, bytes: &[u8], private: bool) -> crate::error::Result<()> {
    use crate::error::CliError;
    let created = if private { TempOutput::create_private(path) } else { TempOutput::create(path) };
    let mut file = created.map_err(|e| CliError::io("cannot create a file next to", path, &e))?;
    file.write_all(bytes).map_err(|e| CliError::io("cannot write", path, &e))?;
    file.commit().map_err(|e| CliError::io("cannot save", path, &e))
}

/// Gives `temp` the permission bits of the file `destination` if there is one (unless `temp` is `private`, and
/// keeps its owner-only bits), fsyncs it and renames it there.
fn persist(temp: tempfile::NamedTempFile, destination: &Path, private: bool) -> io::Result<()> {
    if let Some(permissions) = replaced_mode(destination).filter(|_| !private) {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.as_file().sync_all()?;
    temp.persist(destination).map_err(|e| e.error)?;
    Ok(())
}

/// fsyncs a directory so that a rename in it survives a crash (a no-op where directories cannot be opened).
fn sync_directory(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The sink of a [`TempOutput`]: `embedded_io`'s traits over a buffered file.
#[derive(Debug)]
pub(crate) struct Sink<'a>(BufWriter<&'a mut File>);

impl embedded_io::ErrorType for Sink<'_> {
    type Error = io::Error;
}

impl embedded_io::Write for Sink<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl embedded_io::Seek for Sink<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> io::Result<u64> {
        self.0.seek(match pos {
            embedded_io::SeekFrom::Start(n) => io::SeekFrom::Start(n),
            embedded_io::SeekFrom::End(n) => io::SeekFrom::End(n),
            embedded_io::SeekFrom::Current(n) => io::SeekFrom::Current(n),
        })
    }
}

/// A directory created next to a destination, written into, and moved into place by one of its commits.
/// Dropped without a commit, or ended by a signal, it is deleted with everything in it.
#[derive(Debug)]
pub(crate) struct StagingDir {
    // Declared before `registration`: dropped (deleted) before it is deregistered.
    dir: tempfile::TempDir,
    registration: Registration,
}

impl StagingDir {
    /// Creates the staging directory in the directory of `destination`, with a new directory's mode.
    ///
    /// # Errors
    /// The I/O error of creating it.
    pub(crate) fn create(destination: &Path) -> io::Result<Self> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(PREFIX).suffix(SUFFIX);
        #[cfg(unix)]
        builder.permissions(fs::Permissions::from_mode(0o777));
        let held = signals::lock();
        let dir = builder.tempdir_in(parent_of(destination))?;
        let registration = signals::register(&held, dir.path(), true);
        Ok(Self { dir, registration })
    }

    /// The staging directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Creates the new file `name` in the staging directory (never following a symlink) under the lock, so that
    /// none is created after an interrupt's sweep.
    ///
    /// # Errors
    /// The I/O error of creating it.
    pub(crate) fn create_file(&self, name: &str) -> io::Result<File> {
        let _held = signals::lock();
        File::options().write(true).create_new(true).open(self.dir.path().join(name))
    }

    /// Moves the file `name`, written in the staging directory (by a library, with whatever mode it chose), to
    /// `destination`, with the mode of a new file or that of the file it replaces; then removes the directory.
    ///
    /// # Errors
    /// The I/O error of the step that failed; before the rename, the destination is unchanged.
    pub(crate) fn commit_file(self, name: &str, destination: &Path) -> io::Result<()> {
        let Self { dir, registration } = self;
        let _held = signals::lock();
        let moved = move_file(&dir.path().join(name), destination, dir.path());
        // The directory is deleted, with whatever is left in it, before it is deregistered.
        let closed = dir.close();
        drop(registration);
        moved?;
        closed?;
        sync_directory(&parent_of(destination))
    }

    /// Moves the files `names` (written in the staging directory, the last one last) into the directory
    /// `destination`: the staging directory becomes `destination` when that does not exist or is an empty
    /// directory (whose permission bits it takes); otherwise each file is renamed into it, replacing a file of
    /// its name and keeping that file's permission bits.
    ///
    /// # Errors
    /// The I/O error of the step that failed.
    pub(crate) fn commit_into(self, names: &[String], destination: &Path) -> io::Result<()> {
        let Self { dir, registration } = self;
        let _held = signals::lock();
        let moved = move_files(dir.path(), names, destination);
        // Deleted, with whatever is left in it, unless it became `destination`; then deregistered.
        let closed = match moved {
            Ok(true) => {
                let _ = dir.keep();
                Ok(())
            }
            _ => dir.close(),
        };
        drop(registration);
        moved?;
        closed?;
        sync_directory(destination)?;
        sync_directory(&parent_of(destination))
    }
}

impl StagingDir {
    /// Moves the files `names`, written in the staging directory, into the existing directory `dir`, in order,
    /// each with the mode of a new file or that of the file it replaces; then removes the staging directory.
    /// An interrupt meanwhile waits until this is done, so it never leaves some of the files moved.
    ///
    /// # Errors
    /// The I/O error of the step that failed; the files moved before it stay moved.
    pub(crate) fn commit_files(self, names: &[String], dir: &Path) -> io::Result<()> {
        let Self { dir: staging, registration } = self;
        let _held = signals::lock();
        let moved = names
            .iter()
            .try_for_each(|name| move_file(&staging.path().join(name), &dir.join(name), staging.path()));
        let closed = staging.close();
        drop(registration);
        moved?;
        closed?;
        sync_directory(dir)
    }
}

/// Moves `staged` to `destination` with the permission bits of the file it replaces, or of a new file
/// (told by `dir`, created `0o777` less the umask).
fn move_file(staged: &Path, destination: &Path, dir: &Path) -> io::Result<()> {
    let permissions = match replaced_mode(destination) {
        Some(p) => p,
        None => new_file_permissions(dir)?,
    };
    let file = File::open(staged)?;
    file.set_permissions(permissions)?;
    file.sync_all()?;
    fs::rename(staged, destination)
}

/// The moves of [`StagingDir::commit_into`]; whether the staging directory `dir` itself became `destination`.
fn move_files(dir: &Path, names: &[String], destination: &Path) -> io::Result<bool> {
    for name in names {
        File::open(dir.join(name))?.sync_all()?;
    }
    let empty = match destination.symlink_metadata() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => true,
        Err(e) => return Err(e),
        Ok(meta) if meta.is_dir() && fs::read_dir(destination)?.next().is_none() => {
            fs::set_permissions(dir, meta.permissions())?;
            true
        }
        Ok(_) => false,
    };
    // Renaming a directory over an empty one is allowed on Linux and macOS; where it is not, files move.
    if empty && fs::rename(dir, destination).is_ok() {
        return Ok(true);
    }
    for name in names {
        let staged = dir.join(name);
        let target = destination.join(name);
        if let Some(permissions) = replaced_mode(&target) {
            fs::set_permissions(&staged, permissions)?;
        }
        fs::rename(&staged, &target)?;
    }
    Ok(false)
}

/// The permissions of a new file: `0o666` less the umask, told by the mode of `dir`, created `0o777` less it.
fn new_file_permissions(dir: &Path) -> io::Result<fs::Permissions> {
    let mut permissions = fs::metadata(dir)?.permissions();
    #[cfg(unix)]
    permissions.set_mode(permissions.mode() & 0o666);
    // Elsewhere the only bit is read-only, which a directory's attributes do not pass on to a new file.
    #[cfg(not(unix))]
    #[expect(
        clippy::permissions_set_readonly_false,
        reason = "not Unix: clears the read-only attribute only"
    )]
    permissions.set_readonly(false);
    Ok(permissions)
}
