/*
 * The first C test of tpack.h: argument checks, then every vector of spec/vectors.
 *
 *   smoke LIST_FILE VECTORS_DIR
 *
 * LIST_FILE has one vector a line, as capi/tests/run-c.sh makes it from spec/vectors/manifest.json:
 *   V <entries> <metadata records> <file>   a valid vector: parse + verify succeed; walk every entry and value
 *   I <rule id> <file>                      an invalid one: parse or verify fails with that rule
 * Every vector is also push-decoded in small chunks, and the decoder's verdict must be the reader's.
 *
 * Exit status 0 when every check holds; each failure prints one line.
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpack.h"

#include "check.h"

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    /* 64 KiB-aligned, so that payload alignments hold in memory too (the largest the spec allows). */
    size_t size = ((size_t)n + 65535u) / 65536u * 65536u;
    uint8_t *buf = aligned_alloc(65536, size == 0 ? 65536 : size);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* ---- argument checks ---------------------------------------------------------------------------------- */

static void check_arguments(const uint8_t *bytes, size_t len) {
    tpack_container c;
    tpack_error err;
    size_t count = 12345;

    current = "(arguments)";
    /* NULL pointers, with out-parameters left untouched. */
    memset(&err, 0xAB, sizeof err);
    CHECK_RESULT(tpack_container_parse(NULL, len, &c, &err), TPACK_RESULT_NULL_ARGUMENT);
    CHECK(err.result == TPACK_RESULT_NULL_ARGUMENT && err.rule == 0);
    CHECK_RESULT(tpack_container_parse(bytes, len, NULL, NULL), TPACK_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(tpack_container_entry_count(NULL, &count), TPACK_RESULT_NULL_ARGUMENT);
    CHECK(count == 12345);

    /* Zeroed storage is not a container. */
    memset(&c, 0, sizeof c);
    CHECK_RESULT(tpack_container_entry_count(&c, &count), TPACK_RESULT_UNINITIALIZED_STORAGE);
    CHECK(count == 12345);

    /* Misaligned storage, cast from a byte buffer. */
    alignas(8) unsigned char raw[TPACK_CONTAINER_SIZE + 8];
    tpack_container *odd = (tpack_container *)(void *)(raw + 1);
    memset(raw, 0x5A, sizeof raw);
    CHECK_RESULT(tpack_container_parse(bytes, len, odd, NULL), TPACK_RESULT_MISALIGNED_STORAGE);
    CHECK(raw[1] == 0x5A && raw[TPACK_CONTAINER_SIZE] == 0x5A);

    /* A length no object can have. */
    CHECK_RESULT(tpack_container_parse(bytes, (size_t)PTRDIFF_MAX + 1u, &c, NULL), TPACK_RESULT_BAD_ARGUMENT);

    /* Success writes the storage and leaves out_error alone. */
    memset(&err, 0xAB, sizeof err);
    CHECK_RESULT(tpack_container_parse(bytes, len, &c, &err), TPACK_RESULT_OK);
    CHECK(err.result == 0xABABABABu);
    CHECK_RESULT(tpack_container_entry_count(&c, NULL), TPACK_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(tpack_container_entry_count(&c, &count), TPACK_RESULT_OK);

    /* Not found: index and name; the out-parameter stays as it was. */
    tpack_entry e;
    memset(&e, 0x77, sizeof e);
    CHECK_RESULT(tpack_container_entry(&c, count, &e), TPACK_RESULT_NOT_FOUND);
    CHECK_RESULT(tpack_container_find(&c, "no such entry", 13, &e), TPACK_RESULT_NOT_FOUND);
    CHECK_RESULT(tpack_container_find(&c, "\xff", 1, &e), TPACK_RESULT_NOT_FOUND);
    CHECK_RESULT(tpack_container_find(&c, NULL, 0, &e), TPACK_RESULT_NULL_ARGUMENT);
    CHECK(e.position == 0x77777777u);

    /* A metadata value handle is not a container handle, and the other way round. */
    tpack_meta_value v;
    memset(&v, 0, sizeof v);
    uint64_t u = 99;
    CHECK_RESULT(tpack_meta_u64(&v, &u), TPACK_RESULT_UNINITIALIZED_STORAGE);
    CHECK_RESULT(tpack_meta_u64((const tpack_meta_value *)(const void *)&c, &u), TPACK_RESULT_UNINITIALIZED_STORAGE);
    CHECK(u == 99);

    /* The decoder's buffer: NULL, shorter than a header, too small for the stream. */
    tpack_decoder d;
    static uint8_t small[TPACK_DECODER_MIN_BUFFER];
    CHECK_RESULT(tpack_decoder_init(&d, NULL, 4096, NULL), TPACK_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(tpack_decoder_init(&d, small, TPACK_DECODER_MIN_BUFFER - 1, NULL), TPACK_RESULT_SHORT_STORAGE);
    CHECK_RESULT(tpack_decoder_init(&d, small, sizeof small, NULL), TPACK_RESULT_OK);
    size_t used = 0;
    tpack_event ev;
    tpack_result r = TPACK_RESULT_OK;
    size_t at = 0;
    while (at < len && r == TPACK_RESULT_OK) {
        r = tpack_decoder_decode(&d, bytes + at, len - at, &used, &ev, &err);
        if (r == TPACK_RESULT_OK) at += used;
    }
    CHECK(r == TPACK_RESULT_BUFFER_TOO_SMALL);
    CHECK(err.result == TPACK_RESULT_BUFFER_TOO_SMALL && err.value > sizeof small && err.value != TPACK_NONE64);
    uint64_t needed = 0;
    CHECK_RESULT(tpack_decoder_buffer_needed(bytes, len, &needed, NULL), TPACK_RESULT_OK);
    CHECK(needed == err.value);
    CHECK_RESULT(tpack_decoder_finish(&d, NULL), TPACK_RESULT_BUFFER_TOO_SMALL);

    /* Messages: a zero-length buffer is refused; a short one is cut and NUL-terminated. */
    char msg[8];
    memset(msg, 'x', sizeof msg);
    CHECK_RESULT(tpack_error_message(&err, msg, 0), TPACK_RESULT_SHORT_STORAGE);
    CHECK(msg[0] == 'x');
    CHECK_RESULT(tpack_error_message(&err, msg, sizeof msg), TPACK_RESULT_OK);
    CHECK(strlen(msg) == sizeof msg - 1);
    CHECK(strcmp(tpack_result_message(TPACK_RESULT_OK), "success") == 0);
    CHECK(tpack_result_message(9999) != NULL);

    /* Static names. */
    CHECK(strcmp(tpack_rule_id(13), "R13") == 0);
    CHECK(strcmp(tpack_rule_name(13), "HeaderChecksum") == 0);
    CHECK(strcmp(tpack_rule_id(53), "R53") == 0);
    CHECK(tpack_rule_id(0) == NULL && tpack_rule_name(65) == NULL);
    CHECK(strcmp(tpack_dtype_name(2), "F32") == 0);
    CHECK(strcmp(tpack_dtype_name(19), "CONTAINER") == 0);
    CHECK(tpack_dtype_name(0) == NULL);
    CHECK(strcmp(tpack_meta_type_name(10), "string[]") == 0);
    CHECK(strcmp(tpack_meta_type_name(26), "array[]") == 0);
    CHECK(tpack_meta_type_name(0) == NULL);
}

/* ---- walking a valid container ------------------------------------------------------------------------ */

static int within(const void *p, size_t n, const uint8_t *base, size_t len) {
    const uint8_t *q = p;
    return q >= base && q + n <= base + len;
}

/* Reads a value with every accessor its type has, and checks that one accessor of another type refuses it. */
static void walk_value(const tpack_meta_value *v, const uint8_t *base, size_t len, int depth) {
    uint8_t type = 0;
    CHECK_RESULT(tpack_meta_value_type(v, &type), TPACK_RESULT_OK);
    uint64_t u64; int64_t i64; double f64; bool b; uint8_t u8; int8_t i8; uint16_t u16; int16_t i16;
    uint32_t u32; int32_t i32; float f32; tpack_str s; tpack_bytes bytes; size_t n = 0; tpack_le_array arr;
    tpack_result wrong_u64 = tpack_meta_u64(v, &u64);
    CHECK(type == 1 ? wrong_u64 == TPACK_RESULT_OK : wrong_u64 == TPACK_RESULT_WRONG_TYPE);
    int is_array = (type >= 7 && type <= 10) || (type >= 18 && type <= 26);
    tpack_result len_result = tpack_meta_array_len(v, &n);
    CHECK(is_array ? len_result == TPACK_RESULT_OK : len_result == TPACK_RESULT_WRONG_TYPE);
    int numeric = is_array && type != 10 && type != 26;
    tpack_result data_result = tpack_meta_array_data(v, &arr);
    CHECK(numeric ? data_result == TPACK_RESULT_OK : data_result == TPACK_RESULT_WRONG_TYPE);
    if (numeric) {
        CHECK(arr.count == n);
        CHECK(arr.count == 0 || within(arr.data, arr.count * arr.element_size, base, len));
    }
    switch (type) {
    case 2: CHECK_RESULT(tpack_meta_i64(v, &i64), TPACK_RESULT_OK); break;
    case 3: CHECK_RESULT(tpack_meta_f64(v, &f64), TPACK_RESULT_OK); break;
    case 4: CHECK_RESULT(tpack_meta_bool(v, &b), TPACK_RESULT_OK); break;
    case 5:
        CHECK_RESULT(tpack_meta_string(v, &s), TPACK_RESULT_OK);
        CHECK(within(s.data, s.len, base, len));
        break;
    case 6:
        CHECK_RESULT(tpack_meta_bytes(v, &bytes), TPACK_RESULT_OK);
        CHECK(within(bytes.data, bytes.len, base, len));
        break;
    case 11: CHECK_RESULT(tpack_meta_u8(v, &u8), TPACK_RESULT_OK); break;
    case 12: CHECK_RESULT(tpack_meta_i8(v, &i8), TPACK_RESULT_OK); break;
    case 13: CHECK_RESULT(tpack_meta_u16(v, &u16), TPACK_RESULT_OK); break;
    case 14: CHECK_RESULT(tpack_meta_i16(v, &i16), TPACK_RESULT_OK); break;
    case 15: CHECK_RESULT(tpack_meta_u32(v, &u32), TPACK_RESULT_OK); break;
    case 16: CHECK_RESULT(tpack_meta_i32(v, &i32), TPACK_RESULT_OK); break;
    case 17: CHECK_RESULT(tpack_meta_f32(v, &f32), TPACK_RESULT_OK); break;
    default: break;
    }
    for (size_t i = 0; is_array && i <= n; i++) {
        /* One past the end must be NOT_FOUND. */
        tpack_result want = i < n ? TPACK_RESULT_OK : TPACK_RESULT_NOT_FOUND;
        tpack_meta_value item;
        switch (type) {
        case 7:
            CHECK_RESULT(tpack_meta_u64_at(v, i, &u64), want);
            if (i < n) {
                /* The accessor converts from little-endian: the same number as the bytes in place. */
                uint64_t le = 0;
                for (int k = 0; k < 8; k++) le |= (uint64_t)arr.data[8 * i + (size_t)k] << (8 * k);
                CHECK(le == u64);
            }
            break;
        case 8: CHECK_RESULT(tpack_meta_i64_at(v, i, &i64), want); break;
        case 9: CHECK_RESULT(tpack_meta_f64_at(v, i, &f64), want); break;
        case 10:
            CHECK_RESULT(tpack_meta_string_at(v, i, &s), want);
            if (i < n) CHECK(s.len == 0 || within(s.data, s.len, base, len));
            break;
        case 18: CHECK_RESULT(tpack_meta_u8_at(v, i, &u8), want); break;
        case 19: CHECK_RESULT(tpack_meta_i8_at(v, i, &i8), want); break;
        case 20: CHECK_RESULT(tpack_meta_u16_at(v, i, &u16), want); break;
        case 21: CHECK_RESULT(tpack_meta_i16_at(v, i, &i16), want); break;
        case 22: CHECK_RESULT(tpack_meta_u32_at(v, i, &u32), want); break;
        case 23: CHECK_RESULT(tpack_meta_i32_at(v, i, &i32), want); break;
        case 24: CHECK_RESULT(tpack_meta_f32_at(v, i, &f32), want); break;
        case 25: CHECK_RESULT(tpack_meta_bool_at(v, i, &b), want); break;
        case 26:
            CHECK_RESULT(tpack_meta_array_at(v, i, &item), want);
            if (i < n) walk_value(&item, base, len, depth + 1);
            break;
        default: break;
        }
    }
    /* At most 8 levels of array[], the outermost included. */
    CHECK(type != 26 || depth <= 8);
}

static void walk(const tpack_container *c, const uint8_t *base, size_t len, long want_entries, long want_meta,
                 int depth) {
    size_t count = 0, meta = 0;
    CHECK_RESULT(tpack_container_entry_count(c, &count), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_metadata_count(c, &meta), TPACK_RESULT_OK);
    if (want_entries >= 0) CHECK(count == (size_t)want_entries);
    if (want_meta >= 0) CHECK(meta == (size_t)want_meta);
    uint16_t major = 0, minor = 0;
    CHECK_RESULT(tpack_container_version(c, &major, &minor), TPACK_RESULT_OK);
    CHECK(major == 1);
    for (size_t i = 0; i < count; i++) {
        tpack_entry e, by_name;
        CHECK_RESULT(tpack_container_entry(c, i, &e), TPACK_RESULT_OK);
        CHECK(e.position == i);
        CHECK(e.rank <= TPACK_MAX_RANK);
        for (size_t d = e.rank; d < TPACK_MAX_RANK; d++) CHECK(e.dims[d] == 0);
        CHECK(e.name.len >= 1 && within(e.name.data, e.name.len, base, len));
        CHECK(within(e.payload.data, e.payload.len, base, len));
        CHECK(e.alignment >= 1 && (e.alignment & (e.alignment - 1)) == 0);
        CHECK(e.has_target || e.target == 0);
        CHECK_RESULT(tpack_container_find(c, e.name.data, e.name.len, &by_name), TPACK_RESULT_OK);
        CHECK(by_name.position == i && by_name.payload.data == e.payload.data);
        tpack_container nested;
        tpack_result r = tpack_container_nested(c, i, &nested);
        if (e.dtype == 19) {
            CHECK_RESULT(r, TPACK_RESULT_OK);
            if (r == TPACK_RESULT_OK) {
                CHECK_RESULT(tpack_container_verify(&nested, NULL), TPACK_RESULT_OK);
                walk(&nested, base, len, -1, -1, depth + 1);
            }
        } else {
            CHECK_RESULT(r, TPACK_RESULT_WRONG_TYPE);
        }
    }
    for (size_t i = 0; i <= meta; i++) {
        tpack_str key;
        tpack_meta_value v, again;
        tpack_result want = i < meta ? TPACK_RESULT_OK : TPACK_RESULT_NOT_FOUND;
        CHECK_RESULT(tpack_metadata_at(c, i, &key, &v), want);
        if (i == meta) break;
        CHECK(key.len >= 1 && within(key.data, key.len, base, len));
        CHECK_RESULT(tpack_metadata_get(c, key.data, key.len, &again), TPACK_RESULT_OK);
        uint8_t t1 = 0, t2 = 0;
        tpack_meta_value_type(&v, &t1);
        tpack_meta_value_type(&again, &t2);
        CHECK(t1 == t2);
        walk_value(&v, base, len, 1);
    }
    CHECK(depth <= 8);
}

/* ---- the push decoder --------------------------------------------------------------------------------- */

static uint8_t decoder_buffer[1 << 20];

/* Decodes `bytes` in chunks of `step` bytes; the verdict's code, and the rule in *rule. */
static tpack_result decode(const uint8_t *bytes, size_t len, size_t step, uint32_t *rule, uint64_t *payload) {
    tpack_decoder d;
    tpack_error err;
    CHECK_RESULT(tpack_decoder_init(&d, decoder_buffer, sizeof decoder_buffer, NULL), TPACK_RESULT_OK);
    *rule = 0;
    *payload = 0;
    for (size_t at = 0; at < len;) {
        size_t n = len - at < step ? len - at : step;
        const uint8_t *chunk = bytes + at;
        size_t rest = n;
        for (;;) {
            size_t used = 0;
            tpack_event ev;
            tpack_result r = tpack_decoder_decode(&d, chunk, rest, &used, &ev, &err);
            if (r != TPACK_RESULT_OK) {
                *rule = err.rule;
                return r;
            }
            CHECK(used <= rest);
            if (ev.kind == TPACK_EVENT_PAYLOAD) {
                CHECK(ev.bytes.data >= chunk && ev.bytes.data + ev.bytes.len <= chunk + rest);
                *payload += ev.bytes.len;
            }
            chunk += used;
            rest -= used;
            if (ev.kind == TPACK_EVENT_NONE) break;
        }
        at += n;
    }
    uint64_t position = 0;
    CHECK_RESULT(tpack_decoder_position(&d, &position), TPACK_RESULT_OK);
    CHECK(position == len);
    bool doomed = false;
    CHECK_RESULT(tpack_decoder_is_doomed(&d, &doomed), TPACK_RESULT_OK);
    tpack_result r = tpack_decoder_finish(&d, &err);
    if (r != TPACK_RESULT_OK) *rule = err.rule;
    if (r == TPACK_RESULT_OK) CHECK(!doomed);
    CHECK_RESULT(tpack_decoder_finish(&d, NULL), TPACK_RESULT_DECODER_FINISHED);
    return r;
}

/* The callback form: counts events and payload bytes. */
struct seen {
    uint64_t payload;
    int prefix, ends, end;
};

static int32_t on_event(void *user, const tpack_event *ev) {
    struct seen *s = (struct seen *)user;
    switch (ev->kind) {
    case TPACK_EVENT_PREFIX: s->prefix++; break;
    case TPACK_EVENT_PAYLOAD: s->payload += ev->bytes.len; break;
    case TPACK_EVENT_ENTRY_END: s->ends++; break;
    case TPACK_EVENT_END: s->end++; break;
    default: return 99; /* NONE never reaches the callback */
    }
    return 0;
}

static uint8_t resumed_buffer[1 << 20];

/* Decodes `bytes` with tpack_decoder_feed in 5-byte chunks, saving the state half-way and resuming from it in
 * a new handle over a copy of the buffer. Checks the prefix views once the prefix has come. The verdict's code,
 * and the rule in *rule. */
static tpack_result feed_resumed(const uint8_t *bytes, size_t len, uint32_t *rule, uint64_t *payload) {
    static tpack_decoder d, resumed;
    static tpack_decoder_state state;
    tpack_decoder *cur = &d;
    tpack_error err;
    struct seen seen = {0, 0, 0, 0};
    bool prefix_checked = false;
    CHECK_RESULT(tpack_decoder_init(&d, decoder_buffer, sizeof decoder_buffer, NULL), TPACK_RESULT_OK);
    *rule = 0;
    for (size_t at = 0; at < len; at += 5) {
        if (cur == &d && at >= len / 2) {
            CHECK_RESULT(tpack_decoder_save(&d, &state), TPACK_RESULT_OK);
            memcpy(resumed_buffer, decoder_buffer, sizeof decoder_buffer);
            memset(decoder_buffer, 0xEE, sizeof decoder_buffer);
            CHECK_RESULT(tpack_decoder_resume(&resumed, resumed_buffer, sizeof resumed_buffer, &state, NULL), TPACK_RESULT_OK);
            cur = &resumed;
        }
        size_t n = len - at < 5 ? len - at : 5, used = 0;
        tpack_result r = tpack_decoder_feed(cur, bytes + at, n, on_event, &seen, &used, &err);
        if (r != TPACK_RESULT_OK) {
            *rule = err.rule;
            return r;
        }
        CHECK(used == n);
        if (seen.prefix == 1 && !prefix_checked) {
            prefix_checked = true;
            size_t count = 0;
            CHECK_RESULT(tpack_decoder_prefix_entry_count(cur, &count), TPACK_RESULT_OK);
            for (size_t i = 0; i < count; i++) {
                tpack_entry e, found;
                CHECK_RESULT(tpack_decoder_prefix_entry(cur, i, &e), TPACK_RESULT_OK);
                CHECK(e.payload.data != NULL && e.payload.len == 0 && e.position == i && e.rank <= 8);
                CHECK_RESULT(tpack_decoder_prefix_find(cur, e.name.data, e.name.len, &found), TPACK_RESULT_OK);
                CHECK(found.position == i);
            }
            tpack_entry past;
            CHECK_RESULT(tpack_decoder_prefix_entry(cur, count, &past), TPACK_RESULT_NOT_FOUND);
            size_t records = 0;
            CHECK_RESULT(tpack_decoder_prefix_metadata_count(cur, &records), TPACK_RESULT_OK);
            for (size_t i = 0; i < records; i++) {
                tpack_str key;
                tpack_meta_value v, again;
                CHECK_RESULT(tpack_decoder_prefix_metadata_at(cur, i, &key, &v), TPACK_RESULT_OK);
                CHECK_RESULT(tpack_decoder_prefix_metadata_get(cur, key.data, key.len, &again), TPACK_RESULT_OK);
            }
        }
    }
    tpack_result r = tpack_decoder_finish(cur, &err);
    if (r != TPACK_RESULT_OK) *rule = err.rule;
    if (r == TPACK_RESULT_OK) CHECK(seen.prefix == 1 && seen.end == 1);
    *payload = seen.payload;
    return r;
}

/* ---- the panic path ----------------------------------------------------------------------------------- */

/* Hidden, not in tpack.h: panics inside the boundary (capi/src/lib.rs). */
tpack_result tpack_test_panic(tpack_error *out_error);

static void check_panic(void) {
    current = "(panic)";
    tpack_error err;
    fprintf(stderr, "smoke: tpack_test_panic panics on purpose; the Rust panic message that follows is expected\n");
    CHECK_RESULT(tpack_test_panic(&err), TPACK_RESULT_PANIC);
    CHECK(err.result == TPACK_RESULT_PANIC);
    CHECK(strcmp(tpack_result_message(TPACK_RESULT_PANIC), "") != 0);
}

/* ---- the writer --------------------------------------------------------------------------------------- */

static uint8_t written[65536];
static size_t written_len = 0;

static int32_t append(void *user, const uint8_t *bytes, size_t len) {
    (void)user;
    if (written_len + len > sizeof written) return -1;
    memcpy(written + written_len, bytes, len);
    written_len += len;
    return 0;
}

/* The seekable sink: a FILE *, as a C program would write a file. */
static int32_t file_write(void *user, const uint8_t *bytes, size_t len) {
    return fwrite(bytes, 1, len, (FILE *)user) == len ? 0 : -1;
}

static int32_t file_seek(void *user, int64_t offset, int32_t whence, uint64_t *out_position) {
    FILE *f = (FILE *)user;
    int w = whence == TPACK_SEEK_SET ? SEEK_SET : whence == TPACK_SEEK_CUR ? SEEK_CUR : SEEK_END;
    if (fseek(f, (long)offset, w) != 0) return -2;
    long at = ftell(f);
    if (at < 0) return -3;
    *out_position = (uint64_t)at;
    return 0;
}

/* Declares, streams and finishes the same container with either writer; `open_ended` declares "boot"
 * without a length (the seekable writer only). */
static void write_sample(tpack_writer *writer, bool open_ended) {
    tpack_error err;
    const uint64_t dims[2] = {2, 3};
    tpack_entry_decl w = {{"w", 1}, dims, 2, 0, 0, TPACK_DTYPE_U8, false, false};
    tpack_entry_decl boot = {{"boot", 4}, (const uint64_t[]){4}, 1, 0x20000000u, 4, TPACK_DTYPE_RAW, true, open_ended};
    CHECK_RESULT(tpack_writer_declare(writer, &w, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_declare(writer, &boot, &err), TPACK_RESULT_OK);
    const uint8_t layers[8] = {12, 0, 0, 0, 0, 0, 0, 0};
    CHECK_RESULT(tpack_writer_metadata(writer, "layers", 6, TPACK_META_U64, layers, 8, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata(writer, "arch", 4, TPACK_META_STRING, (const uint8_t *)"mlp", 3, &err),
                 TPACK_RESULT_OK);
    /* string[]: each item a uint32_t little-endian length, then its bytes. */
    const uint8_t names[] = {2, 0, 0, 0, 'u', 'p', 4, 0, 0, 0, 'd', 'o', 'w', 'n'};
    CHECK_RESULT(tpack_writer_metadata(writer, "layer.names", 11, TPACK_META_STRING_ARRAY, names, sizeof names, &err), TPACK_RESULT_OK);
    const uint8_t payload[6] = {1, 2, 3, 4, 5, 6};
    CHECK_RESULT(tpack_writer_write(writer, payload, 2, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_write(writer, payload + 2, 4, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_end_entry(writer, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_write(writer, (const uint8_t *)"BOOT", 4, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_end_entry(writer, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_finish(writer, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_finish(writer, &err), TPACK_RESULT_UNINITIALIZED_STORAGE);
}

static tpack_writer writer;
static uint8_t books[4096];

static void check_writer(void) {
    current = "(writer)";
    tpack_error err;
    size_t need = 0;
    CHECK_RESULT(tpack_writer_bookkeeping_size(8, 256, &need), TPACK_RESULT_OK);
    CHECK(need > 0 && need <= sizeof books);
    CHECK_RESULT(tpack_writer_init(&writer, books, need, 8, 256, NULL, NULL, &err), TPACK_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(tpack_writer_init(&writer, NULL, need, 8, 256, append, NULL, &err), TPACK_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(tpack_writer_init(&writer, books, need - 1, 8, 256, append, NULL, &err), TPACK_RESULT_SHORT_STORAGE);
    CHECK(err.value == need);
    CHECK_RESULT(tpack_writer_init(&writer, books, need, 8, 256, append, NULL, &err), TPACK_RESULT_OK);
    write_sample(&writer, false);

    tpack_container c;
    CHECK_RESULT(tpack_container_parse(written, written_len, &c, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_container_verify(&c, &err), TPACK_RESULT_OK);
    tpack_entry e;
    const uint8_t payload[6] = {1, 2, 3, 4, 5, 6};
    CHECK_RESULT(tpack_container_find(&c, "w", 1, &e), TPACK_RESULT_OK);
    CHECK(e.rank == 2 && e.dims[0] == 2 && e.dims[1] == 3 && e.payload.len == 6);
    CHECK(memcmp(e.payload.data, payload, 6) == 0);
    CHECK_RESULT(tpack_container_find(&c, "boot", 4, &e), TPACK_RESULT_OK);
    CHECK(e.has_target && e.target == 0x20000000u && e.alignment == 4 && memcmp(e.payload.data, "BOOT", 4) == 0);
    tpack_meta_value v;
    uint64_t n = 0;
    CHECK_RESULT(tpack_metadata_get(&c, "layers", 6, &v), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_meta_u64(&v, &n), TPACK_RESULT_OK);
    CHECK(n == 12);
    tpack_str item;
    CHECK_RESULT(tpack_metadata_get(&c, "layer.names", 11, &v), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_meta_string_at(&v, 1, &item), TPACK_RESULT_OK);
    CHECK(item.len == 4 && memcmp(item.data, "down", 4) == 0);

    /* The seekable writer, after a preamble, with "boot" open-ended: the same bytes after the preamble. */
    for (int open_ended = 0; open_ended <= 1; open_ended++) {
        FILE *f = tmpfile();
        CHECK(f != NULL);
        if (f == NULL) return;
        CHECK(fwrite("PRE", 1, 3, f) == 3);
        CHECK_RESULT(tpack_writer_init_seekable(&writer, books, need, 8, 256, file_write, NULL, f, &err),
                     TPACK_RESULT_NULL_ARGUMENT);
        CHECK_RESULT(tpack_writer_init_seekable(&writer, books, need, 8, 256, file_write, file_seek, f, &err),
                     TPACK_RESULT_OK);
        write_sample(&writer, open_ended != 0);
        CHECK(ftell(f) == (long)(3 + written_len)); /* left at the container's end */
        static uint8_t back[65536];
        rewind(f);
        CHECK(fread(back, 1, sizeof back, f) == 3 + written_len);
        CHECK(memcmp(back, "PRE", 3) == 0 && memcmp(back + 3, written, written_len) == 0);
        fclose(f);
    }
}

/* ---- the vectors -------------------------------------------------------------------------------------- */

static void check_valid(const char *path, const uint8_t *bytes, size_t len, long entries, long meta) {
    tpack_container c;
    tpack_error err;
    CHECK_RESULT(tpack_container_parse(bytes, len, &c, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_container_verify(&c, &err), TPACK_RESULT_OK);
    walk(&c, bytes, len, entries, meta, 0);
    uint32_t rule = 0;
    uint64_t payload = 0;
    CHECK_RESULT(decode(bytes, len, 7, &rule, &payload), TPACK_RESULT_OK);
    CHECK_RESULT(decode(bytes, len, len == 0 ? 1 : len, &rule, &payload), TPACK_RESULT_OK);
    uint64_t fed = 0;
    CHECK_RESULT(feed_resumed(bytes, len, &rule, &fed), TPACK_RESULT_OK);
    CHECK(fed == payload);
    (void)path;
}

static void check_invalid(const char *path, const uint8_t *bytes, size_t len, const char *rule_id) {
    tpack_container c;
    tpack_error err;
    memset(&err, 0, sizeof err);
    tpack_result r = tpack_container_parse(bytes, len, &c, &err);
    if (r == TPACK_RESULT_OK) {
        r = tpack_container_verify(&c, &err);
    }
    CHECK_RESULT(r, TPACK_RESULT_INVALID_CONTAINER);
    CHECK(err.result == TPACK_RESULT_INVALID_CONTAINER);
    const char *id = tpack_rule_id(err.rule);
    CHECK(id != NULL && strcmp(id, rule_id) == 0);
    char msg[512];
    CHECK_RESULT(tpack_error_message(&err, msg, sizeof msg), TPACK_RESULT_OK);
    /* The core's message starts with the rule id and name: "R13 HeaderChecksum: ...". */
    CHECK(id != NULL && strncmp(msg, id, strlen(id)) == 0 && msg[strlen(id)] == ' ');
    CHECK(strstr(msg, tpack_rule_name(err.rule)) != NULL);
    uint32_t rule = 0;
    uint64_t payload = 0;
    CHECK_RESULT(decode(bytes, len, 7, &rule, &payload), TPACK_RESULT_INVALID_CONTAINER);
    CHECK(rule == err.rule);
    CHECK_RESULT(feed_resumed(bytes, len, &rule, &payload), TPACK_RESULT_INVALID_CONTAINER);
    CHECK(rule == err.rule);
    (void)path;
}

int main(int argc, char **argv) {
    current = "(arguments)";
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIST_FILE VECTORS_DIR\n", argv[0]);
        return 2;
    }
    FILE *list = fopen(argv[1], "r");
    if (!list) {
        perror(argv[1]);
        return 2;
    }
    char line[1024];
    int vectors = 0, args_checked = 0;
    while (fgets(line, sizeof line, list)) {
        char kind = 0, a[256], b[256], file[512];
        char path[1024];
        int fields = sscanf(line, "%c %255s %255s %511s", &kind, a, b, file);
        if (kind == 'I' && fields >= 3) {
            memcpy(file, b, sizeof b);
        } else if (!(kind == 'V' && fields == 4)) {
            fprintf(stderr, "bad list line: %s", line);
            return 2;
        }
        snprintf(path, sizeof path, "%s/%s", argv[2], file);
        size_t len = 0;
        uint8_t *bytes = read_file(path, &len);
        if (!bytes) {
            perror(path);
            return 2;
        }
        current = path;
        if (kind == 'V') {
            if (!args_checked && strstr(file, "example.tpack")) {
                check_arguments(bytes, len);
                args_checked = 1;
                current = path;
            }
            check_valid(path, bytes, len, strtol(a, NULL, 10), strtol(b, NULL, 10));
        } else {
            check_invalid(path, bytes, len, a);
        }
        free(bytes);
        vectors++;
    }
    fclose(list);
    CHECK(args_checked);
    check_writer();
    check_panic();
    printf("smoke: %d vectors, %d checks, %d failures\n", vectors, checks, failures);
    return failures == 0 && vectors > 0 ? 0 : 1;
}
