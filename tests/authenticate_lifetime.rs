//! `Container::authenticate` borrows its policy only for the call: the result lives as long as the container,
//! after the keys it was checked with are gone. The Python package relies on it: an open container keeps its
//! `Authenticated` for its whole life, while the trusted keys were the caller's, for the duration of `open`.
//! Natively only: it signs, which takes minutes per signature under Miri (see .ci/run's Miri step).
#![cfg(not(miri))]

use tpack::auth::{Algorithm, Authenticated, Policy, SoftwareCrypto};
use tpack::sign::{PublicKey, SignOptions, SigningKey};
use tpack::write::{Builder, NewEntry};
use tpack::{Container, Dtype};

/// Authenticates `container` with a key read here and dropped on return (with the `&Policy<'a>` of the first
/// design, this did not compile: `trusted` does not live long enough).
fn authenticated<'a>(container: &Container<'a>, public_pem: &str) -> Authenticated<'a> {
    let public = PublicKey::from_pem(public_pem).unwrap();
    let trusted = [public.trusted()];
    container.authenticate(&Policy::require(&trusted), &SoftwareCrypto).unwrap()
}

#[test]
fn the_result_outlives_the_policy() {
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mut builder = Builder::new();
    builder.push(NewEntry::new("w", Dtype::U8, &[2], &[1, 2])).unwrap();
    builder.sign(&key, &SignOptions { counter: 3, ..SignOptions::default() }).unwrap();
    let bytes = builder.finish().unwrap();
    let container = Container::parse(&bytes).unwrap();
    let checked = authenticated(&container, &key.public().to_pem().unwrap());
    assert_eq!(checked.signer().unwrap().counter, 3);
    assert_eq!(checked.verify_entry(0, &SoftwareCrypto).unwrap(), &[1, 2]);
}
