/* Signed models (spec §14) in the C firmware, with the firmware's one trusted key (models/trusted_key.h), the
 * subject it requires and its counter floor:
 *
 * 1. In flash, read in place: the signed model is authenticated (R58..R63, hashing only its prefix and digests),
 *    each entry the MLP uses is checked on first use (R64, tpack_authenticated_verify_entry), and every forgery
 *    (a payload byte changed with every CRC recomputed, unsigned, another key, a lower counter) is refused by
 *    tpack_container_verify_authentic with its rule.
 * 2. Installed over a stream: each model is fed in CHUNK-byte chunks to a tpack_signed_decoder. Bytes are staged
 *    in a staging slot only once the decoder has released the prefix (a prefix the policy refuses releases
 *    nothing: R58, R59, R62 write nothing at all), and copied to the final region only after
 *    tpack_signed_decoder_finish has accepted the stream (R64, found at the end, writes only the staging slot).
 *    The flash model counts writes: every refused model must leave 0 writes in the final region. The accepted
 *    one is then parsed and authenticated from the final region, and runs from there. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "firmware.h"
#include "flash.h"
#include "semihost.h"
#include "tpack.h"
#include "trusted_key.h"

extern const uint8_t tpack_model[], signed_model[], tampered_model[], other_key_model[], rollback_model[];
extern const uint32_t tpack_model_len, signed_model_len, tampered_model_len, other_key_model_len,
    rollback_model_len;

/* The chunk size of the streams (as main.c's). */
#define CHUNK 61u
/* Room for a model in each slot, and for the prefix held in RAM until the decoder accepts it. */
#define SLOT_LEN 4096u
#define HELD_LEN 4096u
/* A model of up to this many entries (digests: 32 bytes each). */
#define MAX_ENTRIES 16u
/* The flash model's page: what one commit write copies. */
#define PAGE 256u

static uint8_t staging_bytes[SLOT_LEN], final_bytes[SLOT_LEN] __attribute__((aligned(64)));
static struct flash_region staging = {"staging", staging_bytes, sizeof staging_bytes, 0, 0, 0};
static struct flash_region final_region = {"final", final_bytes, sizeof final_bytes, 0, 0, 0};

static uint8_t held[HELD_LEN];
static uint8_t signed_decoder_buffer[4096] __attribute__((aligned(8)));
static uint8_t digests[32 * MAX_ENTRIES];
static tpack_signed_decoder decoder;

/* The policy: the trusted key (its id computed at boot from the public key), a signature required, the subject,
   the counter floor (a device keeps it in monotonic storage). */
static tpack_trusted_key trusted;
/* run.sh builds an image with a higher floor (-DFLOOR=6), which must refuse the signed model: the check can fail. */
#ifndef FLOOR
#define FLOOR COUNTER_FLOOR
#endif
static tpack_policy policy;

struct model_file {
    const char *what;
    const uint8_t *bytes;
    const uint32_t *len;
    /* The rule that refuses it (0: accepted), and whether the decoder refuses it from its prefix alone. */
    uint32_t rule;
    bool from_prefix;
};

static const struct model_file models[] = {
    {"signed by the trusted key, counter 5", signed_model, &signed_model_len, 0, false},
    {"a payload byte changed, every CRC recomputed", tampered_model, &tampered_model_len, 64, false},
    {"unsigned", tpack_model, &tpack_model_len, 58, true},
    {"signed by another key", other_key_model, &other_key_model_len, 59, true},
    {"signed with counter 4, below the floor", rollback_model, &rollback_model_len, 62, true},
};

static void make_policy(void)
{
    memset(&trusted, 0, sizeof trusted);
    tpack_result r = tpack_key_id(TPACK_ALGORITHM_ED25519, trusted_public_key, sizeof trusted_public_key, NULL,
                                  trusted.key_id);
    if (r != TPACK_RESULT_OK) {
        fail("tpack_key_id: %s", tpack_result_message(r));
    }
    trusted.algorithm = TPACK_ALGORITHM_ED25519;
    trusted.public_key = trusted_public_key;
    trusted.public_key_len = sizeof trusted_public_key;
    policy.keys = &trusted;
    policy.key_count = 1;
    policy.require_signature = true;
    policy.min_counter = FLOOR;
    policy.subject = TRUSTED_SUBJECT;
    policy.subject_len = strlen(TRUSTED_SUBJECT);
    if ((tpack_builtin_algorithms() & (1u << TPACK_ALGORITHM_ED25519)) == 0) {
        fail("libtpack.a has no built-in Ed25519");
    }
    say("trusted key: Ed25519, id %02x%02x%02x%02x..., subject %s, counter floor %u\n", trusted.key_id[0],
        trusted.key_id[1], trusted.key_id[2], trusted.key_id[3], TRUSTED_SUBJECT, FLOOR);
}

/* The verdict of tpack_container_parse + tpack_container_verify_authentic on `bytes` in place. */
static tpack_result verify_in_place(const uint8_t *bytes, size_t len, tpack_container *c, tpack_error *err)
{
    tpack_result r = tpack_container_parse(bytes, len, c, err);
    return r == TPACK_RESULT_OK ? tpack_container_verify_authentic(c, &policy, NULL, err) : r;
}

/* Part 1: the models in flash, read in place. */
static void check_in_flash(void)
{
    const struct model_file *good = &models[0];
    tpack_container c;
    tpack_error err;
    if (verify_in_place(good->bytes, *good->len, &c, &err) != TPACK_RESULT_OK) {
        fail("the signed model in flash is refused: %s", text_of(&err));
    }
    /* Lazily: authenticate (prefix and digests only), then check each entry the MLP reads on first use. */
    tpack_authenticated auth;
    tpack_signed_attributes signer;
    if (tpack_container_authenticate(&c, &policy, NULL, &auth, &err) != TPACK_RESULT_OK ||
        tpack_authenticated_signer(&auth, &signer) != TPACK_RESULT_OK) {
        fail("tpack_container_authenticate refused the signed model: %s", text_of(&err));
    }
    static const char *const used[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.scale", "fc2.bias"};
    for (size_t i = 0; i < sizeof used / sizeof used[0]; i++) {
        tpack_entry e;
        tpack_bytes payload;
        if (tpack_container_find(&c, used[i], strlen(used[i]), &e) != TPACK_RESULT_OK ||
            tpack_authenticated_verify_entry(&auth, NULL, e.position, &payload, &err) != TPACK_RESULT_OK ||
            payload.data != e.payload.data) {
            fail("entry %s of the signed model not verified on first use", used[i]);
        }
    }
    say("signed model in flash: authentic (counter %u, subject %.*s), its %u used entries verified on first "
        "use (R64 each)\n",
        (unsigned) signer.counter, (int) signer.subject.len, signer.subject.data,
        (unsigned) (sizeof used / sizeof used[0]));
    /* The same entry of the forged copy is refused on first use: R64, with the entry. */
    const struct model_file *forged = &models[1];
    tpack_entry victim;
    tpack_bytes payload = {NULL, 0};
    if (tpack_container_parse(forged->bytes, *forged->len, &c, &err) != TPACK_RESULT_OK ||
        tpack_container_verify(&c, &err) != TPACK_RESULT_OK) {
        fail("the forged copy's CRCs do not hold: %s", text_of(&err));
    }
    if (tpack_container_authenticate(&c, &policy, NULL, &auth, &err) != TPACK_RESULT_OK ||
        tpack_container_find(&c, "fc1.weight", 10, &victim) != TPACK_RESULT_OK ||
        tpack_authenticated_verify_entry(&auth, NULL, victim.position, &payload, &err) !=
            TPACK_RESULT_INVALID_CONTAINER ||
        err.rule != 64 || err.entry != victim.position || payload.data != NULL) {
        fail("the forged fc1.weight was not refused on first use with R64");
    }
    say("forged copy: every CRC holds (tpack_container_verify: ok), fc1.weight refused on first use: %s\n",
        text_of(&err));
    for (size_t i = 1; i < sizeof models / sizeof models[0]; i++) {
        const struct model_file *m = &models[i];
        tpack_result r = verify_in_place(m->bytes, *m->len, &c, &err);
        if (r != TPACK_RESULT_INVALID_CONTAINER || err.rule != m->rule) {
            fail("model in flash (%s): result %u, rule %u, want %s", m->what, (unsigned) r, (unsigned) err.rule,
                 tpack_rule_id(m->rule));
        }
        say("model in flash (%s) refused by tpack_container_verify_authentic: %s\n", m->what, text_of(&err));
    }
}

/* What an install did. */
struct install {
    tpack_result verdict;
    tpack_error err;
    tpack_signer signer;
    unsigned prefix_events, payload_events;
    /* Bytes fed when tpack_signed_decoder_is_doomed first said yes; SIZE_MAX: never. */
    size_t doomed_at;
    /* Bytes held in RAM before the prefix was accepted; whether bytes now go to the staging slot. */
    size_t held;
    bool staging;
};

/* Bytes the decoder consumed at stream offset `at`: held in RAM until the prefix is accepted, staged after. */
static void keep(struct install *in, const uint8_t *p, size_t n, size_t at)
{
    if (in->staging) {
        flash_write(&staging, at, p, n);
    } else if (in->doomed_at == SIZE_MAX) {
        if (at + n > sizeof held) {
            fail("the prefix does not fit the %u bytes held", (unsigned) sizeof held);
        }
        memcpy(held + at, p, n);
        in->held = at + n;
    }
}

/* Streams `m` into the staging slot through a signed decoder, and commits it to the final region only once
   the decoder accepted it. */
static struct install install(const struct model_file *m)
{
    struct install in;
    memset(&in, 0, sizeof in);
    in.doomed_at = SIZE_MAX;
    flash_reset_counts(&staging);
    flash_reset_counts(&final_region);
    if (tpack_signed_decoder_init(&decoder, signed_decoder_buffer, sizeof signed_decoder_buffer, digests, sizeof digests,
                                  &policy, NULL, NULL) != TPACK_RESULT_OK) {
        fail("tpack_signed_decoder_init failed");
    }
    size_t len = *m->len;
    for (size_t off = 0; off < len; off += CHUNK) {
        const uint8_t *p = m->bytes + off;
        size_t rest = len - off < CHUNK ? len - off : CHUNK;
        for (unsigned guard = 0;; guard++) {
            size_t used;
            tpack_event ev;
            tpack_result r = tpack_signed_decoder_decode(&decoder, p, rest, &used, &ev, &in.err);
            if (r != TPACK_RESULT_OK) {
                in.verdict = r;
                return in;
            }
            if (used > rest || guard > 64) {
                fail("the signed decoder used %u of %u bytes", (unsigned) used, (unsigned) rest);
            }
            keep(&in, p, used, (size_t) (p - m->bytes));
            if (ev.kind == TPACK_EVENT_PREFIX) {
                /* Accepted from its prefix: erase the slot, stage what was held. */
                in.prefix_events++;
                flash_erase(&staging, 0, staging.len);
                flash_write(&staging, 0, held, in.held);
                in.staging = true;
            } else if (ev.kind == TPACK_EVENT_PAYLOAD) {
                in.payload_events++;
            }
            p += used;
            rest -= used;
            bool doomed;
            if (tpack_signed_decoder_is_doomed(&decoder, &doomed) != TPACK_RESULT_OK) {
                fail("tpack_signed_decoder_is_doomed failed");
            }
            if (doomed && in.doomed_at == SIZE_MAX) {
                in.doomed_at = (size_t) (p - m->bytes);
            }
            if (ev.kind == TPACK_EVENT_NONE) {
                break;
            }
        }
    }
    in.verdict = tpack_signed_decoder_finish(&decoder, &in.signer, &in.err);
    if (in.verdict == TPACK_RESULT_OK) {
        /* Authentic: now, and only now, the final region. */
        flash_erase(&final_region, 0, final_region.len);
        for (size_t at = 0; at < len; at += PAGE) {
            flash_write(&final_region, at, staging.bytes + at, len - at < PAGE ? len - at : PAGE);
        }
    }
    return in;
}

/* Part 2: every model over the stream. */
static void install_all(void)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const struct model_file *m = &models[i];
        struct install in = install(m);
        if (m->rule == 0) {
            if (in.verdict != TPACK_RESULT_OK || !in.signer.is_signed || in.signer.counter != COUNTER_FLOOR ||
                final_region.bytes_written != *m->len || in.prefix_events != 1) {
                fail("stream (%s): result %u (%s), %u bytes written to the final region", m->what,
                     (unsigned) in.verdict, in.verdict == TPACK_RESULT_OK ? "ok" : text_of(&in.err),
                     (unsigned) final_region.bytes_written);
            }
            say("stream (%s) accepted by tpack_signed_decoder_finish: %u bytes staged in %u writes, then "
                "committed: %u writes to the final region\n",
                m->what, (unsigned) staging.bytes_written, staging.writes, final_region.writes);
            tpack_container c;
            tpack_error err;
            if (verify_in_place(final_region.bytes, *m->len, &c, &err) != TPACK_RESULT_OK) {
                fail("the committed model is refused: %s", text_of(&err));
            }
            run_model(&c);
            say("the installed model runs from the final region; the counter floor may now rise to %u\n",
                (unsigned) in.signer.counter);
            continue;
        }
        if (in.verdict != TPACK_RESULT_INVALID_CONTAINER || in.err.rule != m->rule) {
            fail("stream (%s): result %u, rule %u, want %s", m->what, (unsigned) in.verdict,
                 (unsigned) in.err.rule, tpack_rule_id(m->rule));
        }
        if (final_region.writes != 0 || final_region.erases != 0) {
            fail("stream (%s): %u writes and %u erases of the final region", m->what, final_region.writes,
                 final_region.erases);
        }
        if (m->from_prefix && (in.prefix_events != 0 || in.payload_events != 0 || staging.writes != 0 ||
                               staging.erases != 0 || in.doomed_at == SIZE_MAX)) {
            fail("stream (%s): %u prefix and %u payload events, %u staging writes after a refused prefix",
                 m->what, in.prefix_events, in.payload_events, staging.writes);
        }
        if (m->from_prefix) {
            say("stream (%s) refused: %s; doomed after %u of %u bytes (the prefix), %u payload events, %u staging "
                "writes, final-region writes: %u\n",
                m->what, text_of(&in.err), (unsigned) in.doomed_at, (unsigned) *m->len, in.payload_events,
                staging.writes, final_region.writes);
        } else {
            say("stream (%s) refused by tpack_signed_decoder_finish: %s; %u payload events, %u staging writes, "
                "final-region writes: %u\n",
                m->what, text_of(&in.err), in.payload_events, staging.writes, final_region.writes);
        }
    }
}

void run_signed(void)
{
    say("signed decoder RAM: state %u bytes (TPACK_SIGNED_DECODER_SIZE) + buffer %u + digests %u bytes\n",
        (unsigned) sizeof decoder, (unsigned) sizeof signed_decoder_buffer, (unsigned) sizeof digests);
    make_policy();
    check_in_flash();
    install_all();
}
