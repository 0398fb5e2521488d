/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/hash32-5fc7896270d659d0.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/fnv.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/murmur3.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libhash32-5fc7896270d659d0.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/fnv.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/murmur3.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libhash32-5fc7896270d659d0.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/fnv.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/murmur3.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/fnv.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hash32-0.3.1/src/murmur3.rs:
