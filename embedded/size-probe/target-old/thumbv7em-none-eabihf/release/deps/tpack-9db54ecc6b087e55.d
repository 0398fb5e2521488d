/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/tpack-9db54ecc6b087e55.d: /tmp/wt-old/src/lib.rs /tmp/wt-old/src/checksum.rs /tmp/wt-old/src/error.rs /tmp/wt-old/src/format.rs /tmp/wt-old/src/layout.rs /tmp/wt-old/src/meta_value.rs /tmp/wt-old/src/read/mod.rs /tmp/wt-old/src/read/descriptors.rs /tmp/wt-old/src/read/entry.rs /tmp/wt-old/src/read/header.rs /tmp/wt-old/src/read/metadata.rs /tmp/wt-old/src/read/names.rs /tmp/wt-old/src/read/nested.rs /tmp/wt-old/src/read/payloads.rs /tmp/wt-old/src/read/verify.rs /tmp/wt-old/src/write/mod.rs /tmp/wt-old/src/write/bookkeeping.rs /tmp/wt-old/src/write/decl.rs /tmp/wt-old/src/write/error.rs /tmp/wt-old/src/write/meta_item.rs /tmp/wt-old/src/write/plan.rs /tmp/wt-old/src/write/sort.rs /tmp/wt-old/src/write/writer.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libtpack-9db54ecc6b087e55.rlib: /tmp/wt-old/src/lib.rs /tmp/wt-old/src/checksum.rs /tmp/wt-old/src/error.rs /tmp/wt-old/src/format.rs /tmp/wt-old/src/layout.rs /tmp/wt-old/src/meta_value.rs /tmp/wt-old/src/read/mod.rs /tmp/wt-old/src/read/descriptors.rs /tmp/wt-old/src/read/entry.rs /tmp/wt-old/src/read/header.rs /tmp/wt-old/src/read/metadata.rs /tmp/wt-old/src/read/names.rs /tmp/wt-old/src/read/nested.rs /tmp/wt-old/src/read/payloads.rs /tmp/wt-old/src/read/verify.rs /tmp/wt-old/src/write/mod.rs /tmp/wt-old/src/write/bookkeeping.rs /tmp/wt-old/src/write/decl.rs /tmp/wt-old/src/write/error.rs /tmp/wt-old/src/write/meta_item.rs /tmp/wt-old/src/write/plan.rs /tmp/wt-old/src/write/sort.rs /tmp/wt-old/src/write/writer.rs

/work/main/embedded/size-probe/target-old/thumbv7em-none-eabihf/release/deps/libtpack-9db54ecc6b087e55.rmeta: /tmp/wt-old/src/lib.rs /tmp/wt-old/src/checksum.rs /tmp/wt-old/src/error.rs /tmp/wt-old/src/format.rs /tmp/wt-old/src/layout.rs /tmp/wt-old/src/meta_value.rs /tmp/wt-old/src/read/mod.rs /tmp/wt-old/src/read/descriptors.rs /tmp/wt-old/src/read/entry.rs /tmp/wt-old/src/read/header.rs /tmp/wt-old/src/read/metadata.rs /tmp/wt-old/src/read/names.rs /tmp/wt-old/src/read/nested.rs /tmp/wt-old/src/read/payloads.rs /tmp/wt-old/src/read/verify.rs /tmp/wt-old/src/write/mod.rs /tmp/wt-old/src/write/bookkeeping.rs /tmp/wt-old/src/write/decl.rs /tmp/wt-old/src/write/error.rs /tmp/wt-old/src/write/meta_item.rs /tmp/wt-old/src/write/plan.rs /tmp/wt-old/src/write/sort.rs /tmp/wt-old/src/write/writer.rs

/tmp/wt-old/src/lib.rs:
/tmp/wt-old/src/checksum.rs:
/tmp/wt-old/src/error.rs:
/tmp/wt-old/src/format.rs:
/tmp/wt-old/src/layout.rs:
/tmp/wt-old/src/meta_value.rs:
/tmp/wt-old/src/read/mod.rs:
/tmp/wt-old/src/read/descriptors.rs:
/tmp/wt-old/src/read/entry.rs:
/tmp/wt-old/src/read/header.rs:
/tmp/wt-old/src/read/metadata.rs:
/tmp/wt-old/src/read/names.rs:
/tmp/wt-old/src/read/nested.rs:
/tmp/wt-old/src/read/payloads.rs:
/tmp/wt-old/src/read/verify.rs:
/tmp/wt-old/src/write/mod.rs:
/tmp/wt-old/src/write/bookkeeping.rs:
/tmp/wt-old/src/write/decl.rs:
/tmp/wt-old/src/write/error.rs:
/tmp/wt-old/src/write/meta_item.rs:
/tmp/wt-old/src/write/plan.rs:
/tmp/wt-old/src/write/sort.rs:
/tmp/wt-old/src/write/writer.rs:
