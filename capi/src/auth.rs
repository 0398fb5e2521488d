//! Signed containers (spec §14) from C: the signed attributes and message of a parsed container, a policy
//! ([`tpack_policy`], [`tpack_trusted_key`]), authentication (R58–R63) into caller storage
//! ([`tpack_authenticated`]), and then each entry's digest (R64) lazily or the whole payload-integrity group.

use core::ffi::c_char;
use core::mem::{align_of, size_of, MaybeUninit};

use tpack::auth::{Algorithm, Authenticated, Policy, SignedAttributes, TrustedKey};
use tpack::format::DIGEST_LEN;
use tpack::Container;

use crate::boundary::{
    array_of, fill, guard, guard_with_error, handle, out, put, read_arg, slice_of, storage, text,
    tpack_bytes, tpack_str, Handle, Stored,
};
use crate::container::{container_ref, tpack_container};
use crate::crypto::{crypto_of, tpack_crypto, TPACK_KEY_ID_LEN, TPACK_SIGNED_MESSAGE_LEN};
use crate::error::{tpack_error, tpack_result, Failure};

/// A key the verifier trusts.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_trusted_key {
    /// The key's id: SHA-256 of its DER SubjectPublicKeyInfo (`tpack_key_id` computes it; `openssl pkey -pubin
    /// -outform DER | sha256sum` prints it).
    pub key_id: [u8; TPACK_KEY_ID_LEN],
    /// The one algorithm the key verifies (`TPACK_ALGORITHM_*`): a container that names the key with another is
    /// refused (R60).
    pub algorithm: u64,
    /// The raw public key (32 bytes for Ed25519, 65 for P-256: an uncompressed SEC1 point), or NULL for a
    /// device that keeps only the key id (in OTP, say): the container must then carry its public key
    /// (`tpack.sig.pubkey`), which is used once it hashes to `key_id` (R59 otherwise).
    pub public_key: *const u8,
    /// The public key's length in bytes (ignored when `public_key` is NULL).
    pub public_key_len: usize,
    /// The subject every container signed by this key must declare (UTF-8, not NUL-terminated), or NULL for
    /// none (R61).
    pub subject: *const c_char,
    /// The subject's length in bytes (ignored when `subject` is NULL).
    pub subject_len: usize,
}

/// What a verifier requires of a container.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_policy {
    /// The trusted keys, `key_count` of them (NULL allowed when `key_count` is 0).
    pub keys: *const tpack_trusted_key,
    /// The number of keys at `keys`.
    pub key_count: usize,
    /// Whether an unsigned container is refused (R58). The `SIGNED` flag proves nothing: whoever strips a
    /// signature clears it too, so a device that must run only signed models sets this.
    pub require_signature: bool,
    /// The lowest security counter accepted (R62); a container whose counter equals it is accepted.
    pub min_counter: u64,
    /// The subject every container must declare (UTF-8, not NUL-terminated), or NULL for none (R61).
    pub subject: *const c_char,
    /// The subject's length in bytes (ignored when `subject` is NULL).
    pub subject_len: usize,
}

/// What a signed container declares about its signature (its prefix's `tpack.sig.*` attributes), and the
/// signature entry's two parts. Pointers borrow the container's bytes (or the decoder's buffer, for a
/// stream's prefix). **Not yet trusted**: claims until `tpack_container_authenticate` has checked them.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_signed_attributes {
    /// The algorithm's code (`TPACK_ALGORITHM_*`; another code is one of a newer minor version).
    pub algorithm: u64,
    /// The security counter (`tpack.sig.counter`).
    pub counter: u64,
    /// The signing key's id (`tpack.sig.key`).
    pub key_id: [u8; TPACK_KEY_ID_LEN],
    /// The subject (`tpack.sig.subject`), or `data` NULL and `len` 0 when the signer named none.
    pub subject: tpack_str,
    /// The raw public key the container carries (`tpack.sig.pubkey`), or empty (`len` 0, `data` not NULL: see
    /// `tpack_bytes`) when it carries none (a key is never empty).
    pub public_key: tpack_bytes,
    /// The signed digest of every entry but the signature entry, 32 bytes each in table order (the first part
    /// of the signature entry's payload); empty (`len` 0, `data` not NULL) for a stream's prefix, whose signature
    /// entry has not arrived.
    pub digests: tpack_bytes,
    /// The signature over the signed message (the rest of the signature entry's payload); as `digests` for a
    /// stream's prefix.
    pub signature: tpack_bytes,
}

impl tpack_signed_attributes {
    /// The C view of `attributes`, with the signature entry's `payload` split into digests and signature
    /// (`None` for a stream's prefix).
    pub(crate) fn new(attributes: &SignedAttributes<'_>, parts: Option<(&[u8], &[u8])>) -> Self {
        let none = tpack_bytes::empty();
        let (digests, signature) =
            parts.map_or((none, none), |(d, s)| (tpack_bytes::new(d), tpack_bytes::new(s)));
        tpack_signed_attributes {
            algorithm: attributes.algorithm_code,
            counter: attributes.counter,
            key_id: *attributes.key_id,
            subject: attributes.subject.map_or(tpack_str { data: core::ptr::null(), len: 0 }, tpack_str::new),
            public_key: attributes.public_key.map_or(none, tpack_bytes::new),
            digests,
            signature,
        }
    }
}

/// Bytes of caller storage an authenticated container handle needs (on every target).
pub const TPACK_AUTHENTICATED_SIZE: usize = 256;
/// Alignment, in bytes, of an authenticated container handle's storage.
pub const TPACK_AUTHENTICATED_ALIGN: usize = 8;

/// Caller storage for a container whose signature has been checked against a policy (or which is unsigned
/// and the policy allows it), filled by `tpack_container_authenticate`. Opaque. Like a `tpack_container` it
/// borrows the container's bytes, owns nothing, may be copied and shared between threads for reading.
#[repr(C)]
pub struct tpack_authenticated {
    // `MaybeUninit`: as for `tpack_container`, unused bytes and padding are uninitialized.
    opaque: [core::mem::MaybeUninit<u64>; 32],
}

const _: () = {
    assert!(size_of::<tpack_authenticated>() == TPACK_AUTHENTICATED_SIZE);
    assert!(align_of::<tpack_authenticated>() == TPACK_AUTHENTICATED_ALIGN);
    assert!(size_of::<Stored<Authenticated<'static>>>() <= TPACK_AUTHENTICATED_SIZE);
    assert!(align_of::<Stored<Authenticated<'static>>>() <= TPACK_AUTHENTICATED_ALIGN);
};

impl Handle for Authenticated<'static> {
    const TAG: u64 = u64::from_le_bytes(*b"tpk:auth");
}

fn not_signed() -> Failure {
    Failure::Code(tpack_result::TPACK_RESULT_NOT_SIGNED)
}

fn bad_argument() -> Failure {
    Failure::Code(tpack_result::TPACK_RESULT_BAD_ARGUMENT)
}

/// The signature entry's payload of signed `container`, split into the digests and the signature: the last
/// entry, whose first 32 bytes per other entry are the digests (spec §14; R57 checked the length at parse).
fn signature_parts<'a>(container: &Container<'a>) -> Option<(&'a [u8], &'a [u8])> {
    let others = container.len().checked_sub(1)?;
    let payload = container.entry(others)?.payload();
    let digests = others.checked_mul(DIGEST_LEN)?;
    (payload.len() >= digests).then(|| payload.split_at(digests))
}

/// Writes what the container declares about its signature to `out_attributes`. Cheap: no hashing. The
/// values are the container's claims, to refuse early (a key the device does not trust, a counter below its
/// floor); they are authentic only once `tpack_container_authenticate` succeeds.
///
/// # Errors
/// `TPACK_RESULT_NOT_SIGNED` for an unsigned container (of minor version 2 or later without the `SIGNED`
/// flag, or of an earlier version), a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `out_attributes` to a writable
/// `tpack_signed_attributes`.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_signed_attributes(
    container: *const tpack_container,
    out_attributes: *mut tpack_signed_attributes,
) -> tpack_result {
    guard(|| {
        let dst = out(out_attributes)?;
        // SAFETY: the caller's contract.
        let c = unsafe { container_ref(container) }?;
        let attributes = c.signed_attributes().ok_or_else(not_signed)?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, tpack_signed_attributes::new(&attributes, signature_parts(c))) };
        Ok(())
    })
}

/// Writes the 80-byte message the container's signature signs to `out_message`:
/// `"tpack signed v1\0" || SHA-256(prefix) || SHA-256(digests)`, the prefix being every byte before the
/// payloads and the digests the signature entry's first part. It hashes those two only, never a payload.
///
/// With it, a device that checks signatures itself (a secure element, a boot ROM) can do without tpack's
/// verifiers: verify `signature` of `tpack_container_signed_attributes` over this message with the key it
/// trusts, then hash each payload and compare with its 32 bytes in `digests`. Note that the policy checks
/// (R59 to R62: key, algorithm, subject, counter) are then the device's too; `tpack_container_authenticate`
/// with a `tpack_crypto` whose `verify` calls the secure element keeps them in tpack and in the spec's order.
///
/// # Errors
/// `TPACK_RESULT_NOT_SIGNED` for an unsigned container, `TPACK_RESULT_BAD_ARGUMENT` for a `crypto` with only
/// some of its SHA-256 callbacks, a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `container` must point to a readable `tpack_container`, `crypto` be NULL or point to a readable
/// `tpack_crypto` whose callbacks may be called during the call, `out_message` point to 80 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_signed_message(
    container: *const tpack_container,
    crypto: *const tpack_crypto,
    out_message: *mut u8,
) -> tpack_result {
    guard(|| {
        let dst = out(out_message.cast::<[u8; TPACK_SIGNED_MESSAGE_LEN]>())?;
        // SAFETY: the caller's contract.
        let c = unsafe { container_ref(container) }?;
        // SAFETY: the caller's contract.
        let crypto = unsafe { crypto_of(crypto) }?;
        let message = c.signed_message(&crypto).ok_or_else(not_signed)?;
        // SAFETY: checked by `out`; 80 writable bytes by the caller's contract.
        unsafe { put(dst, message) };
        Ok(())
    })
}

/// Writes the key id of the raw public key `public_key` (`len` bytes: 32 for Ed25519, 65 for an uncompressed
/// P-256 point) of `algorithm` to `out_key_id` (32 bytes): SHA-256 of its DER SubjectPublicKeyInfo, what a
/// `tpack_trusted_key` holds.
///
/// # Errors
/// `TPACK_RESULT_BAD_ARGUMENT` for an unknown algorithm or a key of the wrong length, or a `crypto` with only
/// some of its SHA-256 callbacks; `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `public_key` must point to `len` readable bytes, `crypto` be NULL or point to a readable `tpack_crypto`,
/// `out_key_id` point to 32 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn tpack_key_id(
    algorithm: u64,
    public_key: *const u8,
    len: usize,
    crypto: *const tpack_crypto,
    out_key_id: *mut u8,
) -> tpack_result {
    guard(|| {
        let dst = out(out_key_id.cast::<[u8; TPACK_KEY_ID_LEN]>())?;
        // SAFETY: the caller's contract, for the duration of the call.
        let key = unsafe { slice_of(public_key, len) }?;
        // SAFETY: the caller's contract.
        let crypto = unsafe { crypto_of(crypto) }?;
        let algorithm = Algorithm::from_code(algorithm).ok_or_else(bad_argument)?;
        if key.len() != algorithm.public_key_len() {
            return Err(bad_argument());
        }
        let id = tpack::auth::key_id(&crypto, algorithm, key);
        // SAFETY: checked by `out`; 32 writable bytes by the caller's contract.
        unsafe { put(dst, id) };
        Ok(())
    })
}

/// An optional string argument: NULL is none; otherwise `len` bytes of UTF-8.
///
/// # Safety
/// A non-NULL `data` points to `len` readable bytes, unchanged for `'a`.
unsafe fn optional_text<'a>(data: *const c_char, len: usize) -> Result<Option<&'a str>, Failure> {
    if data.is_null() {
        return Ok(None);
    }
    // SAFETY: this function's contract.
    let bytes = unsafe { text(data, len) }?;
    core::str::from_utf8(bytes).map(Some).map_err(|_| bad_argument())
}

/// The trusted key `k`, checked: a known algorithm, a UTF-8 subject.
///
/// # Safety
/// `k`'s pointers are NULL or point to their lengths of readable bytes, unchanged for `'a`.
unsafe fn trusted_key<'a>(k: &tpack_trusted_key) -> Result<TrustedKey<'a>, Failure> {
    let algorithm = Algorithm::from_code(k.algorithm).ok_or_else(bad_argument)?;
    let public_key = if k.public_key.is_null() {
        None
    } else {
        // A key of another length is the caller's to pass: it verifies nothing (R63), unless the container
        // names another algorithm first (R60), as the conformance kit's key sets expect.
        // SAFETY: this function's contract.
        Some(unsafe { slice_of(k.public_key, k.public_key_len) }?)
    };
    // SAFETY: this function's contract.
    let subject = unsafe { optional_text(k.subject, k.subject_len) }?;
    Ok(TrustedKey { key_id: k.key_id, algorithm, public_key, subject })
}

/// A policy argument, checked, with the one trusted key that matters for `container`: the first whose id
/// the container names (the core takes the first match too), or none. Every key is checked, so that a
/// malformed key set is refused whatever the container.
struct PolicyArg<'a> {
    key: Option<TrustedKey<'a>>,
    require_signature: bool,
    min_counter: u64,
    subject: Option<&'a str>,
}

impl<'a> PolicyArg<'a> {
    /// The core's policy, over `keys`, a slot that holds `self.key`.
    fn policy<'k>(&self, keys: &'k [TrustedKey<'a>]) -> Policy<'k>
    where
        'a: 'k,
    {
        Policy {
            keys,
            require_signature: self.require_signature,
            min_counter: self.min_counter,
            subject: self.subject,
        }
    }
}

/// The policy at `p` for a container whose signing key id is `named` (`None`: unsigned).
///
/// # Safety
/// `p` points to a readable `tpack_policy` whose keys and strings are readable, unchanged during the call.
unsafe fn policy_arg<'a>(
    p: *const tpack_policy,
    named: Option<&[u8; TPACK_KEY_ID_LEN]>,
) -> Result<PolicyArg<'a>, Failure> {
    // SAFETY: the caller's contract; every field is a pointer, an integer or a C `bool` the caller set.
    let p = unsafe { read_arg(p) }?;
    // SAFETY: the caller's contract: `key_count` initialized keys at `keys`, during the call.
    let keys = unsafe { keys_of(&p) }?;
    let mut key = None;
    for k in keys {
        // SAFETY: the caller's contract, passed on.
        let trusted = unsafe { trusted_key(k) }?;
        if key.is_none() && named == Some(&trusted.key_id) {
            key = Some(trusted);
        }
    }
    // SAFETY: the caller's contract.
    let subject = unsafe { optional_text(p.subject, p.subject_len) }?;
    Ok(PolicyArg { key, require_signature: p.require_signature, min_counter: p.min_counter, subject })
}

/// The policy at `p` for a decoder, which meets the container later: every key, checked, into `keys`; the
/// number of keys, and the rest of the policy (its `keys` empty: the caller points them at where `keys` ends
/// up).
///
/// # Errors
/// `TPACK_RESULT_SHORT_STORAGE` for more keys than `keys` holds; as [`trusted_key`].
///
/// # Safety
/// `p` points to a readable `tpack_policy` whose keys and strings are readable and unchanged for `'a`.
pub(crate) unsafe fn policy_parts<'a>(
    p: *const tpack_policy,
    keys: &mut [MaybeUninit<TrustedKey<'a>>],
) -> Result<(usize, Policy<'a>), Failure> {
    // SAFETY: the caller's contract; every field is a pointer, an integer or a C `bool` the caller set.
    let p = unsafe { read_arg(p) }?;
    // SAFETY: the caller's contract.
    let given = unsafe { keys_of(&p) }?;
    if given.len() > keys.len() {
        return Err(Failure::Code(tpack_result::TPACK_RESULT_SHORT_STORAGE));
    }
    for (slot, k) in keys.iter_mut().zip(given) {
        // SAFETY: the caller's contract, passed on.
        slot.write(unsafe { trusted_key(k) }?);
    }
    // SAFETY: the caller's contract.
    let subject = unsafe { optional_text(p.subject, p.subject_len) }?;
    let policy =
        Policy { keys: &[], require_signature: p.require_signature, min_counter: p.min_counter, subject };
    Ok((given.len(), policy))
}

/// The keys of policy `p`.
///
/// # Safety
/// `p.keys` points to `p.key_count` initialized keys, readable and unchanged for `'a` (or `key_count` is 0).
unsafe fn keys_of<'a>(p: &tpack_policy) -> Result<&'a [tpack_trusted_key], Failure> {
    if p.key_count == 0 {
        return Ok(&[]);
    }
    // SAFETY: this function's contract.
    unsafe { array_of(p.keys, p.key_count) }
}

/// Checks the container's signature against `policy`, in the spec's order, and on success fills
/// `out_authenticated`: R58 (a signature is required and there is none), R59 (the key is not trusted, or the
/// public key the container carries is not the one it names, or the key is trusted by id only and the
/// container carries no public key), R60 (the algorithm is not the key's, or is not verified by `crypto`),
/// R61 (the subject), R62 (the counter is below `min_counter`), R63 (the signature over the prefix and the
/// entries' digests). It hashes the prefix and the digests, never a payload: then check each entry with
/// `tpack_authenticated_verify_entry` when it is first used, or all with `tpack_authenticated_verify`.
///
/// An unsigned container that the policy allows is authenticated too, without a signer
/// (`tpack_authenticated_signer` says `TPACK_RESULT_NOT_SIGNED`); its entries are then checked against their
/// CRCs. A nested container's signature is not checked: authenticate it on its own
/// (`tpack_container_nested`), with its own policy.
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` with rule 58…63 in `out_error` (`value`: the algorithm code for R60, the
/// container's counter for R62; a trusted public key of the wrong length for its algorithm verifies nothing:
/// R63); `TPACK_RESULT_BAD_ARGUMENT` for a key of an unknown algorithm code, a subject that is not UTF-8, or a `crypto` with only some of its SHA-256
/// callbacks; a handle error, `TPACK_RESULT_NULL_ARGUMENT`, `TPACK_RESULT_MISALIGNED_STORAGE`.
/// `out_authenticated` is untouched on failure.
///
/// # Safety
/// `container` must point to a readable `tpack_container`; `policy` to a readable `tpack_policy` whose keys
/// and strings are readable during the call (the handle keeps none of them); `crypto` be NULL or point to a
/// readable `tpack_crypto` whose callbacks may be called during the call; `out_authenticated` point to a
/// writable `tpack_authenticated`; `out_error` be NULL or point to a writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_authenticate(
    container: *const tpack_container,
    policy: *const tpack_policy,
    crypto: *const tpack_crypto,
    out_authenticated: *mut tpack_authenticated,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let slot = storage::<_, Authenticated<'static>>(out_authenticated)?;
        // SAFETY: the caller's contract.
        let authenticated = unsafe { authenticate(container, policy, crypto) }?;
        // SAFETY: checked by `storage`; writable by the caller's contract.
        unsafe { fill(slot, authenticated) };
        Ok(())
    })
}

/// [`tpack_container_authenticate`]'s work, without the output.
///
/// # Safety
/// As for `tpack_container_authenticate`.
unsafe fn authenticate(
    container: *const tpack_container,
    policy: *const tpack_policy,
    crypto: *const tpack_crypto,
) -> Result<Authenticated<'static>, Failure> {
    // SAFETY: the caller's contract.
    let c = unsafe { container_ref(container) }?;
    // SAFETY: the caller's contract.
    let crypto = unsafe { crypto_of(crypto) }?;
    let attributes = c.signed_attributes();
    // SAFETY: the caller's contract.
    let arg = unsafe { policy_arg(policy, attributes.as_ref().map(|a| a.key_id)) }?;
    let keys: &[TrustedKey<'_>] = arg.key.as_slice();
    Ok(c.authenticate(&arg.policy(keys), &crypto)?)
}

/// The authenticated container in `a`, checked.
///
/// # Safety
/// As for [`handle`].
unsafe fn authenticated_ref<'a>(
    a: *const tpack_authenticated,
) -> Result<&'a Authenticated<'static>, Failure> {
    // SAFETY: the caller's contract.
    unsafe { handle(a) }
}

/// Writes who signed the authenticated container (now authentic, pointers into the container's bytes) to
/// `out_attributes`. A device raises its counter floor to `counter` only once the new model is committed and
/// found working.
///
/// # Errors
/// `TPACK_RESULT_NOT_SIGNED` for an unsigned container that the policy allowed, a handle error,
/// `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `authenticated` must point to a readable `tpack_authenticated`, `out_attributes` to a writable
/// `tpack_signed_attributes`.
#[no_mangle]
pub unsafe extern "C" fn tpack_authenticated_signer(
    authenticated: *const tpack_authenticated,
    out_attributes: *mut tpack_signed_attributes,
) -> tpack_result {
    guard(|| {
        let dst = out(out_attributes)?;
        // SAFETY: the caller's contract.
        let a = unsafe { authenticated_ref(authenticated) }?;
        let signer = a.signer().ok_or_else(not_signed)?;
        let parts = signature_parts(&a.container());
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, tpack_signed_attributes::new(&signer, parts)) };
        Ok(())
    })
}

/// Checks entry `index` of the authenticated container and writes its payload to `out_payload`: in a signed
/// container, that the payload hashes to its signed digest (R64); in an unsigned one, that it matches its
/// CRC (R50); the signature entry against its CRC. The lazy check of a mapped model: call it when an entry is
/// first used, and use the payload only once it succeeds. Entries are independent: any order, any thread.
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` with R64 (or R50) and the entry in `out_error`; `TPACK_RESULT_NOT_FOUND`
/// past the last entry; `TPACK_RESULT_BAD_ARGUMENT` for a `crypto` with only some of its SHA-256 callbacks; a
/// handle error, `TPACK_RESULT_NULL_ARGUMENT`. `out_payload` is untouched on failure.
///
/// # Safety
/// `authenticated` must point to a readable `tpack_authenticated`, `crypto` be NULL or point to a readable
/// `tpack_crypto`, `out_payload` point to a writable `tpack_bytes`, `out_error` be NULL or point to a
/// writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_authenticated_verify_entry(
    authenticated: *const tpack_authenticated,
    crypto: *const tpack_crypto,
    index: usize,
    out_payload: *mut tpack_bytes,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let dst = out(out_payload)?;
        // SAFETY: the caller's contract.
        let a = unsafe { authenticated_ref(authenticated) }?;
        // SAFETY: the caller's contract.
        let crypto = unsafe { crypto_of(crypto) }?;
        if index >= a.container().len() {
            return Err(Failure::Code(tpack_result::TPACK_RESULT_NOT_FOUND));
        }
        let payload = a.verify_entry(index, &crypto)?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, tpack_bytes::new(payload)) };
        Ok(())
    })
}

/// The whole payload-integrity group of the authenticated container, entry by entry in table order: the
/// padding before the entry is zero (R37), its payload matches its signed digest (R64, signed containers), and
/// its CRC (R50); a nested container's payloads are verified (not its signature).
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` with the first of R37, R64 and R50 (or a nested container's R37 or R50)
/// in `out_error`; `TPACK_RESULT_BAD_ARGUMENT` for a `crypto` with only some of its SHA-256 callbacks; a
/// handle error.
///
/// # Safety
/// `authenticated` must point to a readable `tpack_authenticated`, `crypto` be NULL or point to a readable
/// `tpack_crypto`, `out_error` be NULL or point to a writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_authenticated_verify(
    authenticated: *const tpack_authenticated,
    crypto: *const tpack_crypto,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract.
        let a = unsafe { authenticated_ref(authenticated) }?;
        // SAFETY: the caller's contract.
        let crypto = unsafe { crypto_of(crypto) }?;
        a.verify(&crypto)?;
        Ok(())
    })
}

/// The whole authenticated verification in one call, in the spec's order: R58 to R63 against `policy`
/// (`tpack_container_authenticate`), then the payload-integrity group with R64
/// (`tpack_authenticated_verify`). The structural rules (R1 to R57) were checked by
/// `tpack_container_parse`. `TPACK_RESULT_OK` exactly when the container is authentic under `policy` (or
/// unsigned, the policy allowing it) and intact.
///
/// # Errors
/// As `tpack_container_authenticate` and `tpack_authenticated_verify`.
///
/// # Safety
/// As `tpack_container_authenticate`, without the handle.
#[no_mangle]
pub unsafe extern "C" fn tpack_container_verify_authentic(
    container: *const tpack_container,
    policy: *const tpack_policy,
    crypto: *const tpack_crypto,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract.
        let authenticated = unsafe { authenticate(container, policy, crypto) }?;
        // SAFETY: the caller's contract.
        let crypto = unsafe { crypto_of(crypto) }?;
        authenticated.verify(&crypto)?;
        Ok(())
    })
}
