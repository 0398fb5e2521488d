/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/panic_halt-75ed98a5a5269d7a.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/panic-halt-1.0.0/src/lib.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libpanic_halt-75ed98a5a5269d7a.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/panic-halt-1.0.0/src/lib.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libpanic_halt-75ed98a5a5269d7a.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/panic-halt-1.0.0/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/panic-halt-1.0.0/src/lib.rs:
