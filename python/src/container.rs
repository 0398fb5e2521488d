//! [`NativeContainer`]: an open container (a memory-mapped file or a private copy of some bytes).

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tpack::auth::{Authenticated, Policy, SoftwareCrypto};
use tpack::{Container, Dtype, Entry, EntryVerification, MappedFile, OpenError, Packing};

use crate::errors::{format_error, os_error, Kind};
use crate::keys::{KeyDecl, TrustedKeys};
use crate::load::{self, Destination, LoadError};
use crate::meta;
use crate::source::{AlignedBuf, Bytes, Parsed};
use crate::view::PayloadView;

/// An open, structurally valid container. `close()` drops its hold on the bytes; arrays already handed out
/// keep them (and a file's map) alive until they are gone, and so does a call in progress in another thread.
///
/// Once authenticated against a policy (`authenticate`), each entry's payload is checked the first time it is
/// handed out (R64 in a signed container, R50 in an unsigned one the policy allows), and never again.
///
/// Every method takes `&self` (the class is `frozen`): each call clones the `Arc` of what is open and works on
/// that, so `close()` from another thread (or from a `verify` callback) never meets PyO3's borrow check
/// ("Already borrowed") and never frees bytes under a running call. Rejected: making `close` wait for running
/// calls, which deadlocks when a `verify` progress callback closes its own container.
#[pyclass(frozen, module = "tpack._native")]
pub struct NativeContainer {
    /// `None` once closed.
    open: Mutex<Option<Arc<Open>>>,
}

/// What an open container holds.
struct Open {
    parsed: Parsed,
    /// Per entry, whether its payload has passed its check; empty until `authenticate`.
    checked: Vec<AtomicBool>,
    /// The mapped file, open for `pread` (`read_into`); only for `open_file_for_load`.
    file: Option<Arc<File>>,
}

/// Maps `path` and validates its structure (every rule but the payload checksums).
#[pyfunction]
pub fn open_file(py: Python<'_>, path: PathBuf) -> PyResult<NativeContainer> {
    let file = match MappedFile::open(&path) {
        Ok(file) => file,
        Err(OpenError::Io(e)) => return Err(os_error(&e, Some(&path))),
        Err(OpenError::Format(e)) => return Err(format_error(py, e, Kind::Format, None, None)),
    };
    parse(py, Bytes::Mapped(file))
}

/// Validates a private, 64-byte-aligned copy of `data`.
#[pyfunction]
pub fn open_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<NativeContainer> {
    parse(py, Bytes::Heap(AlignedBuf::copy_from(data.as_bytes())))
}

/// Like `open_file`, keeping the file open for `read_into`. The file is opened first and the map made after;
/// the path must still name the same file (device and inode) once it is mapped, so that the payloads read
/// later are those of the file whose structure was validated.
#[pyfunction]
pub fn open_file_for_load(py: Python<'_>, path: PathBuf) -> PyResult<NativeContainer> {
    let file = File::open(&path).map_err(|e| os_error(&e, Some(&path)))?;
    let container = open_file(py, path.clone())?;
    if !same_file(&file, &path).map_err(|e| os_error(&e, Some(&path)))? {
        return Err(os_error(
            &std::io::Error::other("the file was replaced while it was being opened"),
            Some(&path),
        ));
    }
    let mut slot = container.slot();
    if let Some(open) = slot.as_mut().and_then(Arc::get_mut) {
        open.file = Some(Arc::new(file));
    }
    drop(slot);
    Ok(container)
}

/// Whether `path` names the file `file` has open.
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let (open, named) = (file.metadata()?, std::fs::metadata(path)?);
    Ok(open.dev() == named.dev() && open.ino() == named.ino())
}

/// Whether `path` names the file `file` has open: on Windows a file open for reading cannot be renamed over
/// or deleted (no `FILE_SHARE_DELETE`), so it still does.
#[cfg(not(unix))]
fn same_file(_file: &File, _path: &Path) -> std::io::Result<bool> {
    Ok(true)
}

fn parse(py: Python<'_>, bytes: Bytes) -> PyResult<NativeContainer> {
    match Parsed::new(Arc::new(bytes)) {
        Ok(parsed) => Ok(NativeContainer::new(parsed)),
        Err(e) => Err(format_error(py, e, Kind::Format, None, None)),
    }
}

/// `(kind, block elements, block bytes)` for a packing: `("element", 1, n)`, `("block", e, b)`, `("bytes", 1, 1)`.
fn packing_tuple(packing: Packing) -> (&'static str, u64, u64) {
    match packing {
        Packing::Element(n) => ("element", 1, n),
        Packing::Block { block_elems, block_bytes } => ("block", block_elems, block_bytes),
        Packing::Bytes => ("bytes", 1, 1),
    }
}

/// Every dtype this build knows: `(code, name, packing)` in code order, for the Python side's tables.
#[pyfunction]
pub fn dtype_info() -> Vec<(u16, &'static str, (&'static str, u64, u64))> {
    Dtype::ALL.iter().filter_map(|d| Some((d.code(), d.name()?, packing_tuple(d.packing()?)))).collect()
}

impl NativeContainer {
    fn new(parsed: Parsed) -> Self {
        NativeContainer { open: Mutex::new(Some(Arc::new(Open { parsed, checked: Vec::new(), file: None }))) }
    }

    /// The slot; a panic elsewhere while it was locked cannot leave it half-written (it is only ever
    /// replaced whole), so a poisoned lock is used as it is.
    fn slot(&self) -> MutexGuard<'_, Option<Arc<Open>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What is open, held for the call: `close()` meanwhile does not free it under the call.
    fn open(&self) -> PyResult<Arc<Open>> {
        self.slot().clone().ok_or_else(|| PyValueError::new_err("I/O operation on a closed tpack container"))
    }

    fn entry_at<'c>(container: &Container<'c>, position: usize) -> PyResult<Entry<'c>> {
        container.entry(position).ok_or_else(|| PyIndexError::new_err("entry position out of range"))
    }
}

impl Open {
    /// Checks entry `position`'s payload against its signed digest (or its CRC, unsigned) the first time it is
    /// used in an authenticated container; nothing otherwise. Hashing runs without the GIL.
    fn check_entry(&self, py: Python<'_>, position: usize) -> PyResult<()> {
        let Some(authenticated) = self.parsed.authenticated() else { return Ok(()) };
        let Some(checked) = self.checked.get(position) else { return Ok(()) };
        if checked.load(Ordering::Acquire) {
            return Ok(());
        }
        // Two threads reading the same new entry may both hash it: harmless, and no lock is held while hashing.
        match py.detach(|| authenticated.verify_entry(position, &SoftwareCrypto)) {
            Ok(_) => {
                checked.store(true, Ordering::Release);
                Ok(())
            }
            Err(e) => Err(entry_error(py, &authenticated.container(), e, position)),
        }
    }
}

/// The exception for `error` found checking entry `position` of `container`: a digest mismatch (R64) is about
/// authenticity, anything else (R37, R50, a nested container's error) about integrity. The error names the
/// outer entry, also for an error inside a nested container.
fn entry_error(py: Python<'_>, container: &Container<'_>, error: tpack::Error, position: usize) -> PyErr {
    let kind = if error.rule() == tpack::Rule::EntryDigest { Kind::Signature } else { Kind::Integrity };
    format_error(py, error, kind, u32::try_from(position).ok(), Some(container))
}

/// One entry's payload-integrity verdict in the spec's order: the padding before it (R37), in an authenticated
/// signed container its signed digest (R64), then its CRC and a nested container's payloads (R50, …).
fn judge(authenticated: Option<&Authenticated<'_>>, v: &EntryVerification<'_>) -> Result<(), tpack::Error> {
    v.padding?;
    let position = v.entry.position();
    // `digest` is `None` for the signature entry and in an unsigned container: the CRC is their check.
    if let Some(a) = authenticated.filter(|a| a.digest(position).is_some()) {
        a.verify_entry(position, &SoftwareCrypto)?;
    }
    v.payload
}

#[pymethods]
impl NativeContainer {
    /// Drops this object's hold on the bytes. Idempotent.
    ///
    /// A call running in another thread (or the `verify` whose callback closes) finishes on the bytes it
    /// started with; they are released when it returns and no array views them.
    fn close(&self) {
        let open = self.slot().take();
        // Dropped outside the lock: unmapping a file can take a while.
        drop(open);
    }

    #[getter]
    fn closed(&self) -> bool {
        self.slot().is_none()
    }

    /// Checks the signature against a policy (R58–R63, in the spec's order), hashing only the prefix and the
    /// digests; from then on each payload is checked when first handed out. `keys` are `(algorithm code, raw
    /// public key or None, key id, subject or None)`.
    fn authenticate(
        &self,
        py: Python<'_>,
        keys: Vec<KeyDecl>,
        require_signature: bool,
        min_counter: u64,
        subject: Option<String>,
    ) -> PyResult<()> {
        let keys = TrustedKeys::new(keys)?;
        let trusted = keys.trusted();
        let policy = Policy { keys: &trusted, require_signature, min_counter, subject: subject.as_deref() };
        let mut parsed = self.open()?.parsed.clone();
        if let Err(e) = parsed.authenticate(&policy) {
            return Err(format_error(py, e, Kind::Signature, None, Some(&parsed.container())));
        }
        let checked = (0..parsed.container().len()).map(|_| AtomicBool::new(false)).collect();
        let mut slot = self.slot();
        // A container closed meanwhile stays closed.
        if let Some(open) = slot.as_ref() {
            let file = open.file.clone();
            *slot = Some(Arc::new(Open { parsed, checked, file }));
        }
        Ok(())
    }

    /// Whether `authenticate` has accepted the container.
    #[getter]
    fn authenticated(&self) -> PyResult<bool> {
        Ok(self.open()?.parsed.authenticated().is_some())
    }

    /// The signed attributes: `(algorithm code, key id, counter, subject or None, public key or None)`, or
    /// `None` for an unsigned container. They are the file's claims unless `authenticated`.
    #[getter]
    #[allow(clippy::type_complexity)]
    fn signer<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(u64, Bound<'py, PyBytes>, u64, Option<String>, Option<Bound<'py, PyBytes>>)>> {
        let open = self.open()?;
        let Some(signer) = open.parsed.container().signed_attributes() else { return Ok(None) };
        Ok(Some((
            signer.algorithm_code,
            PyBytes::new(py, signer.key_id),
            signer.counter,
            signer.subject.map(str::to_owned),
            signer.public_key.map(|k| PyBytes::new(py, k)),
        )))
    }

    /// The message the signature signs (spec §14: 80 bytes), or `None` for an unsigned container. Hashes the
    /// prefix and the digests; checks nothing.
    #[getter]
    fn signed_message<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let message = self.open()?.parsed.container().signed_message(&SoftwareCrypto);
        Ok(message.map(|m| PyBytes::new(py, &m)))
    }

    /// `(major, minor)` of the file.
    #[getter]
    fn version(&self) -> PyResult<(u16, u16)> {
        Ok(self.open()?.parsed.container().version())
    }

    #[getter]
    fn compat_flags(&self) -> PyResult<u64> {
        Ok(self.open()?.parsed.container().compat_flags())
    }

    /// 0 for a file, 1 for a container nested in it, …
    #[getter]
    fn depth(&self) -> PyResult<u8> {
        Ok(self.open()?.parsed.container().depth())
    }

    /// The container's length in bytes.
    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        Ok(self.open()?.parsed.container().as_bytes().len())
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.open()?.parsed.container().len())
    }

    /// Entry names in table order.
    fn names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.open()?.parsed.container().entries().map(|e| e.name()))
    }

    /// The table position of `name` (a binary search of the stored index), or `None`.
    fn find(&self, name: &str) -> PyResult<Option<usize>> {
        Ok(self.open()?.parsed.container().get(name).map(|e| e.position()))
    }

    /// `(position, name, dtype code, dtype name or None, shape, offset, length, alignment, target or None,
    /// packing or None)` of the entry at `position`: what the prefix says, so no payload page and not the
    /// trailer (the file's last page) is touched (a file truncated under its map faults only where it is read).
    #[allow(clippy::type_complexity)]
    fn entry<'py>(&self, py: Python<'py>, position: usize) -> PyResult<Bound<'py, PyTuple>> {
        let open = self.open()?;
        let container = open.parsed.container();
        let e = Self::entry_at(&container, position)?;
        let dtype = e.dtype();
        let packing = dtype.packing().or_else(|| container.geometry(dtype)).map(packing_tuple);
        let shape = PyTuple::new(py, e.shape().dims())?;
        (
            e.position(),
            e.name(),
            dtype.code(),
            dtype.name(),
            shape,
            e.offset(),
            e.byte_len(),
            e.alignment(),
            e.target(),
            packing,
        )
            .into_pyobject(py)
    }

    /// The payload checksum of entry `position` as the trailer stores it. The trailer is at the container's
    /// end: this reads the file's last page.
    fn checksum(&self, position: usize) -> PyResult<u32> {
        let open = self.open()?;
        Ok(Self::entry_at(&open.parsed.container(), position)?.checksum())
    }

    /// A read-only view of entry `position`'s payload as `shape` elements of numpy `typestr`.
    ///
    /// # Errors
    /// `ValueError` unless the shape's size in bytes is exactly the payload's length.
    /// In an authenticated container, the payload is checked first, the first time (see `authenticate`).
    fn payload(
        &self,
        py: Python<'_>,
        position: usize,
        typestr: &str,
        shape: Vec<u64>,
    ) -> PyResult<PayloadView> {
        let open = self.open()?;
        open.check_entry(py, position)?;
        let parsed = &open.parsed;
        let container = parsed.container();
        let e = Self::entry_at(&container, position)?;
        PayloadView::new(Arc::clone(parsed.owner()), e.payload(), typestr, shape).ok_or_else(|| {
            PyValueError::new_err("the view's type and shape do not cover the payload exactly")
        })
    }

    /// A writable view of entry `position`'s payload as `shape` elements of numpy `typestr`, over a private
    /// copy-on-write mapping of that payload alone (`MappedFile::private_payload`): pages are read as they are
    /// touched, a write copies its page into process memory and never reaches the file, and no other view
    /// shares it. `None` for a container in memory (the caller copies instead).
    ///
    /// # Errors
    /// `ValueError` unless the shape's size in bytes is exactly the payload's length; `OSError` if the mapping
    /// fails. In an authenticated container, the payload is checked first, the first time (see `authenticate`).
    fn private_payload(
        &self,
        py: Python<'_>,
        position: usize,
        typestr: &str,
        shape: Vec<u64>,
    ) -> PyResult<Option<PayloadView>> {
        let open = self.open()?;
        open.check_entry(py, position)?;
        let parsed = &open.parsed;
        let container = parsed.container();
        let e = Self::entry_at(&container, position)?;
        let Bytes::Mapped(file) = &**parsed.owner() else { return Ok(None) };
        let payload = file.private_payload(&e).map_err(|e| os_error(&e, None))?;
        match PayloadView::private(payload, typestr, shape) {
            Some(view) => Ok(Some(view)),
            None => Err(PyValueError::new_err("the view's type and shape do not cover the payload exactly")),
        }
    }

    /// Asks the kernel to read entry `position`'s pages ahead of use (`madvise(MADV_WILLNEED)`); nothing for
    /// a container in memory.
    fn prefetch(&self, position: usize) -> PyResult<()> {
        let open = self.open()?;
        let parsed = &open.parsed;
        let entry = Self::entry_at(&parsed.container(), position)?;
        match &**parsed.owner() {
            Bytes::Mapped(file) => file.prefetch(&entry).map_err(|e| os_error(&e, None)),
            Bytes::Heap(_) => Ok(()),
        }
    }

    /// The container entry `position` holds, sharing these bytes. In an authenticated container, the entry is
    /// checked first, like a payload (its own signature, if any, is not: `authenticate` the result for that).
    fn nested(&self, py: Python<'_>, position: usize) -> PyResult<NativeContainer> {
        let open = self.open()?;
        let parsed = &open.parsed;
        Self::entry_at(&parsed.container(), position)?;
        if parsed.container().entry(position).and_then(|e| e.nested()).is_some() {
            open.check_entry(py, position)?;
        }
        match parsed.nested(position) {
            Some(nested) => Ok(NativeContainer::new(nested)),
            None => Err(PyValueError::new_err("the entry is not a nested container (dtype CONTAINER)")),
        }
    }

    /// Metadata records in key order: `(key, type, value)`; `type` is the spec name, or the code of a type
    /// of a newer minor version.
    fn metadata<'py>(&self, py: Python<'py>, typed: bool) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for (key, value) in self.open()?.parsed.container().metadata() {
            let ty = meta::type_name(py, value.value_type())?;
            out.append((key, ty, meta::to_py(py, value, typed)?))?;
        }
        Ok(out)
    }

    /// Reads every payload into `destinations` (one writable, C-contiguous 1-D `uint8` numpy array per entry,
    /// in table order, each of exactly the payload's length, none overlapping another) with `pread`s of up to
    /// 8 MiB on several threads, the GIL released, and checks the payload-integrity group as `verify` does
    /// (R37, R64 when authenticated, R50, nested containers), each block CRC'd as it lands. Marks every entry
    /// checked.
    ///
    /// # Errors
    /// `ValueError` for a container not opened by `open_file_for_load`, or destinations that break the above;
    /// `OSError` when a read fails or the file ended early (it shrank after it was opened; never SIGBUS);
    /// `IntegrityError` / `SignatureError` for the first damaged entry, as `verify`.
    fn read_into(&self, py: Python<'_>, destinations: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let open = self.open()?;
        let file =
            open.file.clone().ok_or_else(|| PyValueError::new_err("the container has no file to read"))?;
        let container = open.parsed.container();
        let authenticated = open.parsed.authenticated();
        let lent = lent_destinations(&container, &destinations)?;
        // SAFETY: `lent_destinations` checked that each is a live numpy array's writable buffer of the payload's
        // length and that none overlaps another; `destinations` keeps the arrays alive across the call.
        #[allow(unsafe_code)]
        let read = py.detach(|| unsafe { load::read_all(&file, &container, authenticated.as_ref(), &lent) });
        match read {
            Ok(()) => {
                for checked in &open.checked {
                    checked.store(true, Ordering::Release);
                }
                Ok(())
            }
            Err(LoadError::Integrity(e, position)) => Err(entry_error(py, &container, e, position)),
            Err(LoadError::Io(e, position)) => {
                let place = match position.and_then(|p| Some((p, container.entry(p)?.name()))) {
                    Some((position, name)) => format!("entry {position} ({name:?})"),
                    None => "the trailer (the payload checksums)".to_owned(),
                };
                let message = format!("reading {place}: {e}");
                Err(os_error(&std::io::Error::new(e.kind(), message), None))
            }
        }
    }

    /// Checks padding and payload checksums (R37, R50), nested containers included, in table order, and
    /// raises for the first problem; in an authenticated signed container, each entry's signed digest too
    /// (R64, between R37 and R50), after which no entry is checked again on use. `progress(done, total)`
    /// (bytes), if given, is called every few megabytes and after each entry; an exception it raises stops the
    /// verification. Without it, the GIL is released.
    #[pyo3(signature = (progress=None))]
    fn verify(&self, py: Python<'_>, progress: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let open = self.open()?;
        let container = open.parsed.container();
        let authenticated = open.parsed.authenticated();
        let mark = |position: usize| {
            if let Some(checked) = open.checked.get(position) {
                checked.store(true, Ordering::Release);
            }
        };
        let first_failure = |v: EntryVerification<'_>| {
            let position = v.entry.position();
            match judge(authenticated.as_ref(), &v) {
                Ok(()) => {
                    mark(position);
                    None
                }
                Err(e) => Some((position, e)),
            }
        };
        let failed = match progress {
            None => py.detach(|| container.verification().find_map(first_failure)),
            Some(callback) => {
                let total = container.entries().map(|e| e.byte_len()).fold(0u64, u64::saturating_add);
                let done = Cell::new(0u64);
                let raised: RefCell<Option<PyErr>> = RefCell::new(None);
                let report = |n: u64| {
                    done.set(done.get().saturating_add(n));
                    let mut raised = raised.borrow_mut();
                    if raised.is_none() {
                        if let Err(e) = callback.call1((done.get(), total)) {
                            *raised = Some(e);
                        }
                    }
                };
                let mut failed = None;
                for v in container.verification().with_progress(report) {
                    if let Some(e) = raised.borrow_mut().take() {
                        return Err(e);
                    }
                    if let Some(failure) = first_failure(v) {
                        failed = Some(failure);
                        break;
                    }
                }
                if let Some(e) = raised.borrow_mut().take() {
                    return Err(e);
                }
                failed
            }
        };
        match failed {
            None => Ok(()),
            Some((position, e)) => Err(entry_error(py, &container, e, position)),
        }
    }
}

