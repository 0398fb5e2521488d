//! A host file read over semihosting (SYS_OPEN, SYS_READ, SYS_CLOSE), a chunk at a time: the firmware's
//! stand-in for the transport (UART, radio, USB) that brings an update in pieces. The semihosting crate has
//! calls for writing only; reading goes through its `syscall!`.
//!
//! Rejected: a QEMU UART fed from a file, which needs a driver for the CMSDK UART and whose end of input the
//! firmware cannot tell from a pause.

use core::ffi::CStr;

use cortex_m_semihosting::{nr, syscall};

/// An open host file.
pub struct HostFile {
    handle: usize,
}

impl HostFile {
    /// Opens the host file at `path` for reading, in binary mode. `None` if the host cannot.
    pub fn open(path: &CStr) -> Option<Self> {
        // SAFETY: SYS_OPEN reads `path.count_bytes()` bytes at `path`, which `CStr` guarantees, NUL after.
        let handle = unsafe { syscall!(OPEN, path.as_ptr(), nr::open::R_BINARY, path.count_bytes()) };
        (handle != usize::MAX).then_some(HostFile { handle })
    }

    /// Reads the next bytes of the file into `buf`, as many as fit, and says how many: 0 at the end of the
    /// file. `None` if the host failed.
    pub fn read(&mut self, buf: &mut [u8]) -> Option<usize> {
        // SAFETY: SYS_READ writes at most `buf.len()` bytes at `buf`, which is ours to write; it returns how
        // many of them it did not fill.
        let unfilled = unsafe { syscall!(READ, self.handle, buf.as_mut_ptr(), buf.len()) };
        buf.len().checked_sub(unfilled)
    }
}

impl Drop for HostFile {
    fn drop(&mut self) {
        // SAFETY: SYS_CLOSE of the handle SYS_OPEN gave, once; nothing uses it after.
        unsafe { syscall!(CLOSE, self.handle) };
    }
}
