/work/main/embedded/size-probe/target-old/release/deps/cortex_m_rt_macros-0a3d643bd492cab0.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cortex-m-rt-macros-0.7.7/src/lib.rs

/work/main/embedded/size-probe/target-old/release/deps/libcortex_m_rt_macros-0a3d643bd492cab0.so: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cortex-m-rt-macros-0.7.7/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cortex-m-rt-macros-0.7.7/src/lib.rs:
