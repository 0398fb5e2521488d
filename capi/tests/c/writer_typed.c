/*
 * The writer as a C user writes metadata, gguf style: a typed setter per type, a copy of a value read from
 * another container, NUL-terminated names and keys, empty values as NULL with length 0, the generic
 * numeric-array reader, the final length after finish; and the writer's contracts: every value a container
 * could not hold names the rule it would break, an open-ended entry is refused by the one-pass writer when it
 * is declared; an error two containers down names the outer entry and its depth.
 *
 *   writer_typed FILE...
 *
 * Each FILE is a valid container whose every metadata value is copied into a new container with one call per
 * value (tpack_writer_metadata_copy), which must read back equal, key for key and value for value.
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

/* A refusal that names a rule: INVALID_CONTAINER, with that rule in the error. */
#define CHECK_RULE(expr, err, want_rule)                                                        \
    do {                                                                                        \
        CHECK_RESULT(expr, TPACK_RESULT_INVALID_CONTAINER);                                     \
        CHECK((err).rule == (want_rule));                                                       \
    } while (0)

/* ---- a writer into memory ------------------------------------------------------------------------------ */

/* 64 KiB-aligned output, so that a parsed container's payload alignments hold in memory. */
typedef struct {
    uint8_t *bytes;
    size_t len;
    size_t cap;
} sink;

static int sink_write(void *user, const uint8_t *bytes, size_t len) {
    sink *s = user;
    if (s->len + len > s->cap) return -1;
    memcpy(s->bytes + s->len, bytes, len);
    s->len += len;
    return 0;
}

static void sink_init(sink *s, size_t cap) {
    cap = (cap + 65535u) / 65536u * 65536u;
    s->bytes = aligned_alloc(65536, cap);
    s->len = 0;
    s->cap = s->bytes ? cap : 0;
}

typedef struct {
    alignas(TPACK_WRITER_ALIGN) tpack_writer handle;
    uint8_t *books;
} writer;

static void writer_open(writer *w, sink *s, size_t max_entries, size_t max_bytes) {
    size_t need = 0;
    CHECK_RESULT(tpack_writer_bookkeeping_size(max_entries, max_bytes, &need), TPACK_RESULT_OK);
    w->books = malloc(need);
    tpack_error err;
    CHECK_RESULT(tpack_writer_init(&w->handle, w->books, need, max_entries, max_bytes, sink_write, s, &err),
                 TPACK_RESULT_OK);
}

static void writer_close(writer *w) {
    free(w->books);
    w->books = NULL;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
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

/* ---- equal values ---------------------------------------------------------------------------------------- */

/* Whether two metadata values are the same: type, then bits, item by item (arrays of arrays recursively). */
static bool same_value(const tpack_meta_value *a, const tpack_meta_value *b) {
    uint8_t ta = 0, tb = 0;
    if (tpack_meta_value_type(a, &ta) != TPACK_RESULT_OK || tpack_meta_value_type(b, &tb) != TPACK_RESULT_OK)
        return false;
    if (ta != tb) return false;
    switch (ta) {
    case TPACK_META_U64: case TPACK_META_I64: case TPACK_META_F64: {
        uint64_t x = 0, y = 0; /* read as the type, compared as bits (a NaN equals itself) */
        if (ta == TPACK_META_U64) {
            if (tpack_meta_u64(a, &x) || tpack_meta_u64(b, &y)) return false;
        } else if (ta == TPACK_META_I64) {
            int64_t i, j;
            if (tpack_meta_i64(a, &i) || tpack_meta_i64(b, &j)) return false;
            memcpy(&x, &i, 8);
            memcpy(&y, &j, 8);
        } else {
            double i, j;
            if (tpack_meta_f64(a, &i) || tpack_meta_f64(b, &j)) return false;
            memcpy(&x, &i, 8);
            memcpy(&y, &j, 8);
        }
        return x == y;
    }
    case TPACK_META_BOOL: {
        bool x, y;
        return !tpack_meta_bool(a, &x) && !tpack_meta_bool(b, &y) && x == y;
    }
    case TPACK_META_U8: case TPACK_META_I8: case TPACK_META_U16: case TPACK_META_I16:
    case TPACK_META_U32: case TPACK_META_I32: case TPACK_META_F32: {
        /* every small scalar, through the one accessor that reads them all: a one-element view of none */
        uint32_t x = 0, y = 0;
        switch (ta) {
        case TPACK_META_U8: { uint8_t i, j; if (tpack_meta_u8(a, &i) || tpack_meta_u8(b, &j)) return false; x = i; y = j; break; }
        case TPACK_META_I8: { int8_t i, j; if (tpack_meta_i8(a, &i) || tpack_meta_i8(b, &j)) return false; x = (uint8_t)i; y = (uint8_t)j; break; }
        case TPACK_META_U16: { uint16_t i, j; if (tpack_meta_u16(a, &i) || tpack_meta_u16(b, &j)) return false; x = i; y = j; break; }
        case TPACK_META_I16: { int16_t i, j; if (tpack_meta_i16(a, &i) || tpack_meta_i16(b, &j)) return false; x = (uint16_t)i; y = (uint16_t)j; break; }
        case TPACK_META_U32: { if (tpack_meta_u32(a, &x) || tpack_meta_u32(b, &y)) return false; break; }
        case TPACK_META_I32: { int32_t i, j; if (tpack_meta_i32(a, &i) || tpack_meta_i32(b, &j)) return false; x = (uint32_t)i; y = (uint32_t)j; break; }
        default: { float i, j; if (tpack_meta_f32(a, &i) || tpack_meta_f32(b, &j)) return false; memcpy(&x, &i, 4); memcpy(&y, &j, 4); break; }
        }
        return x == y;
    }
    case TPACK_META_STRING: {
        tpack_str x, y;
        return !tpack_meta_string(a, &x) && !tpack_meta_string(b, &y) && x.len == y.len &&
               memcmp(x.data, y.data, x.len) == 0;
    }
    case TPACK_META_BYTES: {
        tpack_bytes x, y;
        return !tpack_meta_bytes(a, &x) && !tpack_meta_bytes(b, &y) && x.len == y.len &&
               (x.len == 0 || memcmp(x.data, y.data, x.len) == 0);
    }
    case TPACK_META_STRING_ARRAY: case TPACK_META_ARRAY_ARRAY: {
        size_t n = 0, m = 0;
        if (tpack_meta_array_len(a, &n) || tpack_meta_array_len(b, &m) || n != m) return false;
        for (size_t i = 0; i < n; i++) {
            if (ta == TPACK_META_STRING_ARRAY) {
                tpack_str x, y;
                if (tpack_meta_string_at(a, i, &x) || tpack_meta_string_at(b, i, &y)) return false;
                if (x.len != y.len || memcmp(x.data, y.data, x.len) != 0) return false;
            } else {
                tpack_meta_value x, y;
                if (tpack_meta_array_at(a, i, &x) || tpack_meta_array_at(b, i, &y)) return false;
                if (!same_value(&x, &y)) return false;
            }
        }
        return true;
    }
    default: { /* the numeric and bool[] arrays, in place */
        tpack_le_array x, y;
        if (tpack_meta_array_data(a, &x) || tpack_meta_array_data(b, &y)) return false;
        return x.count == y.count && x.element_size == y.element_size &&
               (x.count == 0 || memcmp(x.data, y.data, x.count * x.element_size) == 0);
    }
    }
}

/* ---- the done-when check: a container's metadata copied with one call per value -------------------------- */

static void copy_all(const char *path) {
    current = path;
    size_t len = 0;
    uint8_t *bytes = read_file(path, &len);
    CHECK(bytes != NULL);
    if (!bytes) return;
    tpack_container from;
    tpack_error err;
    CHECK_RESULT(tpack_container_parse(bytes, len, &from, &err), TPACK_RESULT_OK);
    size_t count = 0;
    CHECK_RESULT(tpack_metadata_count(&from, &count), TPACK_RESULT_OK);

    sink s;
    sink_init(&s, len + 65536);
    writer w;
    writer_open(&w, &s, count + 1, len + 1024);
    for (size_t i = 0; i < count; i++) {
        tpack_str key;
        tpack_meta_value value;
        CHECK_RESULT(tpack_metadata_at(&from, i, &key, &value), TPACK_RESULT_OK);
        /* the one call per value */
        CHECK_RESULT(tpack_writer_metadata_copy(&w.handle, key.data, key.len, &value, &err), TPACK_RESULT_OK);
    }
    CHECK_RESULT(tpack_writer_finish(&w.handle, &err), TPACK_RESULT_OK);
    uint64_t written = 0;
    CHECK_RESULT(tpack_writer_length(&w.handle, &written), TPACK_RESULT_OK);
    CHECK(written == s.len);
    writer_close(&w);

    tpack_container to;
    CHECK_RESULT(tpack_container_parse(s.bytes, s.len, &to, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_container_verify(&to, &err), TPACK_RESULT_OK);
    size_t copied = 0;
    CHECK_RESULT(tpack_metadata_count(&to, &copied), TPACK_RESULT_OK);
    CHECK(copied == count);
    for (size_t i = 0; i < count && i < copied; i++) {
        tpack_str k1, k2;
        tpack_meta_value v1, v2;
        CHECK_RESULT(tpack_metadata_at(&from, i, &k1, &v1), TPACK_RESULT_OK);
        CHECK_RESULT(tpack_metadata_at(&to, i, &k2, &v2), TPACK_RESULT_OK);
        CHECK(k1.len == k2.len && memcmp(k1.data, k2.data, k1.len) == 0);
        CHECK(same_value(&v1, &v2));
    }
    printf("%s: %zu metadata values copied, %zu calls, read back equal\n", path, count, count);
    free(s.bytes);
    free(bytes);
}

/* ---- every typed setter, read back ------------------------------------------------------------------------ */

static void typed_setters(void) {
    current = "(typed setters)";
    sink s;
    sink_init(&s, 65536);
    writer w;
    writer_open(&w, &s, 64, 4096); /* room for 64 entries and 64 metadata values */
    tpack_writer *h = &w.handle;
    tpack_error err;

    /* Keys NUL-terminated throughout; one with a length, to show both. */
    CHECK_RESULT(tpack_writer_metadata_u8(h, "u8", TPACK_NUL_TERMINATED, 200, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_i8(h, "i8", TPACK_NUL_TERMINATED, -100, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_u16(h, "u16", TPACK_NUL_TERMINATED, 60000, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_i16(h, "i16", TPACK_NUL_TERMINATED, -30000, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_u32(h, "u32", TPACK_NUL_TERMINATED, 4000000000u, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_i32(h, "i32", TPACK_NUL_TERMINATED, -2000000000, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_u64(h, "u64xx", 3, UINT64_MAX, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_i64(h, "i64", TPACK_NUL_TERMINATED, INT64_MIN, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_f32(h, "f32", TPACK_NUL_TERMINATED, 1.5f, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_f64(h, "f64", TPACK_NUL_TERMINATED, -0.25, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_bool(h, "bool", TPACK_NUL_TERMINATED, true, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_string(h, "arch", TPACK_NUL_TERMINATED, "mlp", TPACK_NUL_TERMINATED, &err),
                 TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_string(h, "empty.string", TPACK_NUL_TERMINATED, NULL, 0, &err), TPACK_RESULT_OK);
    static const uint8_t blob[] = {0, 1, 2, 255};
    CHECK_RESULT(tpack_writer_metadata_bytes(h, "bytes", TPACK_NUL_TERMINATED, blob, sizeof blob, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_bytes(h, "empty.bytes", TPACK_NUL_TERMINATED, NULL, 0, &err), TPACK_RESULT_OK);

    static const uint8_t u8s[] = {1, 2, 250};
    static const int8_t i8s[] = {-1, 2, -128};
    static const uint16_t u16s[] = {1, 65535};
    static const int16_t i16s[] = {-300, 300, -32768};
    static const uint32_t u32s[] = {7, 4000000000u};
    static const int32_t i32s[] = {-7, 2000000000};
    static const uint64_t u64s[] = {1, UINT64_MAX};
    static const int64_t i64s[] = {INT64_MIN, 5};
    static const float f32s[] = {0.5f, -2.0f, 1e30f};
    static const double f64s[] = {1.0 / 3.0, -1e300};
    static const bool bools[] = {true, false, true};
    static const char *const names[] = {"up", "down", "", "ünï"};
    CHECK_RESULT(tpack_writer_metadata_u8_array(h, "a.u8", TPACK_NUL_TERMINATED, u8s, 3, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_i8_array(h, "a.i8", TPACK_NUL_TERMINATED, i8s, 3, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_u16_array(h, "a.u16", TPACK_NUL_TERMINATED, u16s, 2, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_i16_array(h, "a.i16", TPACK_NUL_TERMINATED, i16s, 3, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_u32_array(h, "a.u32", TPACK_NUL_TERMINATED, u32s, 2, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_i32_array(h, "a.i32", TPACK_NUL_TERMINATED, i32s, 2, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_u64_array(h, "a.u64", TPACK_NUL_TERMINATED, u64s, 2, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_i64_array(h, "a.i64", TPACK_NUL_TERMINATED, i64s, 2, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_f32_array(h, "a.f32", TPACK_NUL_TERMINATED, f32s, 3, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_f64_array(h, "a.f64", TPACK_NUL_TERMINATED, f64s, 2, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_bool_array(h, "a.bool", TPACK_NUL_TERMINATED, bools, 3, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_string_array(h, "a.str", TPACK_NUL_TERMINATED, names, 4, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_f32_array(h, "a.empty", TPACK_NUL_TERMINATED, NULL, 0, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_metadata_string_array(h, "a.nostr", TPACK_NUL_TERMINATED, NULL, 0, &err), TPACK_RESULT_OK);

    /* An entry named NUL-terminated; an empty chunk as NULL with length 0. */
    tpack_entry_decl d = {{"w", TPACK_NUL_TERMINATED}, (const uint64_t[]){2}, 1, 0, 0, TPACK_DTYPE_U8, false, false};
    CHECK_RESULT(tpack_writer_declare(h, &d, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_write(h, NULL, 0, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_write(h, (const uint8_t[]){9, 8}, 2, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_end_entry(h, &err), TPACK_RESULT_OK);

    /* The final length: known only after finish. */
    uint64_t length = 0;
    CHECK_RESULT(tpack_writer_length(h, &length), TPACK_RESULT_WRITER_MISUSE);
    CHECK_RESULT(tpack_writer_finish(h, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_length(h, &length), TPACK_RESULT_OK);
    CHECK(length == s.len);
    CHECK_RESULT(tpack_writer_write(h, NULL, 0, &err), TPACK_RESULT_UNINITIALIZED_STORAGE);
    writer_close(&w);

    /* Read back. */
    tpack_container c;
    CHECK_RESULT(tpack_container_parse(s.bytes, s.len, &c, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_container_verify(&c, &err), TPACK_RESULT_OK);
    tpack_entry e;
    CHECK_RESULT(tpack_container_find(&c, "w", TPACK_NUL_TERMINATED, &e), TPACK_RESULT_OK);
    tpack_meta_value v;
#define GET(key) CHECK_RESULT(tpack_metadata_get(&c, key, TPACK_NUL_TERMINATED, &v), TPACK_RESULT_OK)
    { uint8_t x = 0; GET("u8"); CHECK_RESULT(tpack_meta_u8(&v, &x), TPACK_RESULT_OK); CHECK(x == 200); }
    { int8_t x = 0; GET("i8"); CHECK_RESULT(tpack_meta_i8(&v, &x), TPACK_RESULT_OK); CHECK(x == -100); }
    { uint16_t x = 0; GET("u16"); CHECK_RESULT(tpack_meta_u16(&v, &x), TPACK_RESULT_OK); CHECK(x == 60000); }
    { int16_t x = 0; GET("i16"); CHECK_RESULT(tpack_meta_i16(&v, &x), TPACK_RESULT_OK); CHECK(x == -30000); }
    { uint32_t x = 0; GET("u32"); CHECK_RESULT(tpack_meta_u32(&v, &x), TPACK_RESULT_OK); CHECK(x == 4000000000u); }
    { int32_t x = 0; GET("i32"); CHECK_RESULT(tpack_meta_i32(&v, &x), TPACK_RESULT_OK); CHECK(x == -2000000000); }
    { uint64_t x = 0; GET("u64"); CHECK_RESULT(tpack_meta_u64(&v, &x), TPACK_RESULT_OK); CHECK(x == UINT64_MAX); }
    { int64_t x = 0; GET("i64"); CHECK_RESULT(tpack_meta_i64(&v, &x), TPACK_RESULT_OK); CHECK(x == INT64_MIN); }
    { float x = 0; GET("f32"); CHECK_RESULT(tpack_meta_f32(&v, &x), TPACK_RESULT_OK); CHECK(x == 1.5f); }
    { double x = 0; GET("f64"); CHECK_RESULT(tpack_meta_f64(&v, &x), TPACK_RESULT_OK); CHECK(x == -0.25); }
    { bool x = false; GET("bool"); CHECK_RESULT(tpack_meta_bool(&v, &x), TPACK_RESULT_OK); CHECK(x); }
    { tpack_str x; GET("arch"); CHECK_RESULT(tpack_meta_string(&v, &x), TPACK_RESULT_OK); CHECK(x.len == 3 && memcmp(x.data, "mlp", 3) == 0); }
    { tpack_str x; GET("empty.string"); CHECK_RESULT(tpack_meta_string(&v, &x), TPACK_RESULT_OK); CHECK(x.len == 0); }
    { tpack_bytes x; GET("bytes"); CHECK_RESULT(tpack_meta_bytes(&v, &x), TPACK_RESULT_OK); CHECK(x.len == 4 && memcmp(x.data, blob, 4) == 0); }
    { tpack_bytes x; GET("empty.bytes"); CHECK_RESULT(tpack_meta_bytes(&v, &x), TPACK_RESULT_OK); CHECK(x.len == 0); }
    { size_t n = 9; GET("a.empty"); CHECK_RESULT(tpack_meta_array_len(&v, &n), TPACK_RESULT_OK); CHECK(n == 0); }
    { size_t n = 9; GET("a.nostr"); CHECK_RESULT(tpack_meta_array_len(&v, &n), TPACK_RESULT_OK); CHECK(n == 0); }
    {
        GET("a.str");
        size_t n = 0;
        CHECK_RESULT(tpack_meta_array_len(&v, &n), TPACK_RESULT_OK);
        CHECK(n == 4);
        for (size_t i = 0; i < n && i < 4; i++) {
            tpack_str x;
            CHECK_RESULT(tpack_meta_string_at(&v, i, &x), TPACK_RESULT_OK);
            CHECK(x.len == strlen(names[i]) && memcmp(x.data, names[i], x.len) == 0);
        }
    }

    /* Every numeric array read back through the one generic reader, as its own type. */
    size_t got = 0;
    { uint8_t x[3]; GET("a.u8"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_U8, x, &got), TPACK_RESULT_OK); CHECK(got == 3 && memcmp(x, u8s, sizeof x) == 0); }
    { int8_t x[3]; GET("a.i8"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_I8, x, &got), TPACK_RESULT_OK); CHECK(got == 3 && memcmp(x, i8s, sizeof x) == 0); }
    { uint16_t x[2]; GET("a.u16"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_U16, x, &got), TPACK_RESULT_OK); CHECK(got == 2 && memcmp(x, u16s, sizeof x) == 0); }
    { int16_t x[3]; GET("a.i16"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_I16, x, &got), TPACK_RESULT_OK); CHECK(got == 3 && memcmp(x, i16s, sizeof x) == 0); }
    { uint32_t x[2]; GET("a.u32"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_U32, x, &got), TPACK_RESULT_OK); CHECK(got == 2 && memcmp(x, u32s, sizeof x) == 0); }
    { int32_t x[2]; GET("a.i32"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_I32, x, &got), TPACK_RESULT_OK); CHECK(got == 2 && memcmp(x, i32s, sizeof x) == 0); }
    { uint64_t x[2]; GET("a.u64"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_U64, x, &got), TPACK_RESULT_OK); CHECK(got == 2 && memcmp(x, u64s, sizeof x) == 0); }
    { int64_t x[2]; GET("a.i64"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_I64, x, &got), TPACK_RESULT_OK); CHECK(got == 2 && memcmp(x, i64s, sizeof x) == 0); }
    { float x[3]; GET("a.f32"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_F32, x, &got), TPACK_RESULT_OK); CHECK(got == 3 && memcmp(x, f32s, sizeof x) == 0); }
    { double x[2]; GET("a.f64"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_F64, x, &got), TPACK_RESULT_OK); CHECK(got == 2 && memcmp(x, f64s, sizeof x) == 0); }
    { bool x[3]; GET("a.bool"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_BOOL, x, &got), TPACK_RESULT_OK); CHECK(got == 3 && x[0] && !x[1] && x[2]); }

    /* Widening conversions, a window, the end. */
    { uint32_t x[3]; GET("a.u8"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_U32, x, &got), TPACK_RESULT_OK); CHECK(got == 3 && x[0] == 1 && x[2] == 250); }
    { int16_t x[3]; GET("a.u8"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_I16, x, &got), TPACK_RESULT_OK); CHECK(got == 3 && x[2] == 250); }
    { float x[3]; GET("a.i16"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_F32, x, &got), TPACK_RESULT_OK); CHECK(got == 3 && x[0] == -300.0f && x[2] == -32768.0f); }
    { double x[3]; GET("a.f32"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_F64, x, &got), TPACK_RESULT_OK); CHECK(got == 3 && x[1] == -2.0 && x[2] == (double)1e30f); }
    { double x[2]; GET("a.i32"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_F64, x, &got), TPACK_RESULT_OK); CHECK(got == 2 && x[1] == 2000000000.0); }
    { int64_t x[4] = {0}; GET("a.i8"); CHECK_RESULT(tpack_meta_array_read(&v, 1, 4, TPACK_META_I64, x, &got), TPACK_RESULT_OK); CHECK(got == 2 && x[0] == 2 && x[1] == -128); }
    { uint8_t x[1]; GET("a.u8"); CHECK_RESULT(tpack_meta_array_read(&v, 3, 1, TPACK_META_U8, x, &got), TPACK_RESULT_OK); CHECK(got == 0); }
    { uint8_t x[1]; got = 77; GET("a.u8"); CHECK_RESULT(tpack_meta_array_read(&v, 4, 1, TPACK_META_U8, x, &got), TPACK_RESULT_NOT_FOUND); CHECK(got == 77); }
    { GET("a.empty"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 0, TPACK_META_F32, NULL, &got), TPACK_RESULT_OK); CHECK(got == 0); }
    /* Conversions that could lose a value, and values that are not numeric arrays: refused, nothing written. */
    {
        uint8_t x[3] = {42, 42, 42};
        got = 77;
        GET("a.u16"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_U8, x, &got), TPACK_RESULT_WRONG_TYPE);
        GET("a.i8"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_U8, x, &got), TPACK_RESULT_WRONG_TYPE);
        GET("a.f32"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 3, TPACK_META_I32, x, &got), TPACK_RESULT_WRONG_TYPE);
        GET("a.u32"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_F32, x, &got), TPACK_RESULT_WRONG_TYPE);
        GET("a.f64"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 2, TPACK_META_F32, x, &got), TPACK_RESULT_WRONG_TYPE);
        GET("a.str"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 1, TPACK_META_U8, x, &got), TPACK_RESULT_WRONG_TYPE);
        GET("u8"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 1, TPACK_META_U8, x, &got), TPACK_RESULT_WRONG_TYPE);
        GET("a.u8"); CHECK_RESULT(tpack_meta_array_read(&v, 0, 1, TPACK_META_STRING, x, &got), TPACK_RESULT_BAD_ARGUMENT);
        CHECK(got == 77 && x[0] == 42 && x[1] == 42 && x[2] == 42);
    }
    /* The comparison the copy check relies on tells values apart. */
    {
        tpack_meta_value a, b;
        CHECK_RESULT(tpack_metadata_get(&c, "a.u8", TPACK_NUL_TERMINATED, &a), TPACK_RESULT_OK);
        CHECK_RESULT(tpack_metadata_get(&c, "a.i8", TPACK_NUL_TERMINATED, &b), TPACK_RESULT_OK);
        CHECK(same_value(&a, &a) && !same_value(&a, &b));
        CHECK_RESULT(tpack_metadata_get(&c, "empty.string", TPACK_NUL_TERMINATED, &a), TPACK_RESULT_OK);
        CHECK_RESULT(tpack_metadata_get(&c, "arch", TPACK_NUL_TERMINATED, &b), TPACK_RESULT_OK);
        CHECK(!same_value(&a, &b));
    }
#undef GET
    free(s.bytes);
}

/* ---- the contracts ----------------------------------------------------------------------------------------- */

static void contracts(void) {
    current = "(writer contracts)";
    sink s;
    sink_init(&s, 65536);
    writer w;
    writer_open(&w, &s, 4, 4096);
    tpack_writer *h = &w.handle;
    tpack_error err;

    /* Values a container could not hold name the rule a reader would name, with the record (declaration
     * order); they are refused before the writer sees them, so it goes on. */
    memset(&err, 0, sizeof err);
    CHECK_RULE(tpack_writer_metadata(h, "b", 1, TPACK_META_BOOL, (const uint8_t[]){2}, 1, &err), err, 48);
    CHECK(err.record == 0);
    CHECK_RULE(tpack_writer_metadata(h, "\xff", 1, TPACK_META_U64, (const uint8_t[8]){0}, 8, &err), err, 43);
    static const uint8_t cut[] = {5, 0, 0, 0, 'a'}; /* a string[] item of 5 bytes holding 1 */
    CHECK_RULE(tpack_writer_metadata(h, "s", 1, TPACK_META_STRING_ARRAY, cut, sizeof cut, &err), err, 47);
    CHECK_RULE(tpack_writer_metadata(h, "t", 1, 99, NULL, 0, &err), err, 46);
    CHECK(err.value == 99);
    CHECK_RULE(tpack_writer_metadata_string(h, "s", 1, "\xc3", 1, &err), err, 49);
    static const char *const bad_items[] = {"ok", "\xe2\x82"};
    CHECK_RULE(tpack_writer_metadata_string_array(h, "s", 1, bad_items, 2, &err), err, 49);
    const uint8_t two = 2;
    bool bad_bools[2];
    memcpy(&bad_bools[0], &(const uint8_t){1}, 1);
    memcpy(&bad_bools[1], &two, 1); /* a byte no C bool holds, as a byte buffer cast to bool * can */
    CHECK_RULE(tpack_writer_metadata_bool_array(h, "b", 1, bad_bools, 2, &err), err, 48);
    static const char *const null_item[] = {"ok", NULL};
    CHECK_RESULT(tpack_writer_metadata_string_array(h, "s", 1, null_item, 2, &err), TPACK_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(tpack_writer_metadata_f32_array(h, "f", 1, NULL, 1, &err), TPACK_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(tpack_writer_metadata_u32(h, "fine", TPACK_NUL_TERMINATED, 1, &err), TPACK_RESULT_OK);

    /* An entry: a name that is not UTF-8 (R18) and rank 9 (R23), with the entry's index. */
    static const uint64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    tpack_entry_decl bad_name = {{"\xfe", 1}, dims, 1, 0, 0, TPACK_DTYPE_U8, false, false};
    CHECK_RULE(tpack_writer_declare(h, &bad_name, &err), err, 18);
    CHECK(err.entry == 0);
    tpack_entry_decl rank9 = {{"r", 1}, dims, 9, 0, 0, TPACK_DTYPE_U8, false, false};
    CHECK_RULE(tpack_writer_declare(h, &rank9, &err), err, 23);
    CHECK(err.entry == 0 && err.value == 9);
    tpack_entry_decl ok = {{"ok", 2}, dims, 1, 0, 0, TPACK_DTYPE_U8, false, false};
    CHECK_RESULT(tpack_writer_declare(h, &ok, &err), TPACK_RESULT_OK);

    /* An open-ended entry and the one-pass writer: refused when declared, with the entry, nothing written. */
    tpack_entry_decl open = {{"code", 4}, NULL, 0, 0, 0, TPACK_DTYPE_RAW, false, true};
    CHECK_RESULT(tpack_writer_declare(h, &open, &err), TPACK_RESULT_WRITER_MISUSE);
    CHECK(err.entry == 1 && err.rule == 0);
    CHECK(s.len == 0);
    CHECK_RESULT(tpack_writer_write(h, (const uint8_t[]){1}, 1, &err), TPACK_RESULT_WRITER_POISONED);
    writer_close(&w);

    /* A failing finish empties the storage: no length then. */
    s.len = 0;
    writer_open(&w, &s, 4, 4096);
    CHECK_RESULT(tpack_writer_declare(h, &ok, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_writer_finish(h, &err), TPACK_RESULT_WRITER_MISUSE);
    uint64_t length = 0;
    CHECK_RESULT(tpack_writer_length(h, &length), TPACK_RESULT_UNINITIALIZED_STORAGE);
    CHECK_RESULT(tpack_writer_length(h, NULL), TPACK_RESULT_NULL_ARGUMENT);
    writer_close(&w);
    free(s.bytes);
}

/* ---- errors inside nested containers ------------------------------------------------------------------- */

/* A container of the given one-dimensional entries, written as it is (a CONTAINER payload is not checked). */
static void write_entries(sink *s, size_t n, const char *const names[], const uint16_t dtypes[],
                          const uint8_t *const payloads[], const size_t lens[]) {
    writer w;
    tpack_error err;
    writer_open(&w, s, 8, 1024);
    for (size_t i = 0; i < n; i++) {
        uint64_t dim = lens[i];
        tpack_entry_decl d = {{names[i], TPACK_NUL_TERMINATED}, &dim, 1, 0, 0, dtypes[i], false, false};
        CHECK_RESULT(tpack_writer_declare(&w.handle, &d, &err), TPACK_RESULT_OK);
    }
    for (size_t i = 0; i < n; i++) {
        CHECK_RESULT(tpack_writer_write(&w.handle, payloads[i], lens[i], &err), TPACK_RESULT_OK);
        CHECK_RESULT(tpack_writer_end_entry(&w.handle, &err), TPACK_RESULT_OK);
    }
    CHECK_RESULT(tpack_writer_finish(&w.handle, &err), TPACK_RESULT_OK);
    writer_close(&w);
}

static void nested_errors(void) {
    current = "(nested errors)";
    /* Entry 1 of the inner container holds 3 bytes as a container (R1 at depth 2); the inner container is the
     * outer one's entry 2. */
    sink inner, outer;
    sink_init(&inner, 65536);
    sink_init(&outer, 65536);
    static const uint8_t one = 1;
    write_entries(&inner, 2, (const char *const[]){"pad", "bad"}, (const uint16_t[]){TPACK_DTYPE_U8, TPACK_DTYPE_CONTAINER},
                  (const uint8_t *const[]){&one, (const uint8_t *)"abc"}, (const size_t[]){1, 3});
    write_entries(&outer, 3, (const char *const[]){"a", "b", "inner"},
                  (const uint16_t[]){TPACK_DTYPE_U8, TPACK_DTYPE_U8, TPACK_DTYPE_CONTAINER},
                  (const uint8_t *const[]){&one, &one, inner.bytes}, (const size_t[]){1, 1, inner.len});
    tpack_container c;
    tpack_error err;
    CHECK_RULE(tpack_container_parse(outer.bytes, outer.len, &c, &err), err, 39);
    CHECK(err.entry == 2 && err.depth == 2 && err.inner_rule == 1);
    free(inner.bytes);
    free(outer.bytes);
}

int main(int argc, char **argv) {
    current = "(typed setters)";
    typed_setters();
    contracts();
    nested_errors();
    for (int i = 1; i < argc; i++) copy_all(argv[i]);
    if (failures) {
        fprintf(stderr, "writer_typed: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("writer_typed: %d checks passed\n", checks);
    return 0;
}
