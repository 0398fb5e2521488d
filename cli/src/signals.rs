//! Signals: nothing is left behind when the tool is interrupted, and an input that shrinks while it is mapped
//! is an error, not a crash.
//!
//! Every output being written (a temporary file, or a staging directory) is registered here from its creation
//! until it is renamed into place or deleted (`register`). Then:
//!
//! - SIGINT and SIGTERM are received by a thread of signal-hook's ([`install`]). It deletes every registered
//!   output, prints one line and exits with 128 + the signal's number: 130 and 143. Creating and committing an
//!   output, and the final report of `main` ([`finish`]), hold the registry's lock, as the thread does from its
//!   sweep to its exit: so an output is either complete in place or deleted, and no file is created after the
//!   sweep.
//! - SIGBUS, raised when a page of a memory-mapped input lies past its end (the file was truncated while being
//!   read), is caught by a `sigaction` handler: signal-hook refuses SIGBUS, since a handler that returns would
//!   fault again. It writes a message prepared when the input was mapped, deletes every registered output with
//!   async-signal-safe calls only and `_exit`s with [`SHRUNK_EXIT`]. A SIGBUS outside every mapped input goes
//!   to the handler that was there before (Rust's stack-overflow report, or the default action).
//!
//! Rejected: reading inputs instead of mapping them, which would avoid SIGBUS but copy every payload, and
//! keeping memory bounded would then need a streaming path in every format.

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::CliError;
#[cfg(unix)]
use crate::error::Kind;

/// Exit status after a mapped input shrank while it was being read: 4, as for any input that cannot be read.
pub const SHRUNK_EXIT: u8 = 4;

/// Outputs registered at once: one per command today (a file or a staging directory); more is a bug.
#[cfg(unix)]
const SLOTS: usize = 8;

/// Inputs watched at once: every shard of a sharded model is mapped (a large model has a few hundred).
#[cfg(unix)]
const INPUT_SLOTS: usize = 4096;

/// Serializes creating and committing outputs against the interrupt thread's sweep and exit.
static LOCK: Mutex<()> = Mutex::new(());

/// The lock that creating, committing and finishing hold. A poisoned lock is still a lock: the sweep must run.
pub(crate) fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A registered output: deregistered when dropped. Drop it only after its file or directory is gone or renamed.
#[derive(Debug)]
pub(crate) struct Registration {
    #[cfg(unix)]
    slot: Option<(usize, *mut unix::Node)>,
}

/// Registers `path`, a temporary file or (`dir`) a staging directory with no subdirectories, for deletion when
/// a signal ends the process. `_held` proves that the caller holds [`lock`] while it creates `path`.
pub(crate) fn register(_held: &MutexGuard<'static, ()>, path: &Path, dir: bool) -> Registration {
    #[cfg(unix)]
    {
        Registration { slot: unix::register(path, dir) }
    }
    #[cfg(not(unix))]
    {
        let _ = (path, dir);
        Registration {}
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some((slot, node)) = self.slot {
            unix::deregister(slot, node);
        }
    }
}

/// Notes that `map` holds the content of `path`, so that a SIGBUS in it is reported as the file shrinking.
pub(crate) fn watch_input(path: &Path, map: &[u8]) {
    #[cfg(unix)]
    unix::watch_input(path, map);
    #[cfg(not(unix))]
    let _ = (path, map);
}

/// The error a command ended with, or the one that explains it: that an input it mapped is now shorter than it
/// was. Reading a truncated map from user code raises SIGBUS, but a write(2) from it fails with EFAULT (`bad
/// address`), which would otherwise be the message.
#[must_use]
pub fn explain(error: CliError) -> CliError {
    #[cfg(unix)]
    if let Some(message) = unix::shrunk_input() {
        return CliError::new(Kind::Io, message);
    }
    error
}

/// Installs the handlers of SIGINT, SIGTERM and SIGBUS; call it once, first thing in `main`. Where it cannot
/// (not on Unix, or the calls fail), the signals keep their default actions.
pub fn install() {
    #[cfg(unix)]
    unix::install();
}

/// Runs `report` (which prints the command's result and gives its exit code) under the registry's lock and
/// exits with that code: an interrupt arriving meanwhile waits, so its message never follows a report, and its
/// status never replaces the command's.
pub fn finish(report: impl FnOnce() -> u8) -> ! {
    let _held = lock();
    let code = report();
    std::process::exit(i32::from(code))
}

#[cfg(unix)]
mod unix {
    use std::ffi::{c_int, c_void, CString};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};
    use std::ptr;
    use std::sync::atomic::{AtomicPtr, Ordering};
    use std::sync::OnceLock;

    use super::{lock, INPUT_SLOTS, SHRUNK_EXIT, SLOTS};

    /// A registered output, owned by its slot while it is in one.
    #[derive(Debug)]
    pub(super) struct Node {
        path: PathBuf,
        c_path: CString,
        dir: bool,
    }

    /// The registered outputs. A slot's node belongs to whoever swaps it out: [`deregister`] frees it, a sweep
    /// deletes its output and then ends the process.
    static OUTPUTS: [AtomicPtr<Node>; SLOTS] = [const { AtomicPtr::new(ptr::null_mut()) }; SLOTS];

    /// A mapped input: its address range and the message a SIGBUS in it prints.
    struct Input {
        path: PathBuf,
        start: usize,
        len: usize,
        /// The first line of [`shrunk_input`]'s message, `error: ` included.
        message: Box<[u8]>,
    }

    /// Inputs mapped so far (when all slots are used, a new one takes the first). Inputs are never freed — a
    /// few per run — so the handler can read them without synchronisation.
    static INPUTS: [AtomicPtr<Input>; INPUT_SLOTS] = [const { AtomicPtr::new(ptr::null_mut()) }; INPUT_SLOTS];

    /// The SIGBUS action before ours, restored for faults outside every mapped input.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    pub(super) fn register(path: &Path, dir: bool) -> Option<(usize, *mut Node)> {
        let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
        let node = Box::into_raw(Box::new(Node { path: path.to_path_buf(), c_path, dir }));
        for (i, slot) in OUTPUTS.iter().enumerate() {
            if slot.compare_exchange(ptr::null_mut(), node, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return Some((i, node));
            }
        }
        // SAFETY: `node` came from Box::into_raw above and was published nowhere.
        #[allow(unsafe_code)]
        drop(unsafe { Box::from_raw(node) });
        debug_assert!(false, "more than {SLOTS} outputs in flight");
        None
    }

    pub(super) fn deregister(slot: usize, node: *mut Node) {
        let Some(cell) = OUTPUTS.get(slot) else { return };
        if cell.compare_exchange(node, ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire).is_ok() {
            // SAFETY: the slot held `node`, from Box::into_raw in `register`; swapping it out made it ours
            // alone. If a sweep swapped it out first, it is the sweep's and is never freed.
            #[allow(unsafe_code)]
            drop(unsafe { Box::from_raw(node) });
        }
    }

    pub(super) fn watch_input(path: &Path, map: &[u8]) {
        if map.is_empty() {
            return;
        }
        let message = format!(
            "error: {} was cut short while it was being read (another program truncated or rewrote it)",
            path.display()
        );
        let input = Box::into_raw(Box::new(Input {
            path: path.to_path_buf(),
            start: map.as_ptr() as usize,
            len: map.len(),
            message: message.into_bytes().into_boxed_slice(),
        }));
        if let Some(free) = INPUTS.iter().find(|s| s.load(Ordering::Acquire).is_null()) {
            free.store(input, Ordering::Release);
        } else if let Some(first) = INPUTS.first() {
            // Leaked, not freed: a handler may be reading the input it replaces.
            first.store(input, Ordering::Release);
        }
    }

    /// The input in `slot`, if there is one.
    fn input_in(slot: &AtomicPtr<Input>) -> Option<&'static Input> {
        // SAFETY: a non-null slot holds an Input from Box::into_raw that is never freed.
        #[allow(unsafe_code)]
        unsafe {
            slot.load(Ordering::Acquire).as_ref()
        }
    }

    /// The message for the first mapped input that is now shorter than its map, without `error: `.
    pub(super) fn shrunk_input() -> Option<String> {
        INPUTS.iter().filter_map(input_in).find_map(|input| {
            let now = std::fs::metadata(&input.path).map_or(0, |m| m.len());
            let shrunk = usize::try_from(now).is_ok_and(|now| now < input.len);
            let text = String::from_utf8_lossy(&input.message);
            shrunk.then(|| text.strip_prefix("error: ").unwrap_or(&text).to_owned())
        })
    }

    pub(super) fn install() {
        if let Ok(mut signals) = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM]) {
            std::thread::spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    interrupted(signal);
                }
            });
        }
        install_sigbus();
    }

    /// The interrupt thread's work after SIGINT or SIGTERM: under the lock until the process ends.
    fn interrupted(signal: c_int) -> ! {
        let _held = lock();
        let mut deleted = false;
        for slot in &OUTPUTS {
            let node = slot.swap(ptr::null_mut(), Ordering::AcqRel);
            if node.is_null() {
                continue;
            }
            // SAFETY: swapped out of its slot, so ours alone; leaked, since the process ends below.
            #[allow(unsafe_code)]
            let node = unsafe { &*node };
            deleted |=
                if node.dir { remove_dir(&node.path) } else { std::fs::remove_file(&node.path).is_ok() };
        }
        let name = if signal == libc::SIGINT { "SIGINT" } else { "SIGTERM" };
        let what = if deleted { "; the unfinished output was deleted" } else { "" };
        eprintln!("error: interrupted by {name}{what}");
        std::process::exit(128 + signal)
    }

    /// Removes a staging directory, again if a library's file appeared in it meanwhile (our own files are
    /// created under the lock, which the sweep holds); whether it is gone.
    fn remove_dir(path: &Path) -> bool {
        const TRIES: usize = 100;
        (0..TRIES).any(|_| match std::fs::remove_dir_all(path) {
            Ok(()) => true,
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        })
    }

    fn install_sigbus() {
        // SAFETY: sigaction with a zeroed (empty-mask) struct and a handler of the SA_SIGINFO signature that
        // only calls async-signal-safe functions; `old` is written by the call before it is read.
        #[allow(unsafe_code)]
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut old) == 0 {
                let _ = PREVIOUS.set(old);
            }
        }
    }

    /// The SIGBUS handler. Everything it calls is async-signal-safe: atomic loads and swaps, write(2),
    /// unlink(2), rmdir(2), open(2), getdents64(2), unlinkat(2), close(2), sigaction(2) and _exit(2).
    extern "C" fn on_sigbus(_signal: c_int, info: *mut libc::siginfo_t, _context: *mut c_void) {
        let address = fault_address(info);
        let hit = INPUTS
            .iter()
            .filter_map(input_in)
            .find(|i| address.is_none_or(|a| a.wrapping_sub(i.start) < i.len));
        let Some(input) = hit else {
            // Not a mapped input: the fault repeats on return, under the action that was there before.
            if let Some(previous) = PREVIOUS.get() {
                // SAFETY: restores an action the kernel gave us.
                #[allow(unsafe_code)]
                unsafe {
                    libc::sigaction(libc::SIGBUS, previous, ptr::null_mut());
                }
            }
            return;
        };
        write_stderr(&input.message);
        let deleted = sweep_in_handler();
        write_stderr(if deleted { b"; the unfinished output was deleted\n" } else { b"\n" });
        // SAFETY: _exit is async-signal-safe and ends the process without running anything else.
        #[allow(unsafe_code)]
        unsafe {
            libc::_exit(c_int::from(SHRUNK_EXIT))
        }
    }

    /// The address that faulted, where the platform says.
    fn fault_address(info: *mut libc::siginfo_t) -> Option<usize> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: the kernel's siginfo for a SA_SIGINFO handler of SIGBUS, which carries si_addr.
            #[allow(unsafe_code)]
            unsafe {
                info.as_ref().map(|i| i.si_addr() as usize)
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = info;
            None
        }
    }

    fn write_stderr(bytes: &[u8]) {
        // SAFETY: write(2) of a live buffer; a short or failed write only loses part of the message.
        #[allow(unsafe_code)]
        unsafe {
            libc::write(libc::STDERR_FILENO, bytes.as_ptr().cast(), bytes.len());
        }
    }

    /// Deletes every registered output with async-signal-safe calls; whether one was there.
    fn sweep_in_handler() -> bool {
        let mut deleted = false;
        for slot in &OUTPUTS {
            let node = slot.swap(ptr::null_mut(), Ordering::AcqRel);
            // SAFETY: swapped out of its slot, so ours alone; never freed, since the process ends.
            #[allow(unsafe_code)]
            let Some(node) = (unsafe { node.as_ref() }) else {
                continue;
            };
            // SAFETY: unlink and rmdir of a NUL-terminated path that lives as long as the process.
            #[allow(unsafe_code)]
            unsafe {
                if node.dir {
                    empty_directory(&node.c_path);
                    deleted |= libc::rmdir(node.c_path.as_ptr()) == 0;
                } else {
                    deleted |= libc::unlink(node.c_path.as_ptr()) == 0;
                }
            }
        }
        deleted
    }

    /// Deletes the files in the directory `path` (staging directories have no subdirectories), with no
    /// allocation: readdir(3) may allocate, so the entries are read with the getdents64 system call.
    #[cfg(target_os = "linux")]
    fn empty_directory(path: &std::ffi::CStr) {
        /// `struct linux_dirent64`: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), then d_name.
        const RECLEN_AT: usize = 16;
        const NAME_AT: usize = 19;
        #[repr(C, align(8))]
        struct Buffer([u8; 4096]);
        let mut buffer = Buffer([0; 4096]);
        // SAFETY: open, getdents64 into a stack buffer of the length passed, unlinkat of names the kernel
        // wrote NUL-terminated inside that buffer, close. Offsets are checked against the length read.
        #[allow(unsafe_code)]
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
            if fd < 0 {
                return;
            }
            loop {
                let read = libc::syscall(libc::SYS_getdents64, fd, buffer.0.as_mut_ptr(), buffer.0.len());
                let Ok(read @ 1..) = usize::try_from(read) else { break };
                let records = buffer.0.get(..read).unwrap_or_default();
                let mut at = 0usize;
                while let Some(record) = records.get(at..) {
                    let Some(&[lo, hi]) = record.get(RECLEN_AT..RECLEN_AT + 2) else { break };
                    let length = usize::from(u16::from_ne_bytes([lo, hi]));
                    let Some(name) = record.get(NAME_AT..length) else { break };
                    if !matches!(name, [b'.', 0, ..] | [b'.', b'.', 0, ..]) {
                        libc::unlinkat(fd, name.as_ptr().cast(), 0);
                    }
                    at += length;
                }
            }
            libc::close(fd);
        }
    }

    /// Elsewhere only the directory itself is removed, which fails if it still holds files.
    #[cfg(not(target_os = "linux"))]
    fn empty_directory(_path: &std::ffi::CStr) {}
}
