//! The push decoder with a policy: a [`tpack::stream::SignedDecoder`] in caller storage
//! ([`tpack_signed_decoder`]). It refuses a stream from its prefix alone (R58–R62) before it releases any
//! payload byte, and gives the authenticated verdict (R63, R64, with the structural and integrity rules in the
//! spec's order) at `tpack_signed_decoder_finish`.

use core::ffi::c_char;
use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::{addr_of, addr_of_mut};

use tpack::auth::{Policy, TrustedKey};
use tpack::stream::{Authentic, Prefix, SignedDecoder};

use crate::auth::{policy_parts, tpack_policy, tpack_signed_attributes};
use crate::boundary::{
    buffer as buffer_arg, filled_place, guard, guard_with_error, input_of, out, put, storage, tag,
    value_place, zeroed, Handle, Stored,
};
use crate::container::tpack_entry;
use crate::crypto::{crypto_of, tpack_crypto, CallCrypto, TPACK_KEY_ID_LEN};
use crate::decoder::{check_min_buffer, consumed_since, move_buffer, tpack_event};
use crate::error::{tpack_error, tpack_result, Failure};
use crate::metadata::tpack_meta_value;
use crate::view;
use tpack::stream::DecodeError;

/// Most trusted keys a signed decoder's policy holds (`tpack_policy.key_count`).
pub const TPACK_SIGNED_DECODER_MAX_KEYS: usize = 4;
/// Bytes of caller storage a signed decoder handle needs (on every target).
pub const TPACK_SIGNED_DECODER_SIZE: usize = 2048;
/// Alignment, in bytes, of a signed decoder handle's storage.
pub const TPACK_SIGNED_DECODER_ALIGN: usize = 8;

/// The decoder, and the trusted keys its policy refers to, side by side in one caller storage. The policy
/// borrows `keys` for as long as the storage holds the decoder: so the storage is never reached through a
/// `&mut` to the whole (which would claim `keys` too), only through its fields (see [`decoder_mut`]).
#[repr(C)]
pub(crate) struct SignedDecoding {
    keys: [MaybeUninit<TrustedKey<'static>>; TPACK_SIGNED_DECODER_MAX_KEYS],
    decoder: SignedDecoder<'static, 'static, 'static, CallCrypto>,
}

impl Handle for SignedDecoding {
    const TAG: u64 = u64::from_le_bytes(*b"tpk:sdec");
}

/// Caller storage for a push decoder that authenticates the stream against a policy, filled by
/// `tpack_signed_decoder_init`. Opaque. It holds the caller's buffers exclusively and refers to the policy's
/// keys, public keys and subjects: all must stay valid and unchanged while the decoder is used, and the
/// decoder itself may not be copied or moved (it refers to itself). Not thread-safe; owns nothing.
#[repr(C)]
pub struct tpack_signed_decoder {
    // `MaybeUninit`: as for `tpack_decoder`.
    opaque: [MaybeUninit<u64>; 256],
}

const _: () = {
    assert!(size_of::<tpack_signed_decoder>() == TPACK_SIGNED_DECODER_SIZE);
    assert!(align_of::<tpack_signed_decoder>() == TPACK_SIGNED_DECODER_ALIGN);
    assert!(size_of::<Stored<SignedDecoding>>() <= TPACK_SIGNED_DECODER_SIZE);
    assert!(align_of::<Stored<SignedDecoding>>() <= TPACK_SIGNED_DECODER_ALIGN);
};

/// Who signed a stream that `tpack_signed_decoder_finish` accepted.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tpack_signer {
    /// Whether the stream was signed: false for an unsigned stream that the policy allowed (the other fields
    /// are then 0).
    pub is_signed: bool,
    /// The algorithm's code (`TPACK_ALGORITHM_*`).
    pub algorithm: u64,
    /// The signed security counter: raise the device's floor to it only once the new model is committed and
    /// found working.
    pub counter: u64,
    /// The signing key's id.
    pub key_id: [u8; TPACK_KEY_ID_LEN],
}

