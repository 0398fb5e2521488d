/* The smallest firmware for one set of tpack entry points, so that size.sh can measure what each set costs in
 * flash (the link keeps only what the calls reach: --gc-sections). Built with one or both of:
 *
 *   -DPROBE_VERIFY  parse and verify the model in flash in place, walk its entries, find one by name; and refuse
 *                   a RAM copy with a flipped payload byte (R50), printing tpack_error_message's text.
 *   -DPROBE_DECODE  push-decode the model in 61-byte chunks in a buffer sized by tpack_decoder_buffer_needed,
 *                   counting payload bytes; and refuse a stream with a flipped payload byte (R50), printing
 *                   tpack_error_message's text.
 *
 * Messages are included on purpose: a firmware reports why it refused a model. run.sh boots each probe, and
 * any wrong verdict exits non-zero. main.c is the full firmware; this file is only for measuring. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "firmware.h"
#include "semihost.h"
#include "tpack.h"

extern const uint8_t tpack_model[];
extern const uint32_t tpack_model_len;

/* Room for the RAM copy of the model (checked) and for the decoder's buffer (checked against what it needs). */
#define COPY_LEN 4096u
#define BUFFER_LEN 4096u
/* As main.c: odd, so chunk boundaries fall inside every section. */
#define CHUNK 61u
/* The payload byte flipped in the refused copies: past the header, the table and the pools of tiny-mlp. */
#define FLIP 0x10u
/* Where the header stores the trailer's offset (spec §3, little-endian u64). */
#define TRAILER_OFFSET_AT 136u

static uint8_t copy[COPY_LEN] __attribute__((aligned(64)));
static char message[256];

/* The error's text; the probe's point is to link tpack_error_message. With -DNO_MESSAGES it links none (size.sh's
   reference of what the messages cost): the verdict is still checked by rule number. */
static const char *text(const tpack_error *err)
{
#ifdef NO_MESSAGES
    (void) err;
    (void) message;
    return "(no message: built with -DNO_MESSAGES)";
#else
    return tpack_error_message(err, message, sizeof message) == TPACK_RESULT_OK ? message : "(no message)";
#endif
}

/* The offset of the first payload byte of the model's last entry: flipping it must break R50. */
static size_t last_payload_byte(void)
{
    /* The trailer's offset is the header's u64 at byte 136 (spec §3); the payloads end before it, then zero
       padding at most: the last non-zero byte before the trailer is payload. */
    uint64_t trailer;
    memcpy(&trailer, tpack_model + TRAILER_OFFSET_AT, sizeof trailer);
    if (trailer == 0 || trailer >= tpack_model_len) {
        fail("the trailer offset %u is not in the model", (unsigned) trailer);
    }
    size_t at = (size_t) trailer - 1;
    while (at > 0 && tpack_model[at] == 0) {
        at--;
    }
    return at;
}

static const uint8_t *flipped_copy(void)
{
    if (tpack_model_len > sizeof copy) {
        fail("the model (%u bytes) does not fit the copy", (unsigned) tpack_model_len);
    }
    memcpy(copy, tpack_model, tpack_model_len);
    copy[last_payload_byte()] ^= FLIP;
    return copy;
}

#ifdef PROBE_VERIFY
static void probe_verify(void)
{
    tpack_container c;
    tpack_error err;
    if (tpack_container_parse(tpack_model, tpack_model_len, &c, &err) != TPACK_RESULT_OK ||
        tpack_container_verify(&c, &err) != TPACK_RESULT_OK) {
        fail("model refused: %s", text(&err));
    }
    size_t count;
    uint64_t bytes = 0;
    if (tpack_container_entry_count(&c, &count) != TPACK_RESULT_OK) {
        fail("no entry count");
    }
    for (size_t i = 0; i < count; i++) {
        tpack_entry e;
        if (tpack_container_entry(&c, i, &e) != TPACK_RESULT_OK) {
            fail("entry %u unavailable", (unsigned) i);
        }
        bytes += e.payload.len;
    }
    tpack_entry found;
    if (tpack_container_find(&c, "fc1.weight", 10, &found) != TPACK_RESULT_OK) {
        fail("no entry fc1.weight");
    }
    say("verify: %u entries, %u payload bytes, every checksum verified in place\n", (unsigned) count,
        (unsigned) bytes);
    const uint8_t *bad = flipped_copy();
    tpack_result r = tpack_container_parse(bad, tpack_model_len, &c, &err);
    r = r == TPACK_RESULT_OK ? tpack_container_verify(&c, &err) : r;
    if (r != TPACK_RESULT_INVALID_CONTAINER || err.rule != 50) {
        fail("a copy with a flipped payload byte: result %u, rule %u", (unsigned) r, (unsigned) err.rule);
    }
    say("verify: a flipped payload byte refused: %s\n", text(&err));
}
#endif

#ifdef PROBE_DECODE
static uint8_t buffer[BUFFER_LEN] __attribute__((aligned(8)));

/* Decodes `bytes` in CHUNK-byte chunks; the verdict, with the payload bytes seen in `*payload`. */
static tpack_result decode(const uint8_t *bytes, size_t len, size_t buffer_len, uint64_t *payload, tpack_error *err)
{
    static tpack_decoder dec;
    if (tpack_decoder_init(&dec, buffer, buffer_len, err) != TPACK_RESULT_OK) {
        fail("tpack_decoder_init refused a %u-byte buffer", (unsigned) buffer_len);
    }
    *payload = 0;
    for (size_t off = 0; off < len; off += CHUNK) {
        const uint8_t *p = bytes + off;
        size_t rest = len - off < CHUNK ? len - off : CHUNK;
        for (;;) {
            size_t used;
            tpack_event ev;
            tpack_result r = tpack_decoder_decode(&dec, p, rest, &used, &ev, err);
            if (r != TPACK_RESULT_OK) {
                return r;
            }
            p += used;
            rest -= used;
            if (ev.kind == TPACK_EVENT_NONE) {
                break;
            }
            if (ev.kind == TPACK_EVENT_PAYLOAD) {
                *payload += ev.bytes.len;
            }
        }
        bool doomed;
        if (tpack_decoder_is_doomed(&dec, &doomed) != TPACK_RESULT_OK) {
            fail("tpack_decoder_is_doomed failed");
        }
    }
    return tpack_decoder_finish(&dec, err);
}

static void probe_decode(void)
{
    uint64_t needed;
    if (tpack_decoder_buffer_needed(tpack_model, tpack_model_len, &needed, NULL) != TPACK_RESULT_OK || needed > BUFFER_LEN) {
        fail("the decoder needs more than %u bytes", BUFFER_LEN);
    }
    uint64_t payload;
    tpack_error err;
    if (decode(tpack_model, tpack_model_len, (size_t) needed, &payload, &err) != TPACK_RESULT_OK) {
        fail("stream refused: %s", text(&err));
    }
    say("decode: %u bytes in %u-byte chunks, %u payload bytes, verdict ok\n", (unsigned) tpack_model_len, CHUNK,
        (unsigned) payload);
    tpack_result r = decode(flipped_copy(), tpack_model_len, (size_t) needed, &payload, &err);
    if (r != TPACK_RESULT_INVALID_CONTAINER || err.rule != 50) {
        fail("a stream with a flipped payload byte: result %u, rule %u", (unsigned) r, (unsigned) err.rule);
    }
    say("decode: a flipped payload byte refused: %s\n", text(&err));
}
#endif

/* startup.c's tpack_panic and main.c's helpers are not linked here: only what the probe needs. */
const char *text_of(const tpack_error *err)
{
    return text(err);
}

int main(void)
{
#ifdef PROBE_VERIFY
    probe_verify();
#endif
#ifdef PROBE_DECODE
    probe_decode();
#endif
    say("PASS\n");
    return 0;
}
