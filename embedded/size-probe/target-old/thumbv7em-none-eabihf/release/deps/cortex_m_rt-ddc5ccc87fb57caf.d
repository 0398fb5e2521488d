/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/cortex_m_rt-ddc5ccc87fb57caf.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cortex-m-rt-0.7.7/src/lib.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libcortex_m_rt-ddc5ccc87fb57caf.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cortex-m-rt-0.7.7/src/lib.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libcortex_m_rt-ddc5ccc87fb57caf.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cortex-m-rt-0.7.7/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cortex-m-rt-0.7.7/src/lib.rs:
