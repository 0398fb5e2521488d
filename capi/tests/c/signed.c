/*
 * Signed containers from C (capi/tests/run-c.sh, under ASan + UBSan): every verification of the manifest
 * (spec/vectors/manifest.json, turned into a list by run-c.sh) gives its verdict three ways: the whole
 * authenticated verification, the lazy one (authenticate, then entry by entry), and the signed push decoder in
 * 7-byte chunks, which must release no event after a prefix the policy refuses. Then argument checks: NULL and
 * unfilled handles give their codes, outputs stay untouched, a caller's tpack_crypto decides.
 *
 *   signed LIST VECTORS_DIR
 *
 * Each line of LIST: "C FILE VERDICT REQUIRE MIN_COUNTER SUBJECT|- NKEYS" then, per key,
 * " ALGORITHM KEY_ID_HEX PUBLIC_KEY_HEX|- SUBJECT|-".
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpack.h"

#define MAX_KEYS 4
#define MAX_FILE (1u << 20)

static int failures;

#define CHECK(cond, ...)                                                                                      \
    do {                                                                                                      \
        if (!(cond)) {                                                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                              \
            fprintf(stderr, __VA_ARGS__);                                                                     \
            fprintf(stderr, "\n");                                                                            \
            failures++;                                                                                       \
        }                                                                                                     \
    } while (0)

struct key_text {
    uint8_t public_key[65];
    size_t public_key_len;
    char subject[64];
};

struct check {
    char file[256], verdict[8], subject[64];
    int require;
    unsigned long long min_counter;
    size_t key_count;
    tpack_trusted_key keys[MAX_KEYS];
    struct key_text text[MAX_KEYS];
    tpack_policy policy;
};

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
    size_t n = strlen(s) / 2;
    if (n > max) {
        return (size_t) -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned byte;
        if (sscanf(s + 2 * i, "%2x", &byte) != 1) {
            return (size_t) -1;
        }
        out[i] = (uint8_t) byte;
    }
    return n;
}

/* Parses one line into `c` (the policy points into it); false for a malformed line. */
static bool parse_line(char *line, struct check *c)
{
    memset(c, 0, sizeof *c);
    int used = 0;
    if (sscanf(line, "C %255s %7s %d %llu %63s %zu%n", c->file, c->verdict, &c->require, &c->min_counter,
               c->subject, &c->key_count, &used) != 6 ||
        c->key_count > MAX_KEYS) {
        return false;
    }
    char *p = line + used;
    for (size_t i = 0; i < c->key_count; i++) {
        unsigned long long algorithm;
        char id[65], public_key[131], subject[64];
        int n = 0;
        if (sscanf(p, " %llu %64s %130s %63s%n", &algorithm, id, public_key, subject, &n) != 4 ||
            unhex(id, c->keys[i].key_id, 32) != 32) {
            return false;
        }
        p += n;
        c->keys[i].algorithm = algorithm;
        if (strcmp(public_key, "-") != 0) {
            c->text[i].public_key_len = unhex(public_key, c->text[i].public_key, sizeof c->text[i].public_key);
            if (c->text[i].public_key_len == (size_t) -1) {
                return false;
            }
            c->keys[i].public_key = c->text[i].public_key;
            c->keys[i].public_key_len = c->text[i].public_key_len;
        }
        if (strcmp(subject, "-") != 0) {
            memcpy(c->text[i].subject, subject, sizeof c->text[i].subject);
            c->keys[i].subject = c->text[i].subject;
            c->keys[i].subject_len = strlen(subject);
        }
    }
    c->policy.keys = c->key_count ? c->keys : NULL;
    c->policy.key_count = c->key_count;
    c->policy.require_signature = c->require != 0;
    c->policy.min_counter = c->min_counter;
    if (strcmp(c->subject, "-") != 0) {
        c->policy.subject = c->subject;
        c->policy.subject_len = strlen(c->subject);
    }
    return true;
}

/* "ok" or the rule id of a result. */
static const char *verdict_of(tpack_result r, const tpack_error *e)
{
    if (r == TPACK_RESULT_OK) {
        return "ok";
    }
    if (r != TPACK_RESULT_INVALID_CONTAINER || e->result != (uint32_t) r || tpack_rule_id(e->rule) == NULL) {
        return tpack_result_message((uint32_t) r);
    }
    return tpack_rule_id(e->rule);
}

static const char *whole(const tpack_container *c, const tpack_policy *policy, const tpack_crypto *crypto)
{
    tpack_error e;
    return verdict_of(tpack_container_verify_authentic(c, policy, crypto, &e), &e);
}

static const char *lazy(const tpack_container *c, const tpack_policy *policy)
{
    tpack_authenticated a;
    tpack_error e;
    tpack_result r = tpack_container_authenticate(c, policy, NULL, &a, &e);
    if (r != TPACK_RESULT_OK) {
        return verdict_of(r, &e);
    }
    size_t count = 0;
    CHECK(tpack_container_entry_count(c, &count) == TPACK_RESULT_OK, "entry count");
    for (size_t i = 0; i < count; i++) {
        tpack_bytes payload;
        r = tpack_authenticated_verify_entry(&a, NULL, i, &payload, &e);
        if (r != TPACK_RESULT_OK) {
            CHECK(e.entry == i, "entry %zu reported as %u", i, (unsigned) e.entry);
            return verdict_of(r, &e);
        }
    }
    return verdict_of(tpack_authenticated_verify(&a, NULL, &e), &e);
}

/* The signed decoder's verdict over `bytes` in 7-byte chunks; counts the events it released. */
static const char *streamed(const uint8_t *bytes, size_t len, const tpack_policy *policy, unsigned *events)
{
    static tpack_signed_decoder d;
    static uint8_t buffer[1 << 16], digests[32 * 64];
    static tpack_error e;
    *events = 0;
    if (tpack_signed_decoder_init(&d, buffer, sizeof buffer, digests, sizeof digests, policy, NULL, NULL) !=
        TPACK_RESULT_OK) {
        return "init failed";
    }
    for (size_t off = 0; off < len; off += 7) {
        const uint8_t *p = bytes + off;
        size_t rest = len - off < 7 ? len - off : 7;
        for (;;) {
            size_t used;
            tpack_event ev;
            tpack_result r = tpack_signed_decoder_decode(&d, p, rest, &used, &ev, &e);
            if (r != TPACK_RESULT_OK) {
                return verdict_of(r, &e);
            }
            p += used;
            rest -= used;
            if (ev.kind == TPACK_EVENT_NONE) {
                break;
            }
            ++*events;
        }
    }
    tpack_signer signer;
    return verdict_of(tpack_signed_decoder_finish(&d, &signer, &e), &e);
}

static uint8_t *read_file(const char *dir, const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    uint8_t *bytes = malloc(MAX_FILE);
    *len = bytes ? fread(bytes, 1, MAX_FILE, f) : 0;
    fclose(f);
    return bytes;
}

static bool is_prefix_rule(const char *verdict)
{
    return strcmp(verdict, "R58") == 0 || strcmp(verdict, "R59") == 0 || strcmp(verdict, "R60") == 0 ||
           strcmp(verdict, "R61") == 0 || strcmp(verdict, "R62") == 0;
}

/* A verify callback that answers what `user` points to. */
static int32_t answer(void *user, uint64_t algorithm, const uint8_t *public_key, size_t public_key_len,
                      const uint8_t *message, const uint8_t *signature, size_t signature_len)
{
    (void) algorithm;
    (void) public_key;
    (void) message;
    (void) signature;
    CHECK(public_key_len == 32 && signature_len == 64, "lengths %zu %zu", public_key_len, signature_len);
    return *(const int32_t *) user;
}

static void sha_begin(void *user) { (void) user; }
static void sha_update(void *user, const uint8_t *data, size_t len) { (void) user; (void) data; (void) len; }

/* Argument checks over a signed container `c` (accepted by `good`) and an unsigned one `u`. */
static void arguments(const tpack_container *c, const tpack_container *u, const tpack_policy *good)
{
    tpack_container zero_c;
    tpack_authenticated zero_a, a;
    tpack_signed_decoder zero_d;
    memset(&zero_c, 0, sizeof zero_c);
    memset(&zero_a, 0, sizeof zero_a);
    memset(&zero_d, 0, sizeof zero_d);
    tpack_signed_attributes attrs;
    memset(&attrs, 0x5a, sizeof attrs);
    tpack_signed_attributes before = attrs;
    CHECK(tpack_container_signed_attributes(NULL, &attrs) == TPACK_RESULT_NULL_ARGUMENT, "NULL container");
    CHECK(tpack_container_signed_attributes(c, NULL) == TPACK_RESULT_NULL_ARGUMENT, "NULL out");
    CHECK(tpack_container_signed_attributes(&zero_c, &attrs) == TPACK_RESULT_UNINITIALIZED_STORAGE, "zeroed");
    CHECK(tpack_container_signed_attributes(u, &attrs) == TPACK_RESULT_NOT_SIGNED, "unsigned");
    CHECK(memcmp(&attrs, &before, sizeof attrs) == 0, "attributes written on failure");
    CHECK(tpack_container_signed_attributes(c, &attrs) == TPACK_RESULT_OK, "signed");
    CHECK(attrs.algorithm == TPACK_ALGORITHM_ED25519 && attrs.signature.len == 64, "attributes");

    uint8_t message[TPACK_SIGNED_MESSAGE_LEN];
    memset(message, 0x77, sizeof message);
    CHECK(tpack_container_signed_message(u, NULL, message) == TPACK_RESULT_NOT_SIGNED, "unsigned message");
    CHECK(message[0] == 0x77 && message[79] == 0x77, "message written on failure");
    CHECK(tpack_container_signed_message(c, NULL, NULL) == TPACK_RESULT_NULL_ARGUMENT, "NULL message");
    CHECK(tpack_container_signed_message(c, NULL, message) == TPACK_RESULT_OK, "message");
    CHECK(memcmp(message, "tpack signed v1\0", 16) == 0, "the message's domain");

    tpack_error e;
    CHECK(tpack_container_authenticate(NULL, good, NULL, &a, &e) == TPACK_RESULT_NULL_ARGUMENT &&
              e.result == TPACK_RESULT_NULL_ARGUMENT,
          "NULL container");
    CHECK(tpack_container_authenticate(c, NULL, NULL, &a, NULL) == TPACK_RESULT_NULL_ARGUMENT, "NULL policy");
    CHECK(tpack_container_authenticate(c, good, NULL, NULL, NULL) == TPACK_RESULT_NULL_ARGUMENT, "NULL out");
    CHECK(tpack_container_authenticate(&zero_c, good, NULL, &a, NULL) == TPACK_RESULT_UNINITIALIZED_STORAGE,
          "zeroed container");
    tpack_policy no_keys = *good;
    no_keys.keys = NULL;
    CHECK(tpack_container_authenticate(c, &no_keys, NULL, &a, NULL) == TPACK_RESULT_NULL_ARGUMENT, "keys NULL");
    tpack_trusted_key bad_key = good->keys[0];
    bad_key.algorithm = 77;
    tpack_policy bad = *good;
    bad.keys = &bad_key;
    CHECK(tpack_container_authenticate(c, &bad, NULL, &a, NULL) == TPACK_RESULT_BAD_ARGUMENT, "algorithm 77");
    tpack_crypto partial = {NULL, sha_begin, sha_update, NULL, NULL, 0};
    CHECK(tpack_container_authenticate(c, good, &partial, &a, NULL) == TPACK_RESULT_BAD_ARGUMENT, "partial");

    tpack_bytes payload = {NULL, 4242};
    CHECK(tpack_authenticated_verify_entry(&zero_a, NULL, 0, &payload, NULL) == TPACK_RESULT_UNINITIALIZED_STORAGE,
          "zeroed handle");
    CHECK(tpack_authenticated_verify(NULL, NULL, NULL) == TPACK_RESULT_NULL_ARGUMENT, "NULL handle");
    CHECK(tpack_container_authenticate(c, good, NULL, &a, &e) == TPACK_RESULT_OK, "authenticate");
    CHECK(tpack_authenticated_verify_entry(&a, NULL, 1000, &payload, NULL) == TPACK_RESULT_NOT_FOUND, "index");
    CHECK(payload.data == NULL && payload.len == 4242, "payload written on failure");
    CHECK(tpack_authenticated_signer(&a, &attrs) == TPACK_RESULT_OK && attrs.counter == 7, "signer");
    /* A container handle is no authenticated handle, and the reverse. */
    CHECK(tpack_authenticated_verify((const tpack_authenticated *) (const void *) c, NULL, NULL) ==
              TPACK_RESULT_UNINITIALIZED_STORAGE,
          "container as authenticated");

    /* The caller's verifier decides; without Ed25519 among its algorithms, R60. */
    int32_t no = 0, yes = 1;
    tpack_crypto says_no = {&no, NULL, NULL, NULL, answer, 1u << TPACK_ALGORITHM_ED25519};
    tpack_crypto says_yes = {&yes, NULL, NULL, NULL, answer, 1u << TPACK_ALGORITHM_ED25519};
    tpack_crypto p256_only = {&yes, NULL, NULL, NULL, answer, 1u << TPACK_ALGORITHM_P256};
    CHECK(strcmp(whole(c, good, &says_no), "R63") == 0, "a verifier that says no");
    CHECK(strcmp(whole(c, good, &says_yes), "ok") == 0, "a verifier that says yes");
    CHECK(strcmp(whole(c, good, &p256_only), "R60") == 0, "a verifier without Ed25519");

    bool doomed;
    uint8_t buffer[256], digests[64];
    CHECK(tpack_signed_decoder_is_doomed(&zero_d, &doomed) == TPACK_RESULT_UNINITIALIZED_STORAGE, "zeroed");
    CHECK(tpack_signed_decoder_init(NULL, buffer, sizeof buffer, digests, sizeof digests, good, NULL, NULL) ==
              TPACK_RESULT_NULL_ARGUMENT,
          "NULL decoder");
    CHECK(tpack_signed_decoder_init(&zero_d, buffer, 100, digests, sizeof digests, good, NULL, NULL) ==
              TPACK_RESULT_SHORT_STORAGE,
          "short buffer");
    tpack_trusted_key many[TPACK_SIGNED_DECODER_MAX_KEYS + 1];
    for (size_t i = 0; i < TPACK_SIGNED_DECODER_MAX_KEYS + 1; i++) {
        many[i] = good->keys[0];
    }
    tpack_policy too_many = *good;
    too_many.keys = many;
    too_many.key_count = TPACK_SIGNED_DECODER_MAX_KEYS + 1;
    CHECK(tpack_signed_decoder_init(&zero_d, buffer, sizeof buffer, digests, sizeof digests, &too_many, NULL, NULL) ==
              TPACK_RESULT_SHORT_STORAGE,
          "too many keys");
    CHECK(tpack_signed_decoder_is_doomed(&zero_d, &doomed) == TPACK_RESULT_UNINITIALIZED_STORAGE,
          "written on failure");
    CHECK(strcmp(tpack_result_message(TPACK_RESULT_NOT_SIGNED), "the container is not signed") == 0, "message");
    CHECK(strcmp(tpack_rule_name(64), "EntryDigest") == 0 && strcmp(tpack_rule_id(58), "R58") == 0, "names");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: signed LIST VECTORS_DIR\n");
        return 2;
    }
    FILE *list = fopen(argv[1], "r");
    if (list == NULL) {
        perror(argv[1]);
        return 2;
    }
    static char line[4096];
    static struct check c;
    unsigned checks = 0, refused_early = 0;
    bool argued = false;
    while (fgets(line, sizeof line, list)) {
        if (!parse_line(line, &c)) {
            fprintf(stderr, "malformed line: %s", line);
            return 2;
        }
        size_t len = 0;
        uint8_t *bytes = read_file(argv[2], c.file, &len);
        if (bytes == NULL) {
            fprintf(stderr, "cannot read %s\n", c.file);
            return 2;
        }
        tpack_container container;
        tpack_error e;
        CHECK(tpack_container_parse(bytes, len, &container, &e) == TPACK_RESULT_OK, "%s: parse", c.file);
        const char *got = whole(&container, &c.policy, NULL);
        CHECK(strcmp(got, c.verdict) == 0, "%s: whole: %s, want %s", c.file, got, c.verdict);
        got = lazy(&container, &c.policy);
        CHECK(strcmp(got, c.verdict) == 0, "%s: lazy: %s, want %s", c.file, got, c.verdict);
        unsigned events;
        got = streamed(bytes, len, &c.policy, &events);
        CHECK(strcmp(got, c.verdict) == 0, "%s: streamed: %s, want %s", c.file, got, c.verdict);
        if (is_prefix_rule(c.verdict)) {
            CHECK(events == 0, "%s: %u events after a refused prefix", c.file, events);
            refused_early++;
        }
        if (!argued && strcmp(c.file, "valid/signed-ed25519.tpack") == 0 && strcmp(c.verdict, "ok") == 0) {
            size_t ulen = 0;
            uint8_t *unsigned_bytes = read_file(argv[2], "valid/example.tpack", &ulen);
            tpack_container u;
            CHECK(unsigned_bytes && tpack_container_parse(unsigned_bytes, ulen, &u, NULL) == TPACK_RESULT_OK,
                  "example.tpack");
            arguments(&container, &u, &c.policy);
            free(unsigned_bytes);
            argued = true;
        }
        free(bytes);
        checks++;
    }
    fclose(list);
    CHECK(checks >= 30 && refused_early >= 15 && argued, "%u verifications, %u refused early, argued %d", checks,
          refused_early, argued);
    if (failures) {
        fprintf(stderr, "signed: %d failures\n", failures);
        return 1;
    }
    printf("signed: %u verifications agree three ways (whole, entry by entry, signed decoder in 7-byte chunks); "
           "%u refused before any event; argument checks ok\n",
           checks, refused_early);
    return 0;
}
