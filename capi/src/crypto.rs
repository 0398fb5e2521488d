//! The cryptography behind the signature calls: the built-in one (the core's `SoftwareCrypto`: SHA-256 from
//! `sha2`, Ed25519 from `salty` with feature `ed25519`, ECDSA P-256 from `p256` with feature `p256`), or the
//! caller's own through [`tpack_crypto`]: a hash engine for SHA-256, a secure element for the signature, or both.

use core::ffi::c_void;

use tpack::auth::{Algorithm, Crypto, Sha256, Sha256Software, SoftwareCrypto};

use crate::boundary::read_arg;
use crate::error::{tpack_result, Failure};

/// Starts a SHA-256 (the previous one, if any, has finished).
pub type tpack_sha256_begin_fn = Option<unsafe extern "C" fn(user: *mut c_void)>;
/// Hashes `len` bytes at `data` after what was hashed since `sha256_begin`. `data` is not NULL (for `len` 0
/// too); the bytes are valid during the call only.
pub type tpack_sha256_update_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, data: *const u8, len: usize)>;
/// Writes the digest of everything hashed since `sha256_begin` to the 32 bytes at `out`.
pub type tpack_sha256_finish_fn = Option<unsafe extern "C" fn(user: *mut c_void, out: *mut u8)>;
/// Whether `signature` (`signature_len` bytes) is a valid signature of the 80-byte signed message `message`
/// under the raw public key `public_key` (`public_key_len` bytes: 32 for Ed25519, 65 for P-256), for algorithm
/// code `algorithm` (`TPACK_ALGORITHM_*`): 1 when it is, anything else when it is not. The verifier MUST make
/// the checks spec §14 pins: Ed25519 (pure, RFC 8032) refuses `S >= L` and a non-canonical `R`; ECDSA P-256
/// hashes the message with SHA-256 and refuses `r` or `s` outside `[1, n - 1]` (the signature is `r || s`,
/// 32 bytes each, big-endian).
pub type tpack_verify_fn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        algorithm: u64,
        public_key: *const u8,
        public_key_len: usize,
        message: *const u8,
        signature: *const u8,
        signature_len: usize,
    ) -> i32,
>;

/// The caller's cryptography, for a device whose SHA-256 is a hash engine or whose signatures are checked by a
/// secure element. Every signature call takes a `const tpack_crypto *`; NULL means the built-in one.
///
/// - SHA-256: set `sha256_begin`, `sha256_update` and `sha256_finish` all three (tpack then hashes the prefix,
///   the digests, key ids and every payload with them), or leave all three NULL for the built-in SHA-256.
///   tpack runs one hash at a time, `begin`, `update`s, `finish`, before the next `begin`, so one engine
///   context in `user` is enough. A hash cannot fail: an engine that fails should give a digest that matches
///   nothing (all zeros), which tpack then reports as the check it fails (R63 or R64).
/// - Signatures: set `verify`, and in `verify_algorithms` bit `1 << code` for each algorithm it checks
///   (`1 << TPACK_ALGORITHM_ED25519`, ...); a container signed with another algorithm is refused with R60.
///   Leave `verify` NULL for the built-in verifiers (those this build has: `tpack_builtin_algorithms`).
///
/// Callbacks are called on the calling thread, during the call only; they must not unwind or `longjmp` out,
/// nor call back into tpack with the same handles.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_crypto {
    /// Passed to every callback.
    pub user: *mut c_void,
    /// See the struct's documentation.
    pub sha256_begin: tpack_sha256_begin_fn,
    /// See the struct's documentation.
    pub sha256_update: tpack_sha256_update_fn,
    /// See the struct's documentation.
    pub sha256_finish: tpack_sha256_finish_fn,
    /// See the struct's documentation.
    pub verify: tpack_verify_fn,
    /// With `verify`: bit `1 << code` set for each algorithm `verify` checks. Ignored when `verify` is NULL.
    pub verify_algorithms: u32,
}

/// Algorithm code 1: Ed25519 (pure, RFC 8032).
pub const TPACK_ALGORITHM_ED25519: u64 = 1;
/// Algorithm code 2: ECDSA over NIST P-256 with SHA-256.
pub const TPACK_ALGORITHM_P256: u64 = 2;
/// Length of a signed message (`tpack_container_signed_message`), in bytes.
pub const TPACK_SIGNED_MESSAGE_LEN: usize = 80;
/// Length of a key id and of a SHA-256 digest, in bytes.
pub const TPACK_KEY_ID_LEN: usize = 32;

const _: () = {
    assert!(TPACK_ALGORITHM_ED25519 == Algorithm::Ed25519.code());
    assert!(TPACK_ALGORITHM_P256 == Algorithm::EcdsaP256.code());
    assert!(TPACK_SIGNED_MESSAGE_LEN == tpack::format::SIGNED_MESSAGE_LEN);
    assert!(TPACK_KEY_ID_LEN == tpack::format::DIGEST_LEN);
};

/// The SHA-256 callbacks, all three set.
#[derive(Clone, Copy)]
pub(crate) struct Engine {
    user: *mut c_void,
    begin: unsafe extern "C" fn(*mut c_void),
    update: unsafe extern "C" fn(*mut c_void, *const u8, usize),
    finish: unsafe extern "C" fn(*mut c_void, *mut u8),
}

/// The signature callback and the algorithms it checks.
#[derive(Clone, Copy)]
struct Verifier {
    user: *mut c_void,
    verify: unsafe extern "C" fn(*mut c_void, u64, *const u8, usize, *const u8, *const u8, usize) -> i32,
    algorithms: u32,
}

/// The cryptography of one call: the caller's callbacks where given, the built-in ones elsewhere.
///
/// Built only by [`crypto_of`], from a `tpack_crypto` whose callbacks the caller promised callable with its
/// `user` during the call: the `unsafe` blocks below rely on that.
#[derive(Clone, Copy)]
pub(crate) struct CallCrypto {
    engine: Option<Engine>,
    verifier: Option<Verifier>,
}

/// The built-in cryptography.
pub(crate) const BUILT_IN: CallCrypto = CallCrypto { engine: None, verifier: None };

/// The cryptography `p` names: NULL for the built-in one.
///
/// # Errors
/// `TPACK_RESULT_BAD_ARGUMENT` when only some of the three SHA-256 callbacks are set;
/// `TPACK_RESULT_MISALIGNED_STORAGE` for a misaligned `p`.
///
/// # Safety
/// A non-NULL `p` points to a readable `tpack_crypto` whose callbacks may be called with its `user` until the
/// returned value is dropped (during the call that received it).
pub(crate) unsafe fn crypto_of(p: *const tpack_crypto) -> Result<CallCrypto, Failure> {
    if p.is_null() {
        return Ok(BUILT_IN);
    }
    // SAFETY: not NULL; readable by this function's contract. Every field is a pointer, an `Option` of a
    // function pointer (NULL is `None`) or an integer, so any bits the caller set are a valid value.
    let c = unsafe { read_arg(p) }?;
    let engine = match (c.sha256_begin, c.sha256_update, c.sha256_finish) {
        (Some(begin), Some(update), Some(finish)) => Some(Engine { user: c.user, begin, update, finish }),
        (None, None, None) => None,
        _ => return Err(Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT)),
    };
    let verifier = c.verify.map(|verify| Verifier { user: c.user, verify, algorithms: c.verify_algorithms });
    Ok(CallCrypto { engine, verifier })
}

/// A SHA-256 in progress: the built-in one, or the caller's engine (started by `begin`).
pub(crate) enum CallHasher {
    Software(Sha256Software),
    Engine(Engine),
}

impl Sha256 for CallHasher {
    fn update(&mut self, bytes: &[u8]) {
        match self {
            CallHasher::Software(h) => h.update(bytes),
            // SAFETY: `CallCrypto`'s invariant: callable with `user` during the call; `bytes` is readable for
            // the callback's duration.
            CallHasher::Engine(e) => unsafe { (e.update)(e.user, bytes.as_ptr(), bytes.len()) },
        }
    }

    fn finish(self) -> [u8; 32] {
        match self {
            CallHasher::Software(h) => h.finish(),
            CallHasher::Engine(e) => {
                let mut digest = [0u8; 32];
                // SAFETY: as for `update`; `digest` is 32 writable bytes.
                unsafe { (e.finish)(e.user, digest.as_mut_ptr()) };
                digest
            }
        }
    }
}

/// Whether algorithm `code`'s bit is set in `mask`.
fn has_bit(mask: u32, code: u64) -> bool {
    u32::try_from(code).ok().and_then(|shift| 1u32.checked_shl(shift)).is_some_and(|bit| mask & bit != 0)
}

impl Crypto for CallCrypto {
    type Hasher = CallHasher;

    fn hasher(&self) -> CallHasher {
        match self.engine {
            None => CallHasher::Software(Sha256Software::default()),
            Some(e) => {
                // SAFETY: `CallCrypto`'s invariant.
                unsafe { (e.begin)(e.user) };
                CallHasher::Engine(e)
            }
        }
    }

    fn supports(&self, algorithm: Algorithm) -> bool {
        match self.verifier {
            None => SoftwareCrypto.supports(algorithm),
            Some(v) => has_bit(v.algorithms, algorithm.code()),
        }
    }

    fn verify(&self, algorithm: Algorithm, public_key: &[u8], message: &[u8; 80], signature: &[u8]) -> bool {
        match self.verifier {
            None => SoftwareCrypto.verify(algorithm, public_key, message, signature),
            Some(v) => {
                // SAFETY: `CallCrypto`'s invariant; every buffer is readable for the callback's duration.
                let answer = unsafe {
                    (v.verify)(
                        v.user,
                        algorithm.code(),
                        public_key.as_ptr(),
                        public_key.len(),
                        message.as_ptr(),
                        signature.as_ptr(),
                        signature.len(),
                    )
                };
                answer == 1
            }
        }
    }
}

/// The algorithms the built-in cryptography verifies: bit `1 << code` for each (`1 << TPACK_ALGORITHM_ED25519`
/// with feature `ed25519`, `1 << TPACK_ALGORITHM_P256` with `p256`). SHA-256 is always built in.
#[no_mangle]
pub extern "C" fn tpack_builtin_algorithms() -> u32 {
    [Algorithm::Ed25519, Algorithm::EcdsaP256]
        .into_iter()
        .filter(|a| SoftwareCrypto.supports(*a))
        .filter_map(|a| u32::try_from(a.code()).ok().and_then(|shift| 1u32.checked_shl(shift)))
        .fold(0, |mask, bit| mask | bit)
}
