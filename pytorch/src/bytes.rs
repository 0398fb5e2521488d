//! Little-endian numbers read from untrusted bytes with `get`, never by indexing: every read is `None`
//! when the input is too short.

/// The `N` bytes at `at`, if `bytes` has them.
fn array<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// The little-endian u16 at `at`.
pub(crate) fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    array(bytes, at).map(u16::from_le_bytes)
}

/// The little-endian u32 at `at`.
pub(crate) fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    array(bytes, at).map(u32::from_le_bytes)
}

/// The little-endian u64 at `at`.
pub(crate) fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    array(bytes, at).map(u64::from_le_bytes)
}

/// `n` as a `usize`, or `None` if it does not fit.
pub(crate) fn to_usize(n: u64) -> Option<usize> {
    usize::try_from(n).ok()
}
