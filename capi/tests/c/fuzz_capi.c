/*
 * A libFuzzer harness over the C API (tpack.h): arbitrary bytes through the reader and the push decoder.
 *
 * The input is [plan byte][container bytes]. Plan bit 7 set: the header checksum (R13) is recomputed before
 * anything else, so that mutations of the table, names and metadata get past it to the rules behind it (the
 * payload checksums of the trailer are not fixed). The container bytes are
 *   1. parsed into caller storage and verified; the verdict (code, rule and every field of tpack_error) is kept;
 *   2. walked when they parse, verified or not: every entry by position and by name, every nested container
 *      (recursively, itself verified when the outer one is), every metadata record by position and by key, and
 *      every value with every accessor of the API, which must succeed for the value's own type and give
 *      WRONG_TYPE for every other (NOT_FOUND one past the end of an array). Every pointer returned must lie
 *      inside the bytes of the container it came from; a payload must start at the container's first byte plus
 *      its offset; a verified entry's checksum must be the CRC-32 of its payload, computed here;
 *   3. push-decoded in chunks whose sizes come from the plan's low 7 bits p: 0 one chunk, 1..63 chunks of p
 *      bytes, 64..127 chunks of varying size (1 .. p-63 bytes). The payload events of a valid container
 *      must be its entries' payloads, in order, and the decoder's verdict must be the reader's: the same code
 *      and the same tpack_error, or BUFFER_TOO_SMALL for a container the reader rejects, with `needed` above
 *      the buffer given (which is large enough for any container whose lengths are right);
 *   4. verified against a policy (the trusted key: test key 1 of spec/vectors; a signature required when plan
 *      bit 6 is set; counter floor 0) by the reader (tpack_container_verify_authentic) and by the signed push
 *      decoder in the same chunks, whose verdicts must agree; a stream refused from its prefix (R58..R62) must
 *      release no event; when the reader accepts, the lazy path (authenticate, then every entry) must too.
 * Any disagreement aborts with a message, which libFuzzer reports as a crash; so does a TPACK_RESULT_PANIC.
 *
 *   clang -fsanitize=fuzzer,address,undefined -I capi/include capi/tests/c/fuzz_capi.c libtpack.a ...
 *   (capi/tests/fuzz-c.sh builds and runs it)
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpack.h"

#define DTYPE_CONTAINER 19
#define MAX_NESTING_DEPTH 8
#define MAX_ARRAY_DEPTH 8

/* Decoder buffer bytes per input byte, and on top (as fuzz/fuzz_targets/stream.rs): never too small for a
 * container whose lengths are right. */
#define BUFFER_PER_BYTE 20u
#define BUFFER_EXTRA 4096u
/* The filler of the decoder's buffer: not zero, so that a read of a byte the decoder never wrote shows. */
#define FILL 0xA5

#define FAIL(...)                                                                                             \
    do {                                                                                                      \
        fprintf(stderr, "fuzz_capi: %s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                                         \
        fputc('\n', stderr);                                                                                  \
        abort();                                                                                              \
    } while (0)

#define CHECK(cond)                                                                                           \
    do {                                                                                                      \
        if (!(cond)) FAIL("%s", #cond);                                                                       \
    } while (0)

#define CHECK_RESULT(expr, want)                                                                              \
    do {                                                                                                      \
        tpack_result got_ = (expr);                                                                           \
        tpack_result want_ = (want);                                                                          \
        if (got_ != want_)                                                                                    \
            FAIL("%s gave %u (%s), want %u (%s)", #expr, (unsigned)got_, tpack_result_message(got_),          \
                 (unsigned)want_, tpack_result_message(want_));                                               \
    } while (0)

/* ---- helpers ------------------------------------------------------------------------------------------ */

/* The bytes of one container: what pointers read from it must lie in. */
typedef struct {
    const uint8_t *base;
    size_t len;
} span;

static bool within(const void *p, size_t n, span s) {
    const uint8_t *q = p;
    if (q == NULL) return false;
    uintptr_t a = (uintptr_t)q, lo = (uintptr_t)s.base;
    return a >= lo && n <= s.len && a - lo <= s.len - n;
}

/* CRC-32/ISO-HDLC (spec §3.3), bitwise: independent of the library's tables. `c` is the running value:
 * start at 0xFFFFFFFF, and xor the end result with 0xFFFFFFFF. */
static uint32_t crc32_update(uint32_t c, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c;
}

static uint32_t crc32(const uint8_t *p, size_t n) { return crc32_update(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu; }

/* Header fields (spec §3) that the checksum fix-up needs. */
#define HEADER_LEN_1_0 160u
#define HEADER_CRC_AT 52u
#define METADATA_SECTION_AT 104u

static uint64_t le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Writes the right header_crc (spec §3.3) into `b`, when its metadata section ends inside it. */
static void fix_header_crc(uint8_t *b, size_t len) {
    if (len < HEADER_LEN_1_0) return;
    uint64_t offset = le64(b + METADATA_SECTION_AT), length = le64(b + METADATA_SECTION_AT + 8);
    if (offset > len || length > len - offset || offset + length < HEADER_CRC_AT + 4) return;
    uint32_t c = crc32_update(0xFFFFFFFFu, b, HEADER_CRC_AT);
    c = crc32_update(c, b + HEADER_CRC_AT + 4, (size_t)(offset + length) - (HEADER_CRC_AT + 4)) ^ 0xFFFFFFFFu;
    for (int i = 0; i < 4; i++) b[HEADER_CRC_AT + (size_t)i] = (uint8_t)(c >> (8 * i));
}

static bool is_array_type(uint8_t t) { return (t >= 7 && t <= 10) || (t >= 18 && t <= 26); }
static bool is_numeric_array_type(uint8_t t) { return is_array_type(t) && t != 10 && t != 26; }

/* A failure's tpack_error: its message must be the rule's, and every field as the contract says. */
static void check_error(tpack_result r, const tpack_error *err) {
    CHECK(r != TPACK_RESULT_PANIC);
    CHECK(err->result == r);
    char msg[512];
    memset(msg, 'x', sizeof msg);
    CHECK_RESULT(tpack_error_message(err, msg, sizeof msg), TPACK_RESULT_OK);
    CHECK(memchr(msg, 0, sizeof msg) != NULL);
    if (r == TPACK_RESULT_INVALID_CONTAINER) {
        const char *id = tpack_rule_id(err->rule);
        if (id == NULL) FAIL("INVALID_CONTAINER with rule %u, which has no id", (unsigned)err->rule);
        CHECK(tpack_rule_name(err->rule) != NULL);
        CHECK(strncmp(msg, id, strlen(id)) == 0 && msg[strlen(id)] == ' ');
        CHECK((err->rule == 39) == (err->inner_rule != 0));
    } else {
        CHECK(err->rule == 0);
    }
}

static bool same_error(const tpack_error *a, const tpack_error *b) {
    return a->result == b->result && a->rule == b->rule && a->entry == b->entry && a->record == b->record &&
           a->position == b->position && a->section == b->section && a->inner_rule == b->inner_rule &&
           a->depth == b->depth && a->stored == b->stored && a->computed == b->computed &&
           a->offset == b->offset && a->value == b->value;
}

static void print_error(const char *who, tpack_result r, const tpack_error *e) {
    char msg[512] = "";
    if (r != TPACK_RESULT_OK) tpack_error_message(e, msg, sizeof msg);
    fprintf(stderr, "  %s: %u (%s) rule %u entry %u record %u position %u section %u inner %u depth %u "
                    "stored %u computed %u offset %llu value %llu: %s\n",
            who, (unsigned)r, tpack_result_message(r), e->rule, e->entry, e->record, e->position, e->section,
            e->inner_rule, e->depth, e->stored, e->computed, (unsigned long long)e->offset,
            (unsigned long long)e->value, msg);
}

/* ---- every accessor on one value ---------------------------------------------------------------------- */

/* The fixed-width metadata types, one line each: the scalar's type code, the code of the array of it, the name in
 * its accessors (tpack_meta_NAME, tpack_meta_NAME_at) and its C type. */
#define FIXED_WIDTH_TYPES(X)                                                                                  \
    X(1, 7, u64, uint64_t)                                                                                    \
    X(2, 8, i64, int64_t)                                                                                     \
    X(3, 9, f64, double)                                                                                      \
    X(4, 25, bool, bool)                                                                                      \
    X(11, 18, u8, uint8_t)                                                                                    \
    X(12, 19, i8, int8_t)                                                                                     \
    X(13, 20, u16, uint16_t)                                                                                  \
    X(14, 21, i16, int16_t)                                                                                   \
    X(15, 22, u32, uint32_t)                                                                                  \
    X(16, 23, i32, int32_t)                                                                                   \
    X(17, 24, f32, float)

/* Calls every accessor of the API on `v`: the one of its type must succeed, every other must refuse it with
 * WRONG_TYPE, an `_at` one past the end with NOT_FOUND. */
static void walk_value(const tpack_meta_value *v, span s, int depth) {
    uint8_t t = 0;
    CHECK_RESULT(tpack_meta_value_type(v, &t), TPACK_RESULT_OK);
    const bool known = tpack_meta_type_name(t) != NULL;
    const tpack_result wrong = TPACK_RESULT_WRONG_TYPE, ok = TPACK_RESULT_OK;
#define SCALAR(code, array_code, name, type)                                                                  \
    do {                                                                                                      \
        type x_;                                                                                              \
        CHECK_RESULT(tpack_meta_##name(v, &x_), t == (code) ? ok : wrong);                                    \
    } while (0);
    FIXED_WIDTH_TYPES(SCALAR)
#undef SCALAR
    tpack_str str;
    tpack_result r = tpack_meta_string(v, &str);
    CHECK_RESULT(r, t == 5 ? ok : wrong);
    if (r == ok) CHECK(within(str.data, str.len, s));
    tpack_bytes bytes;
    r = tpack_meta_bytes(v, &bytes);
    CHECK_RESULT(r, t == 6 ? ok : wrong);
    if (r == ok) CHECK(within(bytes.data, bytes.len, s));
    r = tpack_meta_unknown_bytes(v, &bytes);
    CHECK_RESULT(r, known ? wrong : ok);
    if (r == ok) CHECK(within(bytes.data, bytes.len, s));

    size_t n = 0;
    CHECK_RESULT(tpack_meta_array_len(v, &n), is_array_type(t) ? ok : wrong);
    tpack_le_array arr;
    r = tpack_meta_array_data(v, &arr);
    CHECK_RESULT(r, is_numeric_array_type(t) ? ok : wrong);
    if (r == ok) {
        CHECK(arr.count == n);
        CHECK(arr.element_size == 1 || arr.element_size == 2 || arr.element_size == 4 || arr.element_size == 8);
        CHECK(arr.count <= s.len / arr.element_size);
        CHECK(within(arr.data, arr.count * arr.element_size, s));
    }

    /* Element accessors: at 0, at the last, one past the end (n = 0 for a value that is no array). */
    size_t probes[3] = {0, n > 0 ? n - 1 : 0, n};
    for (int k = 0; k < 3; k++) {
        size_t i = probes[k];
#define AT(code, array_code, name, type)                                                                      \
    do {                                                                                                      \
        type x_;                                                                                              \
        CHECK_RESULT(tpack_meta_##name##_at(v, i, &x_),                                                       \
                     t != (array_code) ? wrong : i < n ? ok : TPACK_RESULT_NOT_FOUND);                        \
    } while (0);
        FIXED_WIDTH_TYPES(AT)
#undef AT
        r = tpack_meta_string_at(v, i, &str);
        CHECK_RESULT(r, t != 10 ? wrong : i < n ? ok : TPACK_RESULT_NOT_FOUND);
        if (r == ok) CHECK(within(str.data, str.len, s));
        tpack_meta_value item;
        CHECK_RESULT(tpack_meta_array_at(v, i, &item), t != 26 ? wrong : i < n ? ok : TPACK_RESULT_NOT_FOUND);
    }

    /* Every element, and each numeric one against its little-endian bytes in place. */
    for (size_t i = 0; i < n; i++) {
        if (is_numeric_array_type(t)) {
            const uint8_t *p = arr.data + i * arr.element_size;
            uint64_t le = 0;
            for (size_t b = 0; b < arr.element_size; b++) le |= (uint64_t)p[b] << (8 * b);
            uint64_t got = 0;
            switch (t) {
            case 7: { uint64_t x; CHECK_RESULT(tpack_meta_u64_at(v, i, &x), ok); got = x; break; }
            case 8: { int64_t x; CHECK_RESULT(tpack_meta_i64_at(v, i, &x), ok); got = (uint64_t)x; break; }
            case 9: { double x; CHECK_RESULT(tpack_meta_f64_at(v, i, &x), ok); memcpy(&got, &x, 8); break; }
            case 18: { uint8_t x; CHECK_RESULT(tpack_meta_u8_at(v, i, &x), ok); got = x; break; }
            case 19: { int8_t x; CHECK_RESULT(tpack_meta_i8_at(v, i, &x), ok); got = (uint8_t)x; break; }
            case 20: { uint16_t x; CHECK_RESULT(tpack_meta_u16_at(v, i, &x), ok); got = x; break; }
            case 21: { int16_t x; CHECK_RESULT(tpack_meta_i16_at(v, i, &x), ok); got = (uint16_t)x; break; }
            case 22: { uint32_t x; CHECK_RESULT(tpack_meta_u32_at(v, i, &x), ok); got = x; break; }
            case 23: { int32_t x; CHECK_RESULT(tpack_meta_i32_at(v, i, &x), ok); got = (uint32_t)x; break; }
            case 24: {
                float x;
                uint32_t bits;
                CHECK_RESULT(tpack_meta_f32_at(v, i, &x), ok);
                memcpy(&bits, &x, 4);
                got = bits;
                break;
            }
            case 25: {
                bool x;
                CHECK_RESULT(tpack_meta_bool_at(v, i, &x), ok);
                CHECK(le == 0 || le == 1);
                got = x ? 1 : 0;
                break;
            }
            default: FAIL("numeric array type %u", (unsigned)t);
            }
            if (got != le) FAIL("type %u element %zu: %llx, in place %llx", (unsigned)t, i,
                                (unsigned long long)got, (unsigned long long)le);
        } else if (t == 10) {
            CHECK_RESULT(tpack_meta_string_at(v, i, &str), ok);
            CHECK(within(str.data, str.len, s));
        } else if (t == 26) {
            tpack_meta_value item;
            uint8_t item_type = 0;
            CHECK_RESULT(tpack_meta_array_at(v, i, &item), ok);
            CHECK_RESULT(tpack_meta_value_type(&item, &item_type), ok);
            CHECK(is_array_type(item_type));
            CHECK(depth < MAX_ARRAY_DEPTH || item_type != 26);
            walk_value(&item, s, depth + (item_type == 26));
            /* `out_item` may be the value's own storage. */
            tpack_meta_value self = *v;
            CHECK_RESULT(tpack_meta_array_at(&self, i, &self), ok);
            CHECK_RESULT(tpack_meta_value_type(&self, &item_type), ok);
        }
    }
}

/* ---- every entry, nested container and record --------------------------------------------------------- */

static void walk(const tpack_container *c, span s, bool verified, int depth) {
    CHECK(depth <= MAX_NESTING_DEPTH);
    size_t count = 0, meta = 0;
    uint16_t major = 0, minor = 0;
    uint64_t flags = 0;
    CHECK_RESULT(tpack_container_entry_count(c, &count), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_metadata_count(c, &meta), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_container_version(c, &major, &minor), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_container_compat_flags(c, &flags), TPACK_RESULT_OK);
    CHECK(major == 1);
    for (size_t i = 0; i <= count; i++) {
        tpack_entry e, by_name;
        tpack_result r = tpack_container_entry(c, i, &e);
        CHECK_RESULT(r, i < count ? TPACK_RESULT_OK : TPACK_RESULT_NOT_FOUND);
        if (i == count) break;
        CHECK(e.position == i);
        CHECK(e.rank <= TPACK_MAX_RANK);
        for (size_t d = e.rank; d < TPACK_MAX_RANK; d++) CHECK(e.dims[d] == 0);
        CHECK(e.name.len >= 1 && e.name.len <= 1024 && within(e.name.data, e.name.len, s));
        CHECK(e.payload.len == 0 || within(e.payload.data, e.payload.len, s));
        CHECK(e.payload.data != NULL);
        CHECK(e.offset <= s.len && (uintptr_t)e.payload.data - (uintptr_t)s.base == e.offset);
        CHECK(e.alignment >= 1 && e.alignment <= 65536 && (e.alignment & (e.alignment - 1)) == 0);
        CHECK(e.offset % e.alignment == 0);
        CHECK(e.has_target || e.target == 0);
        if (verified) CHECK(crc32(e.payload.data, e.payload.len) == e.checksum);
        CHECK_RESULT(tpack_container_find(c, e.name.data, e.name.len, &by_name), TPACK_RESULT_OK);
        CHECK(by_name.position == i && by_name.payload.data == e.payload.data && by_name.dtype == e.dtype);
        tpack_container nested;
        r = tpack_container_nested(c, i, &nested);
        if (e.dtype == DTYPE_CONTAINER) {
            CHECK_RESULT(r, TPACK_RESULT_OK);
            CHECK(depth < MAX_NESTING_DEPTH);
            tpack_error err;
            tpack_result v = tpack_container_verify(&nested, &err);
            if (verified) CHECK_RESULT(v, TPACK_RESULT_OK);
            if (v != TPACK_RESULT_OK) check_error(v, &err);
            span inner = {e.payload.data, e.payload.len};
            walk(&nested, inner, v == TPACK_RESULT_OK, depth + 1);
        } else {
            CHECK_RESULT(r, TPACK_RESULT_WRONG_TYPE);
        }
    }
    tpack_entry none;
    CHECK_RESULT(tpack_container_find(c, "", 0, &none), TPACK_RESULT_NOT_FOUND);

    tpack_str previous = {NULL, 0};
    for (size_t i = 0; i <= meta; i++) {
        tpack_str key;
        tpack_meta_value v, again;
        tpack_result r = tpack_metadata_at(c, i, &key, &v);
        CHECK_RESULT(r, i < meta ? TPACK_RESULT_OK : TPACK_RESULT_NOT_FOUND);
        if (i == meta) break;
        CHECK(key.len >= 1 && key.len <= 1024 && within(key.data, key.len, s));
        /* Keys are sorted and unique (bytewise, as the index). */
        if (previous.data != NULL) {
            size_t m = previous.len < key.len ? previous.len : key.len;
            int cmp = memcmp(previous.data, key.data, m);
            CHECK(cmp < 0 || (cmp == 0 && previous.len < key.len));
        }
        previous = key;
        CHECK_RESULT(tpack_metadata_get(c, key.data, key.len, &again), TPACK_RESULT_OK);
        uint8_t t1 = 0, t2 = 0;
        CHECK_RESULT(tpack_meta_value_type(&v, &t1), TPACK_RESULT_OK);
        CHECK_RESULT(tpack_meta_value_type(&again, &t2), TPACK_RESULT_OK);
        CHECK(t1 == t2);
        walk_value(&v, s, t1 == 26 ? 1 : 0);
    }
    tpack_meta_value none_value;
    CHECK_RESULT(tpack_metadata_get(c, "", 0, &none_value), TPACK_RESULT_NOT_FOUND);
}

/* ---- the push decoder --------------------------------------------------------------------------------- */

/* The size of chunk `k` for plan byte `plan` (its low 7 bits). */
static size_t chunk_size(uint8_t plan, size_t k, size_t len) {
    size_t p = plan & 0x7Fu;
    if (p == 0) return len;
    if (p < 64) return p;
    return 1 + (k * 7919u + (k >> 3) * 31u) % (p - 63);
}

/* Decodes `bytes` in the chunks `plan` gives; checks the events against `c` (the parsed container, or NULL)
 * and returns the verdict, with the error in *err. */
static tpack_result decode(const uint8_t *bytes, size_t len, uint8_t plan, const tpack_container *c,
                           uint8_t *buffer, size_t buffer_len, tpack_error *err) {
    tpack_decoder d;
    memset(buffer, FILL, buffer_len);
    CHECK_RESULT(tpack_decoder_init(&d, buffer, buffer_len, NULL), TPACK_RESULT_OK);
    bool saw_prefix = false, saw_end = false;
    uint32_t ended = 0;
    uint64_t entry_at = 0; /* bytes of the current entry seen so far */
    size_t at = 0;
    for (size_t k = 0; at < len; k++) {
        size_t n = chunk_size(plan, k, len);
        if (n > len - at) n = len - at;
        const uint8_t *chunk = bytes + at;
        size_t rest = n;
        for (;;) {
            size_t used = 0;
            tpack_event ev;
            memset(&ev, 0x5C, sizeof ev);
            tpack_result r = tpack_decoder_decode(&d, chunk, rest, &used, &ev, err);
            if (r != TPACK_RESULT_OK) {
                check_error(r, err);
                /* Once failed, it stays failed. */
                tpack_error again;
                tpack_result r2 = tpack_decoder_finish(&d, &again);
                CHECK(r2 != TPACK_RESULT_OK && r2 != TPACK_RESULT_PANIC);
                return r;
            }
            CHECK(used <= rest);
            chunk += used;
            rest -= used;
            if (ev.kind == TPACK_EVENT_NONE) {
                CHECK(rest == 0);
                break;
            }
            CHECK(!saw_end);
            switch (ev.kind) {
            case TPACK_EVENT_PREFIX:
                CHECK(!saw_prefix);
                saw_prefix = true;
                break;
            case TPACK_EVENT_PAYLOAD: {
                CHECK(saw_prefix && ev.entry == ended && ev.offset == entry_at);
                CHECK(ev.bytes.len > 0 && ev.bytes.data >= bytes + at && ev.bytes.data + ev.bytes.len <= chunk);
                if (c != NULL) {
                    tpack_entry e;
                    CHECK_RESULT(tpack_container_entry(c, ev.entry, &e), TPACK_RESULT_OK);
                    CHECK(ev.has_target == e.has_target && ev.target == e.target);
                    CHECK(ev.offset <= e.payload.len && ev.bytes.len <= e.payload.len - ev.offset);
                    CHECK(memcmp(ev.bytes.data, e.payload.data + ev.offset, ev.bytes.len) == 0);
                }
                entry_at += ev.bytes.len;
                break;
            }
            case TPACK_EVENT_ENTRY_END:
                CHECK(saw_prefix && ev.entry == ended);
                if (c != NULL) {
                    tpack_entry e;
                    CHECK_RESULT(tpack_container_entry(c, ev.entry, &e), TPACK_RESULT_OK);
                    CHECK(entry_at == e.payload.len);
                }
                ended++;
                entry_at = 0;
                break;
            case TPACK_EVENT_END:
                saw_end = true;
                break;
            default:
                FAIL("event kind %u", (unsigned)ev.kind);
            }
        }
        at += n;
    }
    uint64_t position = 0;
    bool doomed = false;
    CHECK_RESULT(tpack_decoder_position(&d, &position), TPACK_RESULT_OK);
    CHECK(position == len);
    CHECK_RESULT(tpack_decoder_is_doomed(&d, &doomed), TPACK_RESULT_OK);
    tpack_result r = tpack_decoder_finish(&d, err);
    if (r != TPACK_RESULT_OK) check_error(r, err);
    if (r == TPACK_RESULT_OK) {
        size_t count = 0;
        CHECK(!doomed && saw_prefix && saw_end);
        if (c != NULL) {
            CHECK_RESULT(tpack_container_entry_count(c, &count), TPACK_RESULT_OK);
            CHECK(ended == count);
        }
    }
    CHECK_RESULT(tpack_decoder_finish(&d, NULL), TPACK_RESULT_DECODER_FINISHED);
    return r;
}

/* ---- signed: the reader and the signed decoder against one policy -------------------------------------- */

/* Test key 1 of spec/vectors (tests/support/cases/signature.rs): its raw Ed25519 public key. */
static const uint8_t TEST_KEY_1[32] = {
    0x24, 0x1d, 0x42, 0x71, 0x28, 0x4f, 0xe5, 0xf3, 0xf7, 0x0c, 0x05, 0x3f, 0x3d, 0xaf, 0x1b, 0x1b,
    0xd0, 0x04, 0x39, 0xb3, 0x01, 0xd2, 0x62, 0x5b, 0xe8, 0x6e, 0xf2, 0xff, 0xbc, 0x7e, 0x67, 0x23,
};

/* Digests room: 32 bytes for each of this many entries (more is BUFFER_TOO_SMALL, then skipped). */
#define MAX_SIGNED_ENTRIES 256u

/* The signed decoder's verdict over `bytes` in the plan's chunks; *events counts what it released. */
static tpack_result decode_signed(const uint8_t *bytes, size_t len, uint8_t plan, const tpack_policy *policy,
                                  uint8_t *buffer, size_t buffer_len, tpack_error *err, unsigned *events) {
    static tpack_signed_decoder d;
    static uint8_t digests[32 * MAX_SIGNED_ENTRIES];
    memset(buffer, FILL, buffer_len);
    CHECK_RESULT(tpack_signed_decoder_init(&d, buffer, buffer_len, digests, sizeof digests, policy, NULL, NULL),
                 TPACK_RESULT_OK);
    *events = 0;
    size_t at = 0;
    for (size_t k = 0; at < len; k++) {
        size_t n = chunk_size(plan, k, len);
        if (n > len - at) n = len - at;
        const uint8_t *chunk = bytes + at;
        size_t rest = n;
        for (;;) {
            size_t used = 0;
            tpack_event ev;
            tpack_result r = tpack_signed_decoder_decode(&d, chunk, rest, &used, &ev, err);
            if (r != TPACK_RESULT_OK) {
                check_error(r, err);
                return r;
            }
            CHECK(used <= rest);
            chunk += used;
            rest -= used;
            if (ev.kind == TPACK_EVENT_NONE) break;
            ++*events;
        }
        at += n;
    }
    tpack_signer signer;
    tpack_result r = tpack_signed_decoder_finish(&d, &signer, err);
    if (r != TPACK_RESULT_OK) check_error(r, err);
    return r;
}

/* Step 4 of the header comment. `c` is the parsed container (NULL when parse failed, with `parse_error`). */
static void check_signed(const uint8_t *bytes, size_t len, uint8_t plan, const tpack_container *c,
                         tpack_result parsed, const tpack_error *parse_error) {
    tpack_trusted_key key;
    memset(&key, 0, sizeof key);
    key.algorithm = TPACK_ALGORITHM_ED25519;
    key.public_key = TEST_KEY_1;
    key.public_key_len = sizeof TEST_KEY_1;
    CHECK_RESULT(tpack_key_id(TPACK_ALGORITHM_ED25519, TEST_KEY_1, sizeof TEST_KEY_1, NULL, key.key_id),
                 TPACK_RESULT_OK);
    tpack_policy policy = {&key, 1, (plan & 0x40u) != 0, 0, NULL, 0};
    tpack_error want;
    memset(&want, 0, sizeof want);
    tpack_result verdict = parsed;
    if (parsed == TPACK_RESULT_OK) {
        verdict = tpack_container_verify_authentic(c, &policy, NULL, &want);
        if (verdict != TPACK_RESULT_OK) check_error(verdict, &want);
        tpack_authenticated a;
        tpack_error lazy;
        tpack_result r = tpack_container_authenticate(c, &policy, NULL, &a, &lazy);
        if (verdict == TPACK_RESULT_OK) {
            size_t count = 0;
            CHECK_RESULT(r, TPACK_RESULT_OK);
            CHECK_RESULT(tpack_container_entry_count(c, &count), TPACK_RESULT_OK);
            for (size_t i = 0; i < count; i++) {
                tpack_bytes payload;
                CHECK_RESULT(tpack_authenticated_verify_entry(&a, NULL, i, &payload, &lazy), TPACK_RESULT_OK);
            }
        } else if (r != TPACK_RESULT_OK) {
            CHECK(same_error(&want, &lazy)); /* R58..R63: authenticate's verdict is the whole one's */
        }
    } else {
        want = *parse_error;
    }
    size_t buffer_len = len * BUFFER_PER_BYTE + BUFFER_EXTRA;
    uint8_t *buffer = malloc(buffer_len);
    CHECK(buffer != NULL);
    tpack_error got;
    memset(&got, 0, sizeof got);
    unsigned events = 0;
    tpack_result decoded = decode_signed(bytes, len, plan, &policy, buffer, buffer_len, &got, &events);
    free(buffer);
    if (decoded == TPACK_RESULT_BUFFER_TOO_SMALL) return; /* more entries than the digests hold, or a bad length */
    if (decoded == TPACK_RESULT_INVALID_CONTAINER && got.rule >= 58 && got.rule <= 62) CHECK(events == 0);
    if (decoded != verdict || (verdict != TPACK_RESULT_OK && !same_error(&want, &got))) {
        fprintf(stderr, "fuzz_capi: the signed decoder (plan %u) and the authenticated reader disagree on %zu bytes\n",
                (unsigned)plan, len);
        print_error("parse + verify_authentic", verdict, &want);
        print_error("signed decoder", decoded, &got);
        abort();
    }
}

/* ---- the target --------------------------------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const uint8_t plan = data[0];
    const size_t len = size - 1;
    /* A copy of exactly `len` bytes: ASan sees a read past its end (by C code), and the fix-up may write it. */
    uint8_t *bytes = malloc(len == 0 ? 1 : len);
    CHECK(bytes != NULL);
    memcpy(bytes, data + 1, len);
    if (plan & 0x80u) fix_header_crc(bytes, len);
    const span whole = {bytes, len};

    /* The reader's verdict. */
    tpack_container c;
    tpack_error want;
    memset(&want, 0, sizeof want);
    tpack_result parsed = tpack_container_parse(bytes, len, &c, &want);
    tpack_result verdict = parsed;
    if (parsed == TPACK_RESULT_OK) {
        verdict = tpack_container_verify(&c, &want);
        /* Verifying twice gives the same answer, and a copy of the handle is as good as the handle. */
        tpack_container copy = c;
        tpack_error again;
        memset(&again, 0, sizeof again);
        tpack_result second = tpack_container_verify(&copy, &again);
        CHECK(second == verdict && (verdict == TPACK_RESULT_OK || same_error(&want, &again)));
        walk(&copy, whole, verdict == TPACK_RESULT_OK, 0);
    }
    if (verdict != TPACK_RESULT_OK) {
        check_error(verdict, &want);
        CHECK(verdict == TPACK_RESULT_INVALID_CONTAINER);
    }

    /* The decoder's verdict. */
    size_t buffer_len = len * BUFFER_PER_BYTE + BUFFER_EXTRA;
    uint8_t *buffer = malloc(buffer_len);
    CHECK(buffer != NULL);
    tpack_error got;
    memset(&got, 0, sizeof got);
    tpack_result decoded =
        decode(bytes, len, plan, parsed == TPACK_RESULT_OK ? &c : NULL, buffer, buffer_len, &got);
    free(buffer);
    bool agree;
    if (decoded == TPACK_RESULT_BUFFER_TOO_SMALL) {
        agree = verdict != TPACK_RESULT_OK && got.value != TPACK_NONE64 && got.value > buffer_len;
        uint64_t needed = 0;
        if (agree && tpack_decoder_buffer_needed(bytes, len, &needed, NULL) == TPACK_RESULT_OK) agree = needed == got.value;
    } else {
        agree = decoded == verdict && (verdict == TPACK_RESULT_OK || same_error(&want, &got));
    }
    if (!agree) {
        fprintf(stderr, "fuzz_capi: the decoder (plan %u) and parse + verify disagree on %zu bytes\n",
                (unsigned)plan, len);
        print_error("parse + verify", verdict, &want);
        print_error("decoder", decoded, &got);
        abort();
    }
    check_signed(bytes, len, plan, parsed == TPACK_RESULT_OK ? &c : NULL, parsed, &want);
    free(bytes);
    return 0;
}
