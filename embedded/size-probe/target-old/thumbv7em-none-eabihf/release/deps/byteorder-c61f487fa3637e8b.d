/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/byteorder-c61f487fa3637e8b.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/byteorder-1.5.0/src/lib.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libbyteorder-c61f487fa3637e8b.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/byteorder-1.5.0/src/lib.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libbyteorder-c61f487fa3637e8b.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/byteorder-1.5.0/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/byteorder-1.5.0/src/lib.rs:
