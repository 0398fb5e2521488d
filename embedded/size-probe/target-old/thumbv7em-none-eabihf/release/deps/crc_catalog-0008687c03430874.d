/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/crc_catalog-0008687c03430874.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/poly.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/algorithm.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libcrc_catalog-0008687c03430874.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/poly.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/algorithm.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libcrc_catalog-0008687c03430874.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/poly.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/algorithm.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/poly.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/crc-catalog-2.5.0/src/algorithm.rs:
