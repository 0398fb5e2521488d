/*
 * Errors inside nested containers say where they are (issue 24, item 3): a payload damaged two containers down
 * (R50), or a padding byte set there (R37), is reported by tpack_container_verify, by the push decoder at any
 * chunking and by the signed decoder (with a policy that allows an unsigned stream) with the same tpack_error,
 * field by field: the nested container's own entry and offset, `depth` 2 and `outer_entry` the outermost
 * container's entry that holds it; tpack_error_message says it too. An error of the outermost container has
 * depth 0 and outer_entry TPACK_NONE. And the one-pass writer's refusal of an open-ended entry reads as such.
 *
 *   nested_context
 *
 * Exit status 0 when every check holds; each failure prints one line.
 */
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpack.h"

#include "check.h"

/* ---- writing containers --------------------------------------------------------------------------------- */

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

/* 64 KiB-aligned, so that payload alignments hold in memory too. */
static void sink_init(sink *s) {
    s->cap = 65536;
    s->bytes = aligned_alloc(65536, s->cap);
    s->len = 0;
    if (!s->bytes) s->cap = 0;
}

typedef struct {
    alignas(TPACK_WRITER_ALIGN) tpack_writer handle;
    uint8_t *books;
} writer;

static void writer_open(writer *w, sink *s) {
    size_t need = 0;
    tpack_error err;
    CHECK_RESULT(tpack_writer_bookkeeping_size(8, 1024, &need), TPACK_RESULT_OK);
    w->books = malloc(need);
    CHECK_RESULT(tpack_writer_init(&w->handle, w->books, need, 8, 1024, sink_write, s, &err), TPACK_RESULT_OK);
}

/* A container of `n` one-dimensional entries, written as they are (a CONTAINER payload is not looked into). */
static void write_entries(sink *s, size_t n, const char *const names[], const uint16_t dtypes[],
                          const uint8_t *const payloads[], const size_t lens[]) {
    writer w;
    tpack_error err;
    sink_init(s);
    writer_open(&w, s);
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
    free(w.books);
}

/* The offset of entry `i`'s payload in the container `bytes`. */
static uint64_t payload_offset(const sink *s, size_t i) {
    tpack_container c;
    tpack_entry e;
    tpack_error err;
    CHECK_RESULT(tpack_container_parse(s->bytes, s->len, &c, &err), TPACK_RESULT_OK);
    CHECK_RESULT(tpack_container_entry(&c, i, &e), TPACK_RESULT_OK);
    return e.offset;
}

/* `inner` two levels down: entry 1 ("deep") of a container that is entry 2 ("mid") of the outermost one. */
static void two_down(const sink *inner, sink *outer) {
    static const uint8_t zero = 0, nine = 9;
    sink middle;
    write_entries(&middle, 2, (const char *const[]){"x", "deep"},
                  (const uint16_t[]){TPACK_DTYPE_U8, TPACK_DTYPE_CONTAINER},
                  (const uint8_t *const[]){&nine, inner->bytes}, (const size_t[]){1, inner->len});
    write_entries(outer, 3, (const char *const[]){"p", "q", "mid"},
                  (const uint16_t[]){TPACK_DTYPE_U8, TPACK_DTYPE_U8, TPACK_DTYPE_CONTAINER},
                  (const uint8_t *const[]){&zero, &zero, middle.bytes}, (const size_t[]){1, 1, middle.len});
    free(middle.bytes);
}

/* ---- the verdicts ---------------------------------------------------------------------------------------- */

static bool same_error(const tpack_error *a, const tpack_error *b) {
    return a->result == b->result && a->rule == b->rule && a->entry == b->entry && a->record == b->record &&
           a->position == b->position && a->section == b->section && a->inner_rule == b->inner_rule &&
           a->depth == b->depth && a->outer_entry == b->outer_entry && a->stored == b->stored &&
           a->computed == b->computed && a->offset == b->offset && a->value == b->value;
}

static tpack_result verified(const sink *s, tpack_error *err) {
    tpack_container c;
    tpack_result r = tpack_container_parse(s->bytes, s->len, &c, err);
    return r != TPACK_RESULT_OK ? r : tpack_container_verify(&c, err);
}

/* The push decoder's verdict, fed in chunks of `chunk` bytes. */
static tpack_result decoded(const sink *s, size_t chunk, tpack_error *err) {
    alignas(TPACK_DECODER_ALIGN) static tpack_decoder d;
    static uint8_t buffer[16384];
    CHECK_RESULT(tpack_decoder_init(&d, buffer, sizeof buffer, err), TPACK_RESULT_OK);
    for (size_t at = 0; at < s->len; at += chunk) {
        size_t len = s->len - at < chunk ? s->len - at : chunk;
        const uint8_t *rest = s->bytes + at;
        for (;;) {
            size_t used = 0;
            tpack_event event;
            tpack_result r = tpack_decoder_decode(&d, rest, len, &used, &event, err);
            if (r != TPACK_RESULT_OK) return r;
            rest += used;
            len -= used;
            if (event.kind == TPACK_EVENT_NONE) break;
        }
    }
    return tpack_decoder_finish(&d, err);
}

/* The signed decoder's verdict, with a policy that allows an unsigned stream, in chunks of `chunk` bytes. */
static tpack_result signed_decoded(const sink *s, size_t chunk, tpack_error *err) {
    alignas(8) static tpack_signed_decoder d;
    static uint8_t buffer[16384];
    static uint8_t digests[32 * 8];
    tpack_policy policy = {NULL, 0, false, 0, NULL, 0};
    CHECK_RESULT(tpack_signed_decoder_init(&d, buffer, sizeof buffer, digests, sizeof digests, &policy, NULL, err),
                 TPACK_RESULT_OK);
    for (size_t at = 0; at < s->len; at += chunk) {
        size_t len = s->len - at < chunk ? s->len - at : chunk;
        const uint8_t *rest = s->bytes + at;
        for (;;) {
            size_t used = 0;
            tpack_event event;
            tpack_result r = tpack_signed_decoder_decode(&d, rest, len, &used, &event, err);
            if (r != TPACK_RESULT_OK) return r;
            rest += used;
            len -= used;
            if (event.kind == TPACK_EVENT_NONE) break;
        }
    }
    tpack_signer signer;
    return tpack_signed_decoder_finish(&d, &signer, err);
}

/* `outer` breaks `rule` inside entry 2, two levels down, where the innermost container alone breaks it as
 * `own` says: every verifier gives `own`'s fields, with depth 2 and outer entry 2. */
static void check_two_down(const sink *inner, uint32_t rule) {
    tpack_error own, err, other;
    CHECK_RESULT(verified(inner, &own), TPACK_RESULT_INVALID_CONTAINER);
    CHECK(own.rule == rule && own.depth == 0 && own.outer_entry == TPACK_NONE);

    sink outer;
    two_down(inner, &outer);
    CHECK_RESULT(verified(&outer, &err), TPACK_RESULT_INVALID_CONTAINER);
    tpack_error want = own;
    want.depth = 2;
    want.outer_entry = 2;
    CHECK(same_error(&err, &want));
    char msg[512];
    CHECK_RESULT(tpack_error_message(&err, msg, sizeof msg), TPACK_RESULT_OK);
    CHECK(strstr(msg, "in the container at depth 2 inside entry 2") != NULL);
    if (!strstr(msg, "at depth 2")) fprintf(stderr, "  message: %s\n", msg);

    static const size_t chunks[] = {1, 3, 64, 1000, 65536};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        memset(&other, 0, sizeof other);
        CHECK_RESULT(decoded(&outer, chunks[i], &other), TPACK_RESULT_INVALID_CONTAINER);
        CHECK(same_error(&other, &err));
        memset(&other, 0, sizeof other);
        CHECK_RESULT(signed_decoded(&outer, chunks[i], &other), TPACK_RESULT_INVALID_CONTAINER);
        CHECK(same_error(&other, &err));
    }
    free(outer.bytes);
}

static void innermost(sink *s) {
    static const uint8_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    write_entries(s, 2, (const char *const[]){"a", "b"}, (const uint16_t[]){TPACK_DTYPE_U8, TPACK_DTYPE_U8},
                  (const uint8_t *const[]){a, b}, (const size_t[]){4, 4});
}

static void damaged_payload(void) {
    current = "(a payload damaged two levels down)";
    sink inner;
    innermost(&inner);
    inner.bytes[payload_offset(&inner, 0) + 2] ^= 0x40;
    check_two_down(&inner, 50);
    free(inner.bytes);
}

static void damaged_padding(void) {
    current = "(padding damaged two levels down)";
    sink inner;
    innermost(&inner);
    inner.bytes[payload_offset(&inner, 1) - 1] = 1;
    check_two_down(&inner, 37);
    free(inner.bytes);
}

static void outermost(void) {
    current = "(a payload damaged in the outermost container)";
    sink s;
    innermost(&s);
    s.bytes[payload_offset(&s, 1)] ^= 1;
    tpack_error err, other;
    CHECK_RESULT(verified(&s, &err), TPACK_RESULT_INVALID_CONTAINER);
    CHECK(err.rule == 50 && err.entry == 1 && err.depth == 0 && err.outer_entry == TPACK_NONE);
    CHECK_RESULT(decoded(&s, 7, &other), TPACK_RESULT_INVALID_CONTAINER);
    CHECK(same_error(&other, &err));
    char msg[512];
    CHECK_RESULT(tpack_error_message(&err, msg, sizeof msg), TPACK_RESULT_OK);
    CHECK(strstr(msg, "depth") == NULL);
    free(s.bytes);
}

static void open_ended_message(void) {
    current = "(the one-pass writer refuses an open-ended entry)";
    sink s;
    writer w;
    tpack_error err;
    sink_init(&s);
    writer_open(&w, &s);
    tpack_entry_decl open = {{"code", 4}, NULL, 0, 0, 0, TPACK_DTYPE_RAW, false, true};
    CHECK_RESULT(tpack_writer_declare(&w.handle, &open, &err), TPACK_RESULT_WRITER_MISUSE);
    CHECK(err.entry == 0 && err.depth == 0 && err.outer_entry == TPACK_NONE);
    char msg[512];
    CHECK_RESULT(tpack_error_message(&err, msg, sizeof msg), TPACK_RESULT_OK);
    CHECK(strstr(msg, "entry 0 is open-ended") != NULL && strstr(msg, "seekable writer") != NULL);
    free(w.books);
    free(s.bytes);
}

int main(void) {
    current = "(setup)";
    damaged_payload();
    damaged_padding();
    outermost();
    open_ended_message();
    if (failures) {
        fprintf(stderr, "nested_context: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("nested_context: %d checks passed\n", checks);
    return 0;
}