/// Each array of `arrays` as a [`Destination`] for the payload of the entry at its position: a writable,
/// C-contiguous 1-D `uint8` array of exactly the payload's length, as numpy's `__array_interface__` describes
/// it; none overlapping another.
fn lent_destinations(container: &Container<'_>, arrays: &[Bound<'_, PyAny>]) -> PyResult<Vec<Destination>> {
    if arrays.len() != container.len() {
        return Err(PyValueError::new_err("one destination per entry is needed"));
    }
    let mut out = Vec::with_capacity(arrays.len());
    for (array, entry) in arrays.iter().zip(container.entries()) {
        let interface = array.getattr("__array_interface__")?;
        let (address, readonly): (usize, bool) = interface.get_item("data")?.extract()?;
        let shape: Vec<u64> = interface.get_item("shape")?.extract()?;
        let typestr: String = interface.get_item("typestr")?.extract()?;
        let contiguous = interface.get_item("strides").map_or(true, |s| s.is_none());
        let len =
            usize::try_from(entry.byte_len()).map_err(|_| PyValueError::new_err("payload too large"))?;
        if readonly
            || !contiguous
            || typestr != "|u1"
            || shape != [entry.byte_len()]
            || (address == 0 && len > 0)
        {
            return Err(PyValueError::new_err(
                "each destination must be a writable 1-D uint8 array of its payload's length",
            ));
        }
        out.push(Destination { address, len });
    }
    let mut spans: Vec<(usize, usize)> =
        out.iter().filter(|d| d.len > 0).map(|d| (d.address, d.len)).collect();
    spans.sort_unstable();
    let overlapping = spans.windows(2).any(|w| match w {
        [(a, len), (b, _)] => a.checked_add(*len).is_none_or(|end| end > *b),
        _ => false,
    });
    if overlapping {
        return Err(PyValueError::new_err("destinations must not overlap"));
    }
    Ok(out)
}
