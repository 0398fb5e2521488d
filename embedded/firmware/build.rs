//! Places the linker script, and derives from the model, with tpack's signing API, what the firmware needs
//! about it at build time (every image deterministic: fixed test keys, fixed counters):
//!
//! - `trusted_key.rs`: the device's trusted key, compiled in: the public key of test key 1 (Ed25519 seed
//!   SHA-256("tpack test key 1"), as in the crate's tests; a published key, never for real use), the
//!   subject and the counter floor of the device's policy;
//! - the signed model (`signed.tpack`: test key 1, counter `FLOOR`, subject `SUBJECT`), which the firmware
//!   keeps in flash and streams in;
//! - the forged and refused variants streamed in, each checked here to break the rule the firmware expects:
//!   `forged.tpack`, a byte of `fc1.weight` changed and every CRC recomputed (R64: `Container::verify`
//!   accepts it); `other-key.tpack`, signed by test key 2 (R59); `rollback.tpack`, counter `FLOOR - 1` (R62);
//!   and the unsigned model itself (R58);
//! - `stream.rs`: the decoder's buffer and digest lengths, and where to flip a bit of a name on the fly (R13).

use std::path::{Path, PathBuf};

use tpack::auth::{Algorithm, Policy, Sha256, Sha256Software, SoftwareCrypto};
use tpack::sign::{sign_container, SignOptions, SigningKey};
use tpack::Container;

/// The bit flipped by every corruption.
const FLIP: u8 = 0x10;
/// The device's counter floor, and the counter of the model it accepts.
const FLOOR: u64 = 3;
/// The model line the device accepts.
const SUBJECT: &str = "tpack.tiny-mlp";

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    std::fs::copy("memory.x", out.join("memory.x")).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");

    let model_path = Path::new("../tiny-mlp/tiny-mlp.tpack");
    println!("cargo:rerun-if-changed={}", model_path.display());
    let model = std::fs::read(model_path).unwrap();

    let key = test_key(1);
    let trusted = [key.public().trusted().with_subject(SUBJECT)];
    let policy = Policy { min_counter: FLOOR, ..Policy::require(&trusted) };
    let sign = |key: &SigningKey, counter| {
        let options = SignOptions { counter, subject: Some(SUBJECT.to_owned()), embed_public_key: false };
        sign_container(&model, key, &options).unwrap()
    };

    let signed = sign(&key, FLOOR);
    assert_eq!(verdict(&signed, &policy), None);
    let forged = forged(&signed, "fc1.weight");
    assert_eq!(Container::parse(&forged).and_then(|c| c.verify()), Ok(()), "the forged copy's CRCs");
    assert_eq!(verdict(&forged, &policy), Some("R64"));
    let other_key = sign(&test_key(2), FLOOR);
    assert_eq!(verdict(&other_key, &policy), Some("R59"));
    let rollback = sign(&key, FLOOR - 1);
    assert_eq!(verdict(&rollback, &policy), Some("R62"));
    assert_eq!(verdict(&model, &policy), Some("R58"));
    for (name, bytes) in
        [("signed", &signed), ("forged", &forged), ("other-key", &other_key), ("rollback", &rollback)]
    {
        std::fs::write(out.join(format!("{name}.tpack")), bytes).unwrap();
    }

    // The first occurrence of the name is in the names section, before any payload.
    let name_at = signed.windows(10).position(|w| w == b"fc1.weight").expect("the name fc1.weight") + 2;
    let mut renamed = signed.clone();
    renamed[name_at] ^= FLIP;
    let damaged = Container::parse(&renamed).map(|_| ()).map_err(|e| e.rule().id());
    assert_eq!(damaged, Err("R13"), "flipping byte {name_at} of a name");

    std::fs::write(
        out.join("trusted_key.rs"),
        format!(
            "/// The raw Ed25519 public key the device trusts: test key 1's.\n\
             pub const PUBLIC_KEY: [u8; 32] = {:?};\n\
             /// The model line the device accepts.\n\
             pub const SUBJECT: &str = {SUBJECT:?};\n\
             /// The device's counter floor (in monotonic storage on a real device).\n\
             pub const FLOOR: u64 = {FLOOR};\n",
            key.public().raw()
        ),
    )
    .unwrap();

    // Every image streamed must fit the decoder's buffer; the signed model's entries (but the signature
    // entry) each need a digest.
    let images = [&model, &signed, &forged, &other_key, &rollback];
    let buffer = images.iter().map(|i| tpack::stream::Decoder::buffer_needed(i).unwrap()).max().unwrap();
    let digests = 32 * (Container::parse(&signed).unwrap().len() - 1);
    std::fs::write(
        out.join("stream.rs"),
        format!(
            "/// The decoder's buffer: the largest `Decoder::buffer_needed` of the images streamed.\n\
             pub const BUFFER_LEN: usize = {buffer};\n\
             /// The signed decoder's digest buffer: 32 bytes for each entry but the signature entry.\n\
             pub const DIGESTS_LEN: usize = {digests};\n\
             /// A byte of the signed model's name `fc1.weight`, and the bit flipped in it.\n\
             pub const NAME_FLIP_AT: u64 = {name_at};\n\
             pub const FLIP: u8 = {FLIP:#04x};\n"
        ),
    )
    .unwrap();
}

/// Test key `n`: the Ed25519 key whose seed is SHA-256 of "tpack test key n".
fn test_key(n: u32) -> SigningKey {
    let mut seed = Sha256Software::default();
    seed.update(format!("tpack test key {n}").as_bytes());
    SigningKey::from_secret_bytes(Algorithm::Ed25519, &seed.finish()).unwrap()
}

/// The rule `policy` refuses `bytes` with (parse, authenticate, verify), or `None` if it accepts them.
fn verdict(bytes: &[u8], policy: &Policy<'_>) -> Option<&'static str> {
    let checked = Container::parse(bytes)
        .and_then(|c| c.authenticate(policy, &SoftwareCrypto))
        .and_then(|a| a.verify(&SoftwareCrypto));
    checked.err().map(|e| e.rule().id())
}

/// `signed` with a bit of `entry`'s payload flipped, and every CRC recomputed as a forger would: the entry's
/// checksum in the trailer and the trailer's own. (The header checksum covers the prefix only.)
fn forged(signed: &[u8], entry: &str) -> Vec<u8> {
    let c = Container::parse(signed).unwrap();
    let victim = c.get(entry).unwrap();
    let range = usize::try_from(victim.range().start).unwrap()..usize::try_from(victim.range().end).unwrap();
    let count = c.len();
    let trailer = usize::try_from(c.header().sections[5].offset.get()).unwrap();
    let slot = trailer + 4 * victim.position();
    let mut bytes = signed.to_vec();
    bytes[range.start + 5] ^= FLIP;
    let crc = tpack::checksum::crc32(&bytes[range]);
    bytes[slot..slot + 4].copy_from_slice(&crc.to_le_bytes());
    let crc = tpack::checksum::crc32(&bytes[trailer..trailer + 4 * count]);
    bytes[trailer + 4 * count..trailer + 4 * count + 4].copy_from_slice(&crc.to_le_bytes());
    bytes
}
