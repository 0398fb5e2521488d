//! `libtpack.a` for C firmware: the C API of `tpack-capi` (no `std`, no allocator), and a panic handler that
//! hands over to the firmware's `tpack_panic`.
#![no_std]

pub use tpack_capi::*;

extern "C" {
    /// Defined by the firmware, in C: what a panic does (reset, or halt and report). Must not return.
    fn tpack_panic() -> !;
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `tpack_panic` is the firmware's, which the linking contract requires to exist and not return.
    unsafe { tpack_panic() }
}
