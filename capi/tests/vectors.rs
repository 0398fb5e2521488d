//! The C API from Rust, through its `extern "C"` functions only: every vector of `spec/vectors` against its
//! manifest (entries and metadata field by field for the valid ones, the rule for the invalid ones), and the
//! argument checks (NULL, misaligned and unfilled storage, out-parameters untouched on failure).

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::path::Path;

use serde_json::Value;
use tpack_capi::*;

#[path = "../../tests/support/manifest.rs"]
mod manifest;

const OK: tpack_result = tpack_result::TPACK_RESULT_OK;

/// The manifest's vectors (sampled under Miri), parsed once for all the tests of this file: parsing the manifest
/// is most of a test's time under Miri.
fn vectors() -> &'static [Value] {
    static VECTORS: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    VECTORS.get_or_init(|| {
        let manifest = manifest::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
        // Only the sampled vectors are parsed (see manifest.rs).
        manifest::vectors(&manifest).iter().step_by(SAMPLE).map(|v| v.parse()).collect()
    })
}

/// Miri is slow: every 16th vector there (the sample still holds valid and invalid ones of many kinds).
const SAMPLE: usize = if cfg!(miri) { 16 } else { 1 };

fn read(file: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors").join(file)).expect("vector")
}

fn c_str(p: *const std::ffi::c_char) -> Option<&'static str> {
    // SAFETY: the API's static names are NUL-terminated and live for the whole program.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().expect("UTF-8"))
}

fn text(s: tpack_str) -> String {
    // SAFETY: a `tpack_str` the API wrote points to `len` bytes of the input, which outlives this call.
    let bytes = unsafe { std::slice::from_raw_parts(s.data.cast::<u8>(), s.len) };
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

fn slice<'a>(b: tpack_bytes) -> &'a [u8] {
    // SAFETY: as for `text`.
    unsafe { std::slice::from_raw_parts(b.data, b.len) }
}

fn parse(bytes: &[u8]) -> Result<tpack_container, (tpack_result, tpack_error)> {
    let mut c = MaybeUninit::<tpack_container>::uninit();
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: `bytes` outlives every use of the container in these tests; the outputs are writable.
    let r = unsafe { tpack_container_parse(bytes.as_ptr(), bytes.len(), c.as_mut_ptr(), e.as_mut_ptr()) };
    if r == OK {
        // SAFETY: filled by the successful call.
        Ok(unsafe { c.assume_init() })
    } else {
        // SAFETY: written on failure.
        Err((r, unsafe { e.assume_init() }))
    }
}

fn verify(c: &tpack_container) -> Result<(), (tpack_result, tpack_error)> {
    let mut e = MaybeUninit::<tpack_error>::uninit();
    // SAFETY: a filled container; a writable error.
    let r = unsafe { tpack_container_verify(c, e.as_mut_ptr()) };
    if r == OK {
        Ok(())
    } else {
        // SAFETY: written on failure.
        Err((r, unsafe { e.assume_init() }))
    }
}

/// Calls an accessor `f(handle, out)` and gives the output, or the code.
fn get<H, T>(
    h: *const H,
    f: unsafe extern "C" fn(*const H, *mut T) -> tpack_result,
) -> Result<T, tpack_result> {
    let mut out = MaybeUninit::<T>::uninit();
    // SAFETY: `h` is a filled handle of the tests; `out` is writable.
    let r = unsafe { f(h, out.as_mut_ptr()) };
    // SAFETY: written on success.
    if r == OK {
        Ok(unsafe { out.assume_init() })
    } else {
        Err(r)
    }
}

/// Like [`get`] for an accessor that takes an index.
fn get_at<H, T>(
    h: *const H,
    i: usize,
    f: unsafe extern "C" fn(*const H, usize, *mut T) -> tpack_result,
) -> Result<T, tpack_result> {
    let mut out = MaybeUninit::<T>::uninit();
    // SAFETY: as for `get`.
    let r = unsafe { f(h, i, out.as_mut_ptr()) };
    // SAFETY: written on success.
    if r == OK {
        Ok(unsafe { out.assume_init() })
    } else {
        Err(r)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn type_name(code: u8) -> Value {
    match c_str(tpack_meta_type_name(code)) {
        Some(name) => Value::from(name),
        None => Value::from(code),
    }
}

/// The value in `v` as the manifest writes it: `{"type": …, "value": …}`.
fn value_json(v: &tpack_meta_value) -> Value {
    let code = get(v, tpack_meta_value_type).expect("type");
    let name = type_name(code);
    let items = |len: usize| 0..len;
    let len = get(v, tpack_meta_array_len);
    let value = match name.as_str().unwrap_or("") {
        "u64" => Value::from(get(v, tpack_meta_u64).expect("u64")),
        "i64" => Value::from(get(v, tpack_meta_i64).expect("i64")),
        "f64" => Value::from(format!("{:016x}", get(v, tpack_meta_f64).expect("f64").to_bits())),
        "bool" => Value::from(get(v, tpack_meta_bool).expect("bool")),
        "string" => Value::from(text(get(v, tpack_meta_string).expect("string"))),
        "bytes" => Value::from(hex(slice(get(v, tpack_meta_bytes).expect("bytes")))),
        "u8" => Value::from(get(v, tpack_meta_u8).expect("u8")),
        "i8" => Value::from(get(v, tpack_meta_i8).expect("i8")),
        "u16" => Value::from(get(v, tpack_meta_u16).expect("u16")),
        "i16" => Value::from(get(v, tpack_meta_i16).expect("i16")),
        "u32" => Value::from(get(v, tpack_meta_u32).expect("u32")),
        "i32" => Value::from(get(v, tpack_meta_i32).expect("i32")),
        "f32" => Value::from(format!("{:08x}", get(v, tpack_meta_f32).expect("f32").to_bits())),
        "u64[]" => items(len.expect("len"))
            .map(|i| Value::from(get_at(v, i, tpack_meta_u64_at).expect("u64")))
            .collect(),
        "i64[]" => items(len.expect("len"))
            .map(|i| Value::from(get_at(v, i, tpack_meta_i64_at).expect("i64")))
            .collect(),
        "f64[]" => items(len.expect("len"))
            .map(|i| Value::from(format!("{:016x}", get_at(v, i, tpack_meta_f64_at).expect("f64").to_bits())))
            .collect(),
        "string[]" => items(len.expect("len"))
            .map(|i| Value::from(text(get_at(v, i, tpack_meta_string_at).expect("item"))))
            .collect(),
        "u8[]" => items(len.expect("len"))
            .map(|i| Value::from(get_at(v, i, tpack_meta_u8_at).expect("u8")))
            .collect(),
        "i8[]" => items(len.expect("len"))
            .map(|i| Value::from(get_at(v, i, tpack_meta_i8_at).expect("i8")))
            .collect(),
        "u16[]" => items(len.expect("len"))
            .map(|i| Value::from(get_at(v, i, tpack_meta_u16_at).expect("u16")))
            .collect(),
        "i16[]" => items(len.expect("len"))
            .map(|i| Value::from(get_at(v, i, tpack_meta_i16_at).expect("i16")))
            .collect(),
        "u32[]" => items(len.expect("len"))
            .map(|i| Value::from(get_at(v, i, tpack_meta_u32_at).expect("u32")))
            .collect(),
        "i32[]" => items(len.expect("len"))
            .map(|i| Value::from(get_at(v, i, tpack_meta_i32_at).expect("i32")))
            .collect(),
        "f32[]" => items(len.expect("len"))
            .map(|i| Value::from(format!("{:08x}", get_at(v, i, tpack_meta_f32_at).expect("f32").to_bits())))
            .collect(),
        "bool[]" => items(len.expect("len"))
            .map(|i| Value::from(get_at(v, i, tpack_meta_bool_at).expect("bool")))
            .collect(),
        "array[]" => items(len.expect("len"))
            .map(|i| value_json(&get_at(v, i, tpack_meta_array_at).expect("item")))
            .collect(),
        // A type of a newer minor version: the manifest gives its pool bytes.
        _ => {
            assert_eq!(get(v, tpack_meta_u64).err(), Some(tpack_result::TPACK_RESULT_WRONG_TYPE));
            Value::from(hex(slice(get(v, tpack_meta_unknown_bytes).expect("unknown"))))
        }
    };
    serde_json::json!({ "type": name, "value": value })
}

fn entry_json(e: &tpack_entry) -> Value {
    let dtype = match c_str(tpack_dtype_name(e.dtype)) {
        Some(name) => Value::from(name),
        None => Value::from(e.dtype),
    };
    let shape: Vec<u64> = e.dims[..usize::from(e.rank)].to_vec();
    assert!(e.dims[usize::from(e.rank)..].iter().all(|&d| d == 0));
    serde_json::json!({
        "alignment": e.alignment,
        "checksum": e.checksum,
        "dtype": dtype,
        "length": e.payload.len,
        "name": text(e.name),
        "offset": e.offset,
        "shape": shape,
        "target": if e.has_target { Value::from(e.target) } else { Value::Null },
    })
}

/// The container as the manifest's `decoding` writes it, nested containers included.
fn container_json(c: &tpack_container) -> Value {
    let (mut major, mut minor) = (0u16, 0u16);
    // SAFETY: a filled container; writable outputs.
    assert_eq!(unsafe { tpack_container_version(c, &mut major, &mut minor) }, OK);
    let count = get(c, tpack_container_entry_count).expect("count");
    let entries: Vec<Value> = (0..count)
        .map(|i| {
            let e = get_at(c, i, tpack_container_entry).expect("entry");
            let mut json = entry_json(&e);
            match get_at(c, i, tpack_container_nested) {
                Ok(nested) => json["container"] = container_json(&nested),
                Err(r) => assert_eq!(r, tpack_result::TPACK_RESULT_WRONG_TYPE),
            }
            json
        })
        .collect();
    let records = get(c, tpack_metadata_count).expect("count");
    let metadata: Vec<Value> = (0..records)
        .map(|i| {
            let mut key = MaybeUninit::<tpack_str>::uninit();
            let mut value = MaybeUninit::<tpack_meta_value>::uninit();
            // SAFETY: a filled container; writable outputs.
            assert_eq!(unsafe { tpack_metadata_at(c, i, key.as_mut_ptr(), value.as_mut_ptr()) }, OK);
            // SAFETY: written on success.
            let (key, value) = unsafe { (key.assume_init(), value.assume_init()) };
            let mut record = value_json(&value);
            record["key"] = Value::from(text(key));
            record
        })
        .collect();
    let mut json = serde_json::json!({
        "compat_flags": get(c, tpack_container_compat_flags).expect("flags"),
        "entries": entries,
        "metadata": metadata,
        "version": [major, minor],
    });
    if let Some(signature) = signature_json(c) {
        json["signature"] = signature;
    }
    json
}

/// The decoding's `signature` object of a signed container (spec §13), from the signed attributes and message.
fn signature_json(c: &tpack_container) -> Option<Value> {
    let attributes = get(c, tpack_container_signed_attributes);
    if attributes.as_ref().err() == Some(&tpack_result::TPACK_RESULT_NOT_SIGNED) {
        return None;
    }
    let s = attributes.expect("signed attributes");
    let mut message = [0u8; 80];
    // SAFETY: a filled container, the built-in crypto, 80 writable bytes.
    assert_eq!(unsafe { tpack_container_signed_message(c, std::ptr::null(), message.as_mut_ptr()) }, OK);
    // An absent key is empty (a key never is), and never NULL.
    let optional = |b: tpack_bytes| {
        assert!(!b.data.is_null());
        (b.len > 0).then(|| hex(slice(b)))
    };
    Some(serde_json::json!({
        "algorithm": s.algorithm,
        "counter": s.counter,
        "key": hex(&s.key_id),
        "message": hex(&message),
        "public_key": optional(s.public_key),
        "subject": (!s.subject.data.is_null()).then(|| text(s.subject)),
    }))
}

#[test]
fn every_valid_vector_reads_as_its_manifest_says() {
    let mut checked = 0;
    for v in vectors().iter().filter(|v| v["valid"] == true) {
        let file = v["file"].as_str().expect("file");
        let bytes = read(file);
        let c = parse(&bytes).unwrap_or_else(|(r, e)| panic!("{file}: parse gave {r:?} {e:?}"));
        verify(&c).unwrap_or_else(|(r, e)| panic!("{file}: verify gave {r:?} {e:?}"));
        let want = &v["decoding"];

        assert_eq!(container_json(&c), *want, "{file}");
        checked += 1;
    }
    assert!(checked >= 20 / SAMPLE, "only {checked} valid vectors");
}

#[test]
fn every_invalid_vector_breaks_its_rule() {
    let mut checked = 0;
    for v in vectors().iter().filter(|v| v["valid"] == false) {
        let file = v["file"].as_str().expect("file");
        let bytes = read(file);
        let (r, e) = match parse(&bytes) {
            Ok(c) => verify(&c).expect_err(file),
            Err(failure) => failure,
        };
        assert_eq!(r, tpack_result::TPACK_RESULT_INVALID_CONTAINER, "{file}");
        assert_eq!(e.result, 1, "{file}");
        assert_eq!(c_str(tpack_rule_id(e.rule)), v["rule"].as_str(), "{file}");
        let mut buf = [0 as std::ffi::c_char; 512];
        // SAFETY: a readable error; a writable buffer of that length.
        assert_eq!(unsafe { tpack_error_message(&e, buf.as_mut_ptr(), buf.len()) }, OK);
        // SAFETY: NUL-terminated by the call.
        let message = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().expect("UTF-8");
        let rule = c_str(tpack_rule_name(e.rule)).expect("name");
        assert!(
            message.starts_with(&format!("{} {rule}: ", v["rule"].as_str().unwrap_or(""))),
            "{file}: {message}"
        );
        checked += 1;
    }
    assert!(checked >= 100 / SAMPLE, "only {checked} invalid vectors");
}

#[test]
fn the_message_is_the_core_display_for_every_rule_the_vectors_break() {
    for v in vectors().iter().filter(|v| v["valid"] == false) {
        let bytes = read(v["file"].as_str().expect("file"));
        let core = match tpack::Container::parse(&bytes) {
            Ok(c) => c.verify().expect_err("invalid"),
            Err(e) => e,
        };
        let (_, e) = match parse(&bytes) {
            Ok(c) => verify(&c).expect_err("invalid"),
            Err(failure) => failure,
        };
        let mut buf = [0 as std::ffi::c_char; 512];
        // SAFETY: as above.
        assert_eq!(unsafe { tpack_error_message(&e, buf.as_mut_ptr(), buf.len()) }, OK);
        // SAFETY: NUL-terminated by the call.
        let message = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().expect("UTF-8");
        assert_eq!(message, core.to_string());
    }
}

#[test]
fn arguments_are_checked_and_outputs_untouched_on_failure() {
    let bytes = read("valid/example.tpack");
    let mut e = MaybeUninit::<tpack_error>::uninit();

    // NULL input, NULL storage.
    let mut c = MaybeUninit::<tpack_container>::uninit();
    // SAFETY: NULL is what is being checked; the other pointers are valid.
    let r = unsafe { tpack_container_parse(std::ptr::null(), 8, c.as_mut_ptr(), e.as_mut_ptr()) };
    assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);
    // SAFETY: written on failure.
    assert_eq!(unsafe { e.assume_init() }.result, 2);
    // SAFETY: as above.
    let r = unsafe {
        tpack_container_parse(bytes.as_ptr(), bytes.len(), std::ptr::null_mut(), std::ptr::null_mut())
    };
    assert_eq!(r, tpack_result::TPACK_RESULT_NULL_ARGUMENT);

    // Misaligned storage is refused and not written.
    let mut raw = vec![0x5au64; TPACK_CONTAINER_SIZE / 8 + 1];
    // SAFETY: in bounds; the pointer is misaligned on purpose, and the call must not write through it.
    let odd = unsafe { raw.as_mut_ptr().cast::<u8>().add(1) }.cast::<tpack_container>();
    // SAFETY: as above.
    let r = unsafe { tpack_container_parse(bytes.as_ptr(), bytes.len(), odd, std::ptr::null_mut()) };
    assert_eq!(r, tpack_result::TPACK_RESULT_MISALIGNED_STORAGE);
    assert!(raw.iter().all(|&w| w == 0x5a));

    // Zeroed storage is no container.
    // SAFETY: all-zero bits are a valid `tpack_container` (plain integers).
    let zeroed: tpack_container = unsafe { std::mem::zeroed() };
    assert_eq!(
        get(&zeroed, tpack_container_entry_count),
        Err(tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE)
    );

    // Out-parameters are left alone on failure, and `out_error` on success.
    let c = parse(&bytes).expect("parse");
    let mut count = 777usize;
    // SAFETY: a filled container; NULL checked.
    assert_eq!(
        unsafe { tpack_container_entry_count(&c, std::ptr::null_mut()) },
        tpack_result::TPACK_RESULT_NULL_ARGUMENT
    );
    // SAFETY: zeroed storage; a writable output.
    assert_eq!(
        unsafe { tpack_container_entry_count(&zeroed, &mut count) },
        tpack_result::TPACK_RESULT_UNINITIALIZED_STORAGE
    );
    assert_eq!(count, 777);
    let mut err = tpack_error {
        result: 0xabab,
        rule: 0,
        entry: 0,
        record: 0,
        position: 0,
        section: 0,
        inner_rule: 0,
        depth: 0,
        outer_entry: 0,
        stored: 0,
        computed: 0,
        offset: 0,
        value: 0,
    };
    // SAFETY: a filled container and a writable error.
    assert_eq!(unsafe { tpack_container_verify(&c, &mut err) }, OK);
    assert_eq!(err.result, 0xabab);

    // Lookups that find nothing.
    let count = get(&c, tpack_container_entry_count).expect("count");
    assert_eq!(get_at(&c, count, tpack_container_entry).err(), Some(tpack_result::TPACK_RESULT_NOT_FOUND));
    let mut entry = MaybeUninit::<tpack_entry>::uninit();
    // SAFETY: the name is 4 readable bytes; the output is writable.
    let r = unsafe { tpack_container_find(&c, c"nope".as_ptr(), 4, entry.as_mut_ptr()) };
    assert_eq!(r, tpack_result::TPACK_RESULT_NOT_FOUND);
    let first = get_at(&c, 0, tpack_container_entry).expect("entry");
    assert_ne!(first.dtype, 19, "example.tpack's first entry is no container");
    assert_eq!(get_at(&c, 0, tpack_container_nested).err(), Some(tpack_result::TPACK_RESULT_WRONG_TYPE));

    // Wrong types.
    let mut v = MaybeUninit::<tpack_meta_value>::uninit();
    // SAFETY: the key is 4 readable bytes; the output is writable.
    assert_eq!(unsafe { tpack_metadata_get(&c, c"arch".as_ptr(), 4, v.as_mut_ptr()) }, OK);
    // SAFETY: filled by the successful call.
    let v = unsafe { v.assume_init() };
    assert_eq!(text(get(&v, tpack_meta_string).expect("string")), "toy-mlp");
    assert_eq!(get(&v, tpack_meta_u64).err(), Some(tpack_result::TPACK_RESULT_WRONG_TYPE));
    assert_eq!(get(&v, tpack_meta_array_len).err(), Some(tpack_result::TPACK_RESULT_WRONG_TYPE));
    assert_eq!(get_at(&v, 0, tpack_meta_string_at).err(), Some(tpack_result::TPACK_RESULT_WRONG_TYPE));

    // Names.
    assert_eq!(c_str(tpack_rule_id(13)), Some("R13"));
    assert_eq!(c_str(tpack_rule_name(13)), Some("HeaderChecksum"));
    assert_eq!(c_str(tpack_rule_id(0)), None);
    assert_eq!(c_str(tpack_rule_id(65)), None);
    for rule in tpack::Rule::ALL {
        assert_eq!(c_str(tpack_rule_id(u32::from(rule.number()))), Some(rule.id()));
        assert_eq!(c_str(tpack_rule_name(u32::from(rule.number()))), Some(rule.name()));
    }
    for d in tpack::Dtype::ALL {
        assert_eq!(c_str(tpack_dtype_name(d.code())), d.name());
    }
    for t in tpack::MetaType::ALL {
        assert_eq!(c_str(tpack_meta_type_name(t.code())), t.name());
    }
    for code in 0..=16u32 {
        assert!(c_str(tpack_result_message(code)).is_some_and(|m| !m.is_empty()));
    }
}

#[test]
fn the_decoder_agrees_with_the_reader_on_every_vector() {
    let mut buffer = vec![0u8; if cfg!(miri) { 1 << 16 } else { 1 << 20 }];
    for v in vectors() {
        let file = v["file"].as_str().expect("file");
        let bytes = read(file);
        let mut d = MaybeUninit::<tpack_decoder>::uninit();
        // SAFETY: writable storage; the buffer outlives the decoder and is not touched meanwhile.
        assert_eq!(
            unsafe {
                tpack_decoder_init(d.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), std::ptr::null_mut())
            },
            OK
        );
        let mut payload = Vec::new();
        let mut stopped = None;
        'feed: for chunk in bytes.chunks(13) {
            let mut rest = chunk;
            loop {
                let (mut used, mut event) = (0usize, MaybeUninit::<tpack_event>::uninit());
                let mut e = MaybeUninit::<tpack_error>::uninit();
                // SAFETY: a filled decoder used by this thread only; `rest` readable; writable outputs.
                let r = unsafe {
                    tpack_decoder_decode(
                        d.as_mut_ptr(),
                        rest.as_ptr(),
                        rest.len(),
                        &mut used,
                        event.as_mut_ptr(),
                        e.as_mut_ptr(),
                    )
                };
                if r != OK {
                    // SAFETY: written on failure.
                    stopped = Some((r, unsafe { e.assume_init() }.rule));
                    break 'feed;
                }
                // SAFETY: written on success.
                let event = unsafe { event.assume_init() };
                if event.kind == tpack_event_kind::TPACK_EVENT_PAYLOAD {
                    payload.extend_from_slice(slice(event.bytes));
                }
                rest = &rest[used..];
                if event.kind == tpack_event_kind::TPACK_EVENT_NONE {
                    break;
                }
            }
        }
        let verdict = stopped.unwrap_or_else(|| {
            let mut e = MaybeUninit::<tpack_error>::uninit();
            // SAFETY: a filled decoder; a writable error.
            let r = unsafe { tpack_decoder_finish(d.as_mut_ptr(), e.as_mut_ptr()) };
            // SAFETY: written on failure.
            (r, if r == OK { 0 } else { unsafe { e.assume_init() }.rule })
        });
        let reader = match parse(&bytes) {
            Ok(c) => verify(&c).map_or_else(|(r, e)| (r, e.rule), |()| (OK, 0)),
            Err((r, e)) => (r, e.rule),
        };
        assert_eq!(verdict, reader, "{file}");
        if v["valid"] == true {
            let c = parse(&bytes).expect("parse");
            let count = get(&c, tpack_container_entry_count).expect("count");
            let want: Vec<u8> = (0..count)
                .flat_map(|i| slice(get_at(&c, i, tpack_container_entry).expect("entry").payload).to_vec())
                .collect();
            assert_eq!(payload, want, "{file}: payload bytes");
        }
    }
}

/// The error the reader gives for `bytes`.
fn core_error(bytes: &[u8]) -> tpack::Error {
    match tpack::Container::parse(bytes) {
        Ok(c) => c.verify().expect_err("invalid"),
        Err(e) => e,
    }
}

/// `core` as `tpack_error` documents its fields, written out here from the header's words (not from the
/// library's code): the rule's number, and each slot of the core's context or its "none" value.
fn documented(core: tpack::Error) -> tpack_error {
    // Slot by slot. The library's `fields_of` destructures the context whole, so a slot the core adds becomes a
    // field of `tpack_error`, and this literal fails to compile until the slot is written out here too.
    let context = core.context();
    let section_number = |s: tpack::format::Section| {
        tpack::format::Section::ALL.iter().position(|x| *x == s).map(|i| u32::try_from(i).expect("small"))
    };
    tpack_error {
        result: 1,
        rule: u32::from(core.rule().number()),
        entry: context.entry.unwrap_or(TPACK_NONE),
        record: context.record.unwrap_or(TPACK_NONE),
        position: context.position.unwrap_or(TPACK_NONE),
        section: context.section.and_then(section_number).unwrap_or(TPACK_NONE),
        inner_rule: context.inner_rule.map_or(0, |r| u32::from(r.number())),
        depth: context.depth.map_or(0, u32::from),
        outer_entry: context.outer_entry.unwrap_or(TPACK_NONE),
        stored: context.stored.unwrap_or(0),
        computed: context.computed.unwrap_or(0),
        offset: context.offset.unwrap_or(TPACK_NONE64),
        value: context.value.unwrap_or(TPACK_NONE64),
    }
}

/// `tpack_error_message`'s text for `e`.
fn message_of(e: &tpack_error) -> String {
    let mut buf = [0 as std::ffi::c_char; 512];
    // SAFETY: a readable error; a writable buffer of that length.
    assert_eq!(unsafe { tpack_error_message(e, buf.as_mut_ptr(), buf.len()) }, OK);
    // SAFETY: NUL-terminated by the call.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().expect("UTF-8").to_owned()
}

#[test]
fn every_error_field_is_the_core_context_and_every_slot_is_filled_by_some_vector() {
    // Which slots of the context some vector fills, in the order of `ErrorContext`'s fields.
    let mut filled = [false; 11];
    for v in vectors().iter().filter(|v| v["valid"] == false) {
        let file = v["file"].as_str().expect("file");
        let bytes = read(file);
        let core = core_error(&bytes);
        let (_, e) = match parse(&bytes) {
            Ok(c) => verify(&c).expect_err(file),
            Err(failure) => failure,
        };
        assert_eq!(e, documented(core), "{file}");
        let c = core.context();
        let slots = [
            c.entry.is_some(),
            c.record.is_some(),
            c.position.is_some(),
            c.offset.is_some(),
            c.section.is_some(),
            c.value.is_some(),
            c.stored.is_some(),
            c.computed.is_some(),
            c.depth.is_some(),
            c.outer_entry.is_some(),
            c.inner_rule.is_some(),
        ];
        for (seen, now) in filled.iter_mut().zip(slots) {
            *seen |= now;
        }
    }
    // Under Miri only a sample of the vectors is read, which need not fill every slot.
    if SAMPLE == 1 {
        assert_eq!(filled, [true; 11], "slots (entry … inner_rule) that no vector fills");
    }
}

#[test]
fn an_error_struct_prints_the_core_message_for_every_rule() {
    // Every rule, with every slot set: the struct prints as the core's error does, also when a field holds
    // all ones (R5's flags may, and `TPACK_NONE64` is spelled the same).
    let full = |value: u64| tpack::ErrorContext {
        entry: Some(3),
        record: Some(4),
        position: Some(5),
        offset: Some(6),
        section: Some(tpack::format::Section::Metadata),
        value: Some(value),
        stored: Some(8),
        computed: Some(9),
        depth: Some(2),
        outer_entry: Some(10),
        inner_rule: Some(tpack::Rule::MetaBool),
    };
    let mut printed = 0;
    for &rule in tpack::Rule::ALL {
        for value in [7, u64::MAX] {
            // `None` when `value` does not fit the rule's field (u64::MAX is no rank).
            if let Some(core) = tpack::Error::from_context(rule, &full(value)) {
                assert_eq!(message_of(&documented(core)), core.to_string(), "{rule}");
                printed += 1;
            }
        }
    }
    assert!(printed > tpack::Rule::ALL.len());
    let all_ones = tpack::Error::UnknownIncompatFlags { flags: u64::MAX };
    assert!(message_of(&documented(all_ones)).contains("0xffffffffffffffff"));
}

#[test]
fn a_struct_that_makes_no_message_prints_the_result_text_alone() {
    // A section number past the six sections, a depth past u8, a signed attribute past the six: the rule's
    // message cannot be printed, and none of it may be left in front of the result code's text (the message
    // is written before it is known to fail).
    let base = documented(tpack::Error::SectionBounds { section: tpack::format::Section::Names });
    let no_section = tpack_error { section: 6, ..base };
    let no_depth = tpack_error {
        rule: 39,
        depth: 256,
        inner_rule: 2,
        ..documented(tpack::Error::NestedInvalid { entry: 1, depth: 1, inner: tpack::Rule::BadMagic })
    };
    let no_attribute = tpack_error {
        value: 6,
        ..documented(tpack::Error::SignatureMeta { attribute: tpack::SignedAttribute::Counter })
    };
    let generic = c_str(tpack_result_message(1)).expect("text");
    for e in [no_section, no_depth, no_attribute] {
        assert_eq!(message_of(&e), generic, "{e:?}");
    }
    // And the same structs with the field in range print the rule's message.
    assert!(message_of(&base).starts_with("R10 SectionBounds: "));
    assert!(message_of(&tpack_error { depth: 3, ..no_depth }).contains("at depth 3: R2 BadMagic"));
    assert!(message_of(&tpack_error { value: 2, ..no_attribute }).ends_with("(tpack.sig.counter)"));
}
