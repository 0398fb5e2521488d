/* An over-the-air update received with the push decoder: the container arrives in chunks of any size (radio,
 * UART, BLE) and goes byte for byte into a staging slot of flash; the decoder checks it on the way, with a
 * fixed amount of RAM whatever the model's size, so that the slot is marked valid only for a container that
 * tpack_container_parse + tpack_container_verify would accept, and a broken one is dropped as early as possible.
 * The slot then holds a model to read in place (flash_model.c).
 *
 * On a host, main() below plays the radio: it sends a file in chunks of 1 to 97 bytes.
 *
 *   ota_receive MODEL.tpack            exit 0: accepted and committed; 1: refused (the rule printed)
 *   ota_receive --flip N MODEL.tpack   the same with byte N flipped on the way
 *
 * docs/c-api.md shows parts of this file; CI checks that they are the same text, and builds and runs it
 * (capi/examples/run.sh). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpack.h"

/* The staging slot: on a device a flash region (erased before, programmed as bytes arrive); here RAM. Aligned
 * as a model in flash must be (flash_model.c). */
#define SLOT_SIZE (256 * 1024)
static _Alignas(64) uint8_t slot[SLOT_SIZE];
static bool slot_valid;

static void slot_erase(void) { memset(slot, 0xff, sizeof slot); slot_valid = false; }
static void slot_program(uint64_t at, const uint8_t *bytes, size_t len) { memcpy(slot + at, bytes, len); }
static void slot_mark_valid(void) { slot_valid = true; }

static void report_refusal(const char *what, const tpack_error *err) {
    const char *rule = tpack_rule_id(err->rule); /* NULL when no rule is broken */
    char msg[200];
    tpack_error_message(err, msg, sizeof msg);
    printf("%s refused (%s): %s\n", what, rule ? rule : tpack_result_message((tpack_result)err->result), msg);
}

/* One transfer. The decoder's buffer keeps the prefix (header, entry table, names, metadata), the trailer and
 * 8 bytes per entry, not the payloads: 4 KiB is ample for a model of a few dozen tensors, whatever their size.
 * The prefix announces what the whole stream needs (tpack_decoder_stream_buffer_needed). */
struct ota {
    tpack_decoder decoder; /* TPACK_DECODER_SIZE = 1,152 bytes */
    uint8_t buffer[4096];
    uint64_t received, payload_bytes;
};

static void ota_begin(struct ota *o) {
    slot_erase();
    o->received = o->payload_bytes = 0;
    tpack_decoder_init(&o->decoder, o->buffer, sizeof o->buffer, NULL); /* cannot fail: 4096 >= TPACK_DECODER_MIN_BUFFER */
}

/* The prefix has arrived, before any payload: is this a model this firmware can run, and receive? */
static bool ota_prefix_acceptable(const struct ota *o) {
    const tpack_decoder *d = &o->decoder;
    tpack_meta_value name;
    tpack_str s;
    tpack_entry e;
    if (tpack_decoder_prefix_metadata_get(d, "model.name", TPACK_NUL_TERMINATED, &name) != TPACK_RESULT_OK ||
        tpack_meta_string(&name, &s) != TPACK_RESULT_OK || s.len != 8 || memcmp(s.data, "tiny-mlp", 8) != 0 ||
        tpack_decoder_prefix_find(d, "fc1.weight", TPACK_NUL_TERMINATED, &e) != TPACK_RESULT_OK ||
        e.dtype != TPACK_DTYPE_F32) {
        printf("update refused: not a tiny-mlp model (decided from the prefix, before any payload)\n");
        return false;
    }
    /* What the whole stream will need, nested containers included: refuse now rather than run out later. */
    uint64_t needed = 0;
    if (tpack_decoder_stream_buffer_needed(d, &needed) != TPACK_RESULT_OK || needed > sizeof o->buffer) {
        printf("update refused: it needs a decoder buffer of %llu bytes, this device has %zu\n",
               (unsigned long long)needed, sizeof o->buffer);
        return false;
    }
    return true;
}

/* Called by the radio driver for each chunk, in order. Returns 0 to go on, -1 to drop the transfer. */
static int ota_chunk(struct ota *o, const uint8_t *chunk, size_t len) {
    if (len > SLOT_SIZE - o->received) {
        printf("update refused: larger than the slot (%d bytes)\n", SLOT_SIZE);
        return -1;
    }
    slot_program(o->received, chunk, len);
    o->received += len;

    tpack_error err;
    for (;;) {
        size_t used;
        tpack_event ev;
        if (tpack_decoder_decode(&o->decoder, chunk, len, &used, &ev, &err) != TPACK_RESULT_OK) {
            report_refusal("update", &err); /* R2..R7, R9: nothing later could change the verdict */
            return -1;
        }
        chunk += used;
        len -= used;
        if (ev.kind == TPACK_EVENT_NONE) break; /* the chunk is consumed */
        if (ev.kind == TPACK_EVENT_PREFIX && !ota_prefix_acceptable(o)) return -1;
        if (ev.kind == TPACK_EVENT_PAYLOAD) o->payload_bytes += ev.bytes.len;
    }
    /* A rule is already broken (a bad name, a table that does not hold together, ...): the verdict at the end
     * would name it, but the transfer can stop now. */
    bool doomed = false;
    tpack_decoder_is_doomed(&o->decoder, &doomed);
    if (doomed) {
        printf("update dropped after %llu bytes: it breaks a rule of the format\n", (unsigned long long)o->received);
        return -1;
    }
    return 0;
}

/* The last chunk has arrived: the verdict (every payload's CRC-32 included), then the commit. */
static int ota_end(struct ota *o) {
    tpack_error err;
    if (tpack_decoder_finish(&o->decoder, &err) != TPACK_RESULT_OK) {
        report_refusal("update", &err);
        slot_erase();
        return -1;
    }
    slot_mark_valid();
    return 0;
}

/* The host's radio: the file in chunks of 1 to 97 bytes. */
int main(int argc, char **argv) {
    long flip = -1;
    if (argc == 4 && strcmp(argv[1], "--flip") == 0) flip = strtol(argv[2], NULL, 10);
    else if (argc != 2) {
        fprintf(stderr, "usage: ota_receive [--flip N] MODEL.tpack\n");
        return 2;
    }
    static uint8_t file[SLOT_SIZE + 1];
    FILE *f = fopen(argv[argc - 1], "rb");
    if (!f) { fprintf(stderr, "ota_receive: cannot read %s\n", argv[argc - 1]); return 2; }
    size_t len = fread(file, 1, sizeof file, f);
    fclose(f);
    if (flip >= 0 && (size_t)flip < len) file[flip] ^= 0x01;

    static struct ota o;
    ota_begin(&o);
    uint32_t seed = 12345;
    size_t at = 0, chunks = 0;
    while (at < len) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 1 + (seed >> 16) % 97;
        if (n > len - at) n = len - at;
        if (ota_chunk(&o, file + at, n) != 0) return 1;
        at += n;
        chunks++;
    }
    if (ota_end(&o) != 0) return 1;

    /* The slot now holds the container: a model to read in place. */
    tpack_container c;
    size_t entries = 0;
    if (!slot_valid || tpack_container_parse(slot, (size_t)o.received, &c, NULL) != TPACK_RESULT_OK ||
        tpack_container_entry_count(&c, &entries) != TPACK_RESULT_OK) return 1;
    printf("update accepted: %llu bytes in %zu chunks (%llu payload bytes, %zu entries), committed to the slot\n",
           (unsigned long long)o.received, chunks, (unsigned long long)o.payload_bytes, entries);
    return 0;
}