impl tpack_signer {
    fn new(proof: &Authentic) -> Self {
        match proof.signer() {
            None => {
                tpack_signer { is_signed: false, algorithm: 0, counter: 0, key_id: [0; TPACK_KEY_ID_LEN] }
            }
            Some(s) => tpack_signer {
                is_signed: true,
                algorithm: s.algorithm.code(),
                counter: s.counter,
                key_id: s.key_id,
            },
        }
    }
}

/// The decoder in `d`, for a call that changes it.
///
/// # Safety
/// As for [`filled_place`]; `d` filled by `tpack_signed_decoder_init`, used by no one else for `'a`.
unsafe fn decoder_mut<'a>(
    d: *mut tpack_signed_decoder,
) -> Result<&'a mut SignedDecoder<'static, 'static, 'static, CallCrypto>, Failure> {
    // SAFETY: the caller's contract.
    let value = unsafe { filled_place::<_, SignedDecoding>(d) }?;
    // SAFETY: the tag says a successful init wrote a decoder there. Only the `decoder` field is borrowed
    // mutably; the `keys` beside it, which the decoder's policy borrows, are not.
    Ok(unsafe { &mut *addr_of_mut!((*value).decoder) })
}

/// The decoder in `d`, for a call that reads it.
///
/// # Safety
/// As for [`decoder_mut`], with no one writing `d` for `'a`.
unsafe fn decoder_ref<'a>(
    d: *const tpack_signed_decoder,
) -> Result<&'a SignedDecoder<'static, 'static, 'static, CallCrypto>, Failure> {
    // SAFETY: the caller's contract.
    let value = unsafe { filled_place::<_, SignedDecoding>(d) }?;
    // SAFETY: as in `decoder_mut`, shared.
    Ok(unsafe { &*addr_of!((*value).decoder) })
}

/// Fills `out_storage` with a push decoder that authenticates the stream against `policy` (at most
/// `TPACK_SIGNED_DECODER_MAX_KEYS` trusted keys) with `crypto` (NULL: the built-in one), keeping its state in
/// `buffer` (as `tpack_decoder_init`: `tpack_signed_decoder_grow` grows it, `tpack_signed_decoder_decode`
/// reports it too small as `tpack_decoder_decode` does) and the entries' digests in `digests` (32 bytes per
/// entry: a stream with more entries than `digests_len / 32` is refused with `TPACK_RESULT_BUFFER_TOO_SMALL`,
/// `needed` in `out_error->value`, when its prefix arrives — that one final, since the digests of a signed
/// stream are hashed from its prefix on).
///
/// Events are those of `tpack_decoder_decode`, except that a stream refused from its prefix (R58 to R62)
/// releases **no event at all** from its prefix on, so that nothing is erased or written for it:
/// `tpack_signed_decoder_is_doomed` says so at once, and `tpack_signed_decoder_finish` names the rule.
/// Payload bytes released before `tpack_signed_decoder_finish` accepts the stream are **not yet authentic**:
/// stage them, and commit (copy to their final place, mark the slot bootable) only after it.
///
/// The decoder refers to `policy`'s keys, public keys and subjects (not to the `tpack_policy` struct itself,
/// which may go) and to `crypto`'s callbacks and `user`: they must stay valid while the decoder is used.
///
/// # Errors
/// `TPACK_RESULT_SHORT_STORAGE` for a buffer shorter than `TPACK_DECODER_MIN_BUFFER` (that length in
/// `out_error->value`) or a policy of more than `TPACK_SIGNED_DECODER_MAX_KEYS` keys;
/// `TPACK_RESULT_BAD_ARGUMENT` as for `tpack_container_authenticate`; `TPACK_RESULT_NULL_ARGUMENT`,
/// `TPACK_RESULT_MISALIGNED_STORAGE`. `out_storage` is untouched on failure.
///
/// # Safety
/// `out_storage` must point to a writable `tpack_signed_decoder`; `buffer` and `digests` to `buffer_len` and
/// `digests_len` writable bytes that no one else uses while the decoder is used; `policy` to a readable
/// `tpack_policy` whose keys and strings stay valid and unchanged while the decoder is used; `crypto` be NULL
/// or point to a readable `tpack_crypto` whose callbacks may be called while the decoder is used; `out_error`
/// is NULL or points to a writable `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_init(
    out_storage: *mut tpack_signed_decoder,
    buffer: *mut u8,
    buffer_len: usize,
    digests: *mut u8,
    digests_len: usize,
    policy: *const tpack_policy,
    crypto: *const tpack_crypto,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let slot = storage::<_, SignedDecoding>(out_storage)?;
        let buffer = buffer_arg(buffer, buffer_len)?;
        let digests = buffer_arg(digests, digests_len)?;
        check_min_buffer(buffer_len)?;
        // SAFETY: the caller's contract: readable while the decoder is used.
        let crypto = unsafe { crypto_of(crypto) }?;
        let mut keys =
            [const { MaybeUninit::<TrustedKey<'static>>::uninit() }; TPACK_SIGNED_DECODER_MAX_KEYS];
        // SAFETY: the caller's contract: the keys and strings stay valid while the decoder is used.
        let (count, options) = unsafe { policy_parts(policy, &mut keys) }?;
        // SAFETY: checked by `buffer_arg`; writable and exclusive while the decoder is used (the caller's
        // contract). Zeroed: they may be uninitialized memory.
        let (buffer, digests) = unsafe { (zeroed(buffer, buffer_len), zeroed(digests, digests_len)) };
        let value = value_place(slot);
        // SAFETY: `slot` was checked from `out_storage`, writable by the caller's contract, and large enough
        // (the const assertions). The keys are written first; the policy borrows the `count` of them that
        // `policy_parts` initialized, where they now live, and the decoder is written beside them, never over
        // them. The tag goes last, once the value is whole.
        unsafe {
            addr_of_mut!((*value).keys).write(keys);
            let first = addr_of!((*value).keys).cast::<TrustedKey<'static>>();
            let keys: &'static [TrustedKey<'static>] = core::slice::from_raw_parts(first, count);
            let policy = Policy { keys, ..options };
            addr_of_mut!((*value).decoder).write(SignedDecoder::new(buffer, digests, policy, crypto));
            tag(slot);
        }
        Ok(())
    })
}

/// As `tpack_decoder_decode`, authenticating as it goes; once the stream is refused from its prefix it
/// consumes its input and gives `TPACK_EVENT_NONE` (no `TPACK_EVENT_PREFIX` either).
///
/// # Errors
/// As `tpack_decoder_decode` (`*out_used` written on `TPACK_RESULT_BUFFER_TOO_SMALL`: grow the buffer with
/// `tpack_signed_decoder_grow` and go on with `chunk + *out_used`).
///
/// # Safety
/// As `tpack_decoder_decode`, for a `tpack_signed_decoder`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_decode(
    decoder: *mut tpack_signed_decoder,
    chunk: *const u8,
    len: usize,
    out_used: *mut usize,
    out_event: *mut tpack_event,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let (used_dst, event_dst) = (out(out_used)?, out(out_event)?);
        // SAFETY: the caller's contract.
        let d = unsafe { decoder_mut(decoder) }?;
        // SAFETY: the caller's contract: `len` readable bytes, valid while the event is used.
        let chunk = unsafe { input_of(chunk, len) }?;
        let start = d.decoder().position();
        let (used, event) = d.decode(chunk).map_err(|e| {
            if let DecodeError::BufferTooSmall { .. } = e {
                // SAFETY: checked by `out`; writable by the caller's contract.
                unsafe { put(used_dst, consumed_since(start, d.decoder().position())) };
            }
            Failure::from(e)
        })?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe {
            put(used_dst, used);
            put(event_dst, tpack_event::new(event));
        }
        Ok(())
    })
}

/// Ends the stream and gives the authenticated verdict, in the spec's order: the structural rules, then R58
/// to R63, then entry by entry R37, R64 and R50. On success, writes who signed the stream to `out_signer`
/// (`is_signed` false for an unsigned stream the policy allowed): only now may the staged bytes be committed.
///
/// # Errors
/// `TPACK_RESULT_INVALID_CONTAINER` with the first broken rule (58…64 included), the error the decoder stopped
/// with, `TPACK_RESULT_BUFFER_TOO_SMALL` (the buffer, or `digests` for the stream's entries),
/// `TPACK_RESULT_DECODER_FINISHED` for a second call; a handle error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a `tpack_signed_decoder` filled by `tpack_signed_decoder_init`, used by no one else
/// during the call; `out_signer` to a writable `tpack_signer`; `out_error` be NULL or point to a writable
/// `tpack_error`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_finish(
    decoder: *mut tpack_signed_decoder,
    out_signer: *mut tpack_signer,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        let dst = out(out_signer)?;
        // SAFETY: the caller's contract.
        let d = unsafe { decoder_mut(decoder) }?;
        let proof = d.finish()?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, tpack_signer::new(&proof)) };
        Ok(())
    })
}

/// Writes whether the stream is already known to be refused — by the policy, from its prefix, or by a broken
/// rule — so that the transfer can be abandoned (`tpack_signed_decoder_finish` names the rule).
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_signed_decoder`, `out_doomed` to a writable `bool`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_is_doomed(
    decoder: *const tpack_signed_decoder,
    out_doomed: *mut bool,
) -> tpack_result {
    guard(|| {
        let dst = out(out_doomed)?;
        // SAFETY: the caller's contract.
        let d = unsafe { decoder_ref(decoder) }?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, d.is_doomed()) };
        Ok(())
    })
}

/// As `tpack_decoder_grow`, for a signed decoder's buffer (not its digests); the authentication goes on.
///
/// # Errors
/// As `tpack_decoder_grow`.
///
/// # Safety
/// As `tpack_decoder_grow`, for a `tpack_signed_decoder`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_grow(
    decoder: *mut tpack_signed_decoder,
    buffer: *mut u8,
    buffer_len: usize,
    out_error: *mut tpack_error,
) -> tpack_result {
    guard_with_error(out_error, || {
        // SAFETY: the caller's contract.
        let d = unsafe { decoder_mut(decoder) }?;
        let new = buffer_arg(buffer, buffer_len)?;
        // SAFETY: the caller's contract: `buffer_len` writable bytes, exclusive while the decoder is used.
        unsafe { move_buffer(new, buffer_len, |b| d.replace_buffer(b)) }
    })
}

/// As `tpack_decoder_stream_buffer_needed`, for a signed decoder's buffer (its digests need 32 bytes per
/// entry of the prefix).
///
/// # Errors
/// As `tpack_decoder_stream_buffer_needed`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_signed_decoder`, `out_needed` to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_stream_buffer_needed(
    decoder: *const tpack_signed_decoder,
    out_needed: *mut u64,
) -> tpack_result {
    guard(|| {
        let dst = out(out_needed)?;
        // SAFETY: the caller's contract.
        let d = unsafe { decoder_ref(decoder) }?;
        let needed =
            d.decoder().stream_buffer_needed().ok_or(Failure::Code(tpack_result::TPACK_RESULT_NOT_FOUND))?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, needed) };
        Ok(())
    })
}

/// Writes how many bytes of the stream the decoder has consumed.
///
/// # Errors
/// A handle error or `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_signed_decoder`, `out_position` to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_position(
    decoder: *const tpack_signed_decoder,
    out_position: *mut u64,
) -> tpack_result {
    guard(|| {
        let dst = out(out_position)?;
        // SAFETY: the caller's contract.
        let d = unsafe { decoder_ref(decoder) }?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, d.decoder().position()) };
        Ok(())
    })
}

/// The prefix the decoder in `d` holds, or `TPACK_RESULT_NOT_FOUND` before it has arrived (or when it broke
/// a rule).
///
/// # Safety
/// As for [`decoder_ref`]; the prefix lives in the decoder's buffer, never written again once validated.
unsafe fn prefix_of<'a>(d: *const tpack_signed_decoder) -> Result<Prefix<'a>, Failure> {
    // SAFETY: the caller's contract.
    let d: &'a SignedDecoder<'static, 'static, 'static, CallCrypto> = unsafe { decoder_ref(d) }?;
    d.decoder().prefix().ok_or(Failure::Code(tpack_result::TPACK_RESULT_NOT_FOUND))
}

/// Writes what the stream's prefix declares about its signature (claims until
/// `tpack_signed_decoder_finish` accepts the stream; `digests` and `signature` are empty: the signature entry
/// comes last). Available from `TPACK_EVENT_PREFIX` on, and also for a stream the policy refused, whose
/// prefix arrived valid: to report who signed what was refused.
///
/// # Errors
/// `TPACK_RESULT_NOT_FOUND` before the prefix, `TPACK_RESULT_NOT_SIGNED` for an unsigned stream, a handle
/// error, `TPACK_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_signed_decoder`, `out_attributes` to a writable
/// `tpack_signed_attributes`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_prefix_signed_attributes(
    decoder: *const tpack_signed_decoder,
    out_attributes: *mut tpack_signed_attributes,
) -> tpack_result {
    guard(|| {
        let dst = out(out_attributes)?;
        // SAFETY: the caller's contract.
        let prefix = unsafe { prefix_of(decoder) }?;
        let attributes =
            prefix.signed_attributes().ok_or(Failure::Code(tpack_result::TPACK_RESULT_NOT_SIGNED))?;
        // SAFETY: checked by `out`; writable by the caller's contract.
        unsafe { put(dst, tpack_signed_attributes::new(&attributes, None)) };
        Ok(())
    })
}

/// As `tpack_decoder_prefix_entry_count`, for a signed decoder.
///
/// # Errors
/// As `tpack_decoder_prefix_entry_count`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_signed_decoder`, `out_count` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_prefix_entry_count(
    decoder: *const tpack_signed_decoder,
    out_count: *mut usize,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::count(view, view::View::entry_count, out_count) })
}

/// As `tpack_decoder_prefix_entry`, for a signed decoder.
///
/// # Errors
/// As `tpack_decoder_prefix_entry`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_signed_decoder`, `out_entry` to a writable `tpack_entry`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_prefix_entry(
    decoder: *const tpack_signed_decoder,
    index: usize,
    out_entry: *mut tpack_entry,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::entry_at(view, index, out_entry) })
}

/// As `tpack_decoder_prefix_find`, for a signed decoder.
///
/// # Errors
/// As `tpack_decoder_prefix_find`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_signed_decoder`, `name` to `name_len` readable bytes, `out_entry`
/// to a writable `tpack_entry`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_prefix_find(
    decoder: *const tpack_signed_decoder,
    name: *const c_char,
    name_len: usize,
    out_entry: *mut tpack_entry,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::find(view, name, name_len, out_entry) })
}

/// As `tpack_decoder_prefix_metadata_get`, for a signed decoder.
///
/// # Errors
/// As `tpack_decoder_prefix_metadata_get`.
///
/// # Safety
/// `decoder` must point to a filled `tpack_signed_decoder`, `key` to `key_len` readable bytes, `out_value` to
/// a writable `tpack_meta_value`.
#[no_mangle]
pub unsafe extern "C" fn tpack_signed_decoder_prefix_metadata_get(
    decoder: *const tpack_signed_decoder,
    key: *const c_char,
    key_len: usize,
    out_value: *mut tpack_meta_value,
) -> tpack_result {
    let view = || {
        // SAFETY: the caller's contract.
        unsafe { prefix_of(decoder) }
    };
    // SAFETY: the caller's contract.
    guard(|| unsafe { view::metadata_get(view, key, key_len, out_value) })
}
