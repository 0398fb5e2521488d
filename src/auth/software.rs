//! [`SoftwareCrypto`]: SHA-256 from RustCrypto's `sha2` (SHA-NI or the ARMv8 extensions where the CPU has
//! them), Ed25519 from `salty` (feature `ed25519`), ECDSA P-256 from RustCrypto's `p256` (feature `p256`).
//!
//! On a Cortex-M, `sha2`'s compact software backend halves its code size at some speed: it is chosen by the
//! firmware, with `RUSTFLAGS='--cfg sha2_backend_soft="compact"'`, not by a feature of this crate.

use sha2::Digest;

use super::{Algorithm, Crypto, Sha256};

/// SHA-256 from the `sha2` crate.
#[derive(Clone, Debug, Default)]
pub struct Sha256Software(sha2::Sha256);

impl Sha256 for Sha256Software {
    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// The software implementation of [`Crypto`]: SHA-256 always, and the signature algorithms whose features are
/// enabled (`ed25519`, `p256`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SoftwareCrypto;

impl Crypto for SoftwareCrypto {
    type Hasher = Sha256Software;

    fn hasher(&self) -> Sha256Software {
        Sha256Software::default()
    }

    fn supports(&self, algorithm: Algorithm) -> bool {
        match algorithm {
            Algorithm::Ed25519 => cfg!(feature = "ed25519"),
            Algorithm::EcdsaP256 => cfg!(feature = "p256"),
        }
    }

    fn verify(&self, algorithm: Algorithm, public_key: &[u8], message: &[u8; 80], signature: &[u8]) -> bool {
        match algorithm {
            #[cfg(feature = "ed25519")]
            Algorithm::Ed25519 => ed25519::verify(public_key, message, signature),
            #[cfg(feature = "p256")]
            Algorithm::EcdsaP256 => p256_ecdsa::verify(public_key, message, signature),
            #[allow(unreachable_patterns)] // with both features, every algorithm has its arm
            _ => {
                let _ = (public_key, message, signature);
                false
            }
        }
    }
}

#[cfg(feature = "ed25519")]
mod ed25519 {
    /// The order of the Ed25519 base point, L = 2^252 + 27742317777372353535851937790883648493, little-endian.
    pub(super) const ORDER: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];

    /// RFC 8032 §5.1.7 verification of `signature` (`R ‖ S`) over `message`.
    pub(super) fn verify(public_key: &[u8], message: &[u8], signature: &[u8]) -> bool {
        let (Ok(key), Ok(signature)) = (<&[u8; 32]>::try_from(public_key), <&[u8; 64]>::try_from(signature))
        else {
            return false;
        };
        let (_, s) = signature.split_at(32);
        // salty does not reject S ≥ L, which would make signatures malleable (S + L verifies as S does): the
        // spec pins the rejection, so it is checked here, most significant byte first.
        if !s.iter().rev().lt(ORDER.iter().rev()) {
            return false;
        }
        let Ok(key) = salty::PublicKey::try_from(key) else { return false };
        key.verify(message, &salty::Signature::from(signature)).is_ok()
    }
}

#[cfg(feature = "p256")]
mod p256_ecdsa {
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::{Signature, VerifyingKey};

    /// ECDSA with SHA-256 of `message`; `signature` is `r ‖ s`, each 32 bytes big-endian and in `[1, n − 1]`
    /// (`Signature::from_slice` refuses anything else). High `s` is accepted, as the spec says.
    pub(super) fn verify(public_key: &[u8], message: &[u8], signature: &[u8]) -> bool {
        let (Ok(key), Ok(signature)) =
            (VerifyingKey::from_sec1_bytes(public_key), Signature::from_slice(signature))
        else {
            return false;
        };
        key.verify(message, &signature).is_ok()
    }
}

#[cfg(all(test, feature = "ed25519"))]
mod tests {
    fn unhex(s: &str) -> alloc::vec::Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// RFC 8032 §7.1, test 1: the empty message. Not under Miri: about five minutes of interpretation for no
    /// unsafe code (salty's portable field arithmetic, used off ARM, has none); CI runs it on big-endian s390x
    /// under QEMU, where the byte order is the question.
    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri, over no unsafe code: run on big-endian s390x under QEMU")]
    fn rfc_8032_test_1_verifies_and_s_plus_l_does_not() {
        let key = unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        let signature = unhex(
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
        );
        assert!(super::ed25519::verify(&key, b"", &signature));
        // S + L: the same point equation holds, and salty alone would accept it.
        let mut malleated = signature.clone();
        let mut carry = 0u16;
        for (byte, l) in malleated[32..].iter_mut().zip(super::ed25519::ORDER) {
            let sum = u16::from(*byte) + u16::from(l) + carry;
            *byte = sum as u8;
            carry = sum >> 8;
        }
        assert!(!super::ed25519::verify(&key, b"", &malleated));
        if !cfg!(miri) {
            let mut flipped = signature;
            flipped[0] ^= 1;
            assert!(!super::ed25519::verify(&key, b"", &flipped));
            assert!(!super::ed25519::verify(&key, b"x", &unhex(&"00".repeat(64))));
        }
    }
}
