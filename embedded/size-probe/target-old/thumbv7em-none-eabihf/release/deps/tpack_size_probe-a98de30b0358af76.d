/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/tpack_size_probe-a98de30b0358af76.d: src/main.rs src/../../../spec/vectors/valid/example.tpack

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/tpack_size_probe-a98de30b0358af76: src/main.rs src/../../../spec/vectors/valid/example.tpack

src/main.rs:
src/../../../spec/vectors/valid/example.tpack:
