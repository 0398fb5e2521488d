/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/stable_deref_trait-f872ed2dc2509d75.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/stable_deref_trait-1.2.1/src/lib.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libstable_deref_trait-f872ed2dc2509d75.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/stable_deref_trait-1.2.1/src/lib.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libstable_deref_trait-f872ed2dc2509d75.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/stable_deref_trait-1.2.1/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/stable_deref_trait-1.2.1/src/lib.rs:
