/* A C firmware for QEMU's mps2-an386 board (Cortex-M4F) that uses tpack through its C API (capi/include/tpack.h,
   libtpack.a from capi/firmware-staticlib), with no heap:
 *
 * 1. The model container, in flash at a 64-byte boundary (model.S), is parsed and verified in place into a
 *    tpack_container on the stack: every structural rule, every payload checksum.
 * 2. Corrupted copies in RAM are refused by the rule each breaks (a payload byte: R50 at verify; the magic: R2,
 *    the stored header checksum and a name byte: R13 at parse), and no weight of them is used.
 * 3. The MLP of embedded/tiny-mlp runs in C on weights read in place from flash (entries by name, dtype, dims,
 *    payload pointers), on the held-out inputs stored with the model; every logit must equal the host's
 *    (embedded/tiny-mlp/src/expected.rs, turned into expected.h by build.sh) bit for bit.
 * 4. The push decoder takes the container in 61-byte chunks, in a caller buffer sized by
 *    tpack_decoder_buffer_needed; its payload events must match flash, and streams with a flipped payload byte
 *    (R50) and a flipped name byte (R13, before any payload event) must be refused.
 * 5. Signed models (signed.c): authenticated in flash, and installed over a stream through a signed decoder
 *    with a flash model that counts writes; every forgery is refused by its rule with 0 writes to the final
 *    region.
 *
 * Output and the exit status go to the host through semihosting; any failure exits non-zero. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "expected.h"
#include "firmware.h"
#include "semihost.h"
#include "tpack.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "payloads are little-endian and read in place: this firmware is for a little-endian core"
#endif

/* The container in flash (model.S). */
extern const uint8_t tpack_model[];
extern const uint32_t tpack_model_len;

/* The dtype codes of spec/FORMAT.md §4.1 from tpack.h; checked against tpack_dtype_name at boot. */
#define DTYPE_F32 ((unsigned) TPACK_DTYPE_F32)
#define DTYPE_I8 ((unsigned) TPACK_DTYPE_I8)

/* Most inputs, hidden units and outputs the fixed-size buffers hold (tiny_mlp::MAX_WIDTH). */
#define MAX_WIDTH 32u
/* Most labels kept from model.labels. */
#define MAX_LABELS MAX_WIDTH

/* The chunk size of the stream phase: odd, so chunk boundaries fall inside every section (as the Rust
   firmware's 61-byte reads). */
#define CHUNK 61u

/* The bit flipped by every corruption (as embedded/firmware/build.rs). */
#define FLIP 0x10u

/* Room for the RAM copies of the model; checked against its length. */
#define RAM_COPY_LEN 4096u

/* The decoder's buffer; the length used is tpack_decoder_buffer_needed's, checked to fit. */
#define DECODER_BUFFER_LEN 4096u

/* The container is aligned in its RAM copy as in flash. */
static uint8_t ram_copy[RAM_COPY_LEN] __attribute__((aligned(64)));
static uint8_t decoder_buffer[DECODER_BUFFER_LEN] __attribute__((aligned(8)));

static char message[256];

/* The error's message (the core's own text, naming the rule), in `message`. Built with -DSHORT_MESSAGES (size.sh
   does, to measure it), the rule's name instead: tpack_error_message is then not linked, and with it the formatting
   code and every rule's text. */
const char *text_of(const tpack_error *err)
{
#ifdef SHORT_MESSAGES
    (void)message;
    const char *name = tpack_rule_name(err->rule);
    return name ? name : tpack_result_message((tpack_result)err->result);
#else
    if (tpack_error_message(err, message, sizeof message) != TPACK_RESULT_OK) {
        return "(no message)";
    }
    return message;
#endif
}

static float f32_at(const uint8_t *payload, size_t i)
{
    float f;
    memcpy(&f, payload + 4 * i, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Whether `name` (NULL or NUL-terminated) is `want`. Not strcmp: newlib-nano's costs 732 bytes of flash, and the
   archive's compiler_builtins already gives strlen and memcmp. */
static bool is(const char *name, const char *want)
{
    return name != NULL && strlen(name) == strlen(want) && memcmp(name, want, strlen(want)) == 0;
}

static void check_dtype_codes(void)
{
    const char *f32 = tpack_dtype_name(DTYPE_F32);
    const char *i8 = tpack_dtype_name(DTYPE_I8);
    if (!is(f32, "F32") || !is(i8, "I8")) {
        fail("dtype codes %u and %u are not F32 and I8 (%s, %s)", DTYPE_F32, DTYPE_I8, f32, i8);
    }
}

/* Parses and verifies the container in flash, in place, into `c`. */
static void load_and_verify(tpack_container *c)
{
    uintptr_t at = (uintptr_t) tpack_model;
    if (at % 64 != 0) {
        fail("the container is not 64-byte aligned in flash (%p)", (const void *) tpack_model);
    }
    tpack_error err;
    if (tpack_container_parse(tpack_model, tpack_model_len, c, &err) != TPACK_RESULT_OK ||
        tpack_container_verify(c, &err) != TPACK_RESULT_OK) {
        fail("model refused: %s", text_of(&err));
    }
    size_t count;
    uint16_t major, minor;
    if (tpack_container_entry_count(c, &count) != TPACK_RESULT_OK ||
        tpack_container_version(c, &major, &minor) != TPACK_RESULT_OK) {
        fail("entry count or version unavailable");
    }
    /* Every payload must be aligned in memory as its entry asks: true when the container's start is aligned
       to the largest alignment. */
    for (size_t i = 0; i < count; i++) {
        tpack_entry e;
        if (tpack_container_entry(c, i, &e) != TPACK_RESULT_OK) {
            fail("entry %u unavailable", (unsigned) i);
        }
        if (e.alignment == 0 || (uintptr_t) e.payload.data % e.alignment != 0) {
            fail("entry %.*s: payload at %p is not %u-byte aligned (align the container in model.S)",
                 (int) e.name.len, e.name.data, (const void *) e.payload.data, (unsigned) e.alignment);
        }
    }
    say("model in flash at %p: %u bytes, format %u.%u, %u entries, every checksum verified in place\n",
        (const void *) tpack_model, (unsigned) tpack_model_len, major, minor, (unsigned) count);
}

/* One corruption of the model: a bit flipped at a byte, and the rule that must refuse it. */
struct corruption {
    const char *what;
    size_t at;
    uint32_t rule;
    /* Whether parse accepts it and verify (which reads the payloads) refuses it. */
    bool at_verify;
};

/* Refuses each corruption of a RAM copy by its rule; `model` (verified) only gives the byte positions. */
static void refuse_corrupt_copies(const tpack_container *model)
{
    if (tpack_model_len > sizeof ram_copy) {
        fail("the model (%u bytes) does not fit the RAM copy (%u)", (unsigned) tpack_model_len,
             (unsigned) sizeof ram_copy);
    }
    tpack_entry victim;
    if (tpack_container_find(model, "fc1.weight", 10, &victim) != TPACK_RESULT_OK) {
        fail("no entry fc1.weight");
    }
    const struct corruption cases[] = {
        {"payload byte of fc1.weight", (size_t) victim.offset + 5, 50, true},
        {"magic byte", 1, 2, false},
        {"stored header checksum byte", 52, 13, false},
        {"name byte of fc1.weight", (size_t) (victim.name.data - (const char *) tpack_model) + 2, 13, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct corruption *k = &cases[i];
        memcpy(ram_copy, tpack_model, tpack_model_len);
        ram_copy[k->at] ^= FLIP;
        tpack_container c;
        tpack_error err;
        tpack_result parsed = tpack_container_parse(ram_copy, tpack_model_len, &c, &err);
        tpack_result verdict = parsed == TPACK_RESULT_OK ? tpack_container_verify(&c, &err) : parsed;
        if (verdict == TPACK_RESULT_OK) {
            fail("a copy with a flipped %s was accepted", k->what);
        }
        if (verdict != TPACK_RESULT_INVALID_CONTAINER || err.result != verdict || err.rule != k->rule) {
            fail("a copy with a flipped %s: result %u, rule %u (want %s): %s", k->what, (unsigned) verdict,
                 (unsigned) err.rule, tpack_rule_id(k->rule), text_of(&err));
        }
        if ((parsed == TPACK_RESULT_OK) != k->at_verify) {
            fail("a copy with a flipped %s was refused by %s, not %s", k->what, k->at_verify ? "parse" : "verify",
                 k->at_verify ? "verify" : "parse");
        }
        /* Refused: nothing of the copy is read further, no weight used. */
        say("corrupted copy (%s at byte %u) refused by %s, no weight used: %s (%s): %s\n", k->what,
            (unsigned) k->at, k->at_verify ? "verify" : "parse", tpack_rule_id(err.rule),
            tpack_rule_name(err.rule), text_of(&err));
    }
}

/* The weights of the model, in place in the container. */
struct model {
    size_t n_in, n_hidden, n_out;
    const uint8_t *fc1_weight; /* F32 [n_hidden, n_in] */
    const uint8_t *fc1_bias;   /* F32 [n_hidden] */
    const int8_t *fc2_weight;  /* I8 [n_out, n_hidden] */
    float fc2_scale;           /* F32 [] */
    const uint8_t *fc2_bias;   /* F32 [n_out] */
};

/* The entry `name`, which must have `dtype` and dimensions `dims` (`rank` of them), and a payload of exactly
   that many elements. */
static tpack_entry entry(const tpack_container *c, const char *name, uint16_t dtype, uint8_t rank,
                         const uint64_t *dims)
{
    tpack_entry e;
    if (tpack_container_find(c, name, strlen(name), &e) != TPACK_RESULT_OK) {
        fail("no entry %s", name);
    }
    uint64_t elements = 1;
    bool same = e.dtype == dtype && e.rank == rank;
    for (uint8_t d = 0; same && d < rank; d++) {
        same = e.dims[d] == dims[d];
        elements *= dims[d];
    }
    size_t element_size = dtype == DTYPE_I8 ? 1 : 4;
    if (!same || e.payload.len != elements * element_size || (uintptr_t) e.payload.data % element_size != 0) {
        fail("entry %s: dtype %s, rank %u, %u bytes; not what model.layers gives", name,
             tpack_dtype_name(e.dtype), e.rank, (unsigned) e.payload.len);
    }
    return e;
}

/* Reads model.layers (u64[3]) and the weights, as tiny_mlp::Model::from_container. */
static struct model model_of(const tpack_container *c)
{
    tpack_meta_value layers;
    size_t n;
    uint64_t w[3];
    if (tpack_metadata_get(c, "model.layers", 12, &layers) != TPACK_RESULT_OK ||
        tpack_meta_array_len(&layers, &n) != TPACK_RESULT_OK || n != 3 ||
        tpack_meta_u64_at(&layers, 0, &w[0]) != TPACK_RESULT_OK ||
        tpack_meta_u64_at(&layers, 1, &w[1]) != TPACK_RESULT_OK ||
        tpack_meta_u64_at(&layers, 2, &w[2]) != TPACK_RESULT_OK) {
        fail("model.layers is not a u64[] of 3 widths");
    }
    for (size_t i = 0; i < 3; i++) {
        if (w[i] == 0 || w[i] > MAX_WIDTH) {
            fail("model.layers: width %u is 0 or above %u", (unsigned) w[i], MAX_WIDTH);
        }
    }
    struct model m = {(size_t) w[0], (size_t) w[1], (size_t) w[2], NULL, NULL, NULL, 0.0f, NULL};
    const uint64_t fc1[2] = {w[1], w[0]}, fc2[2] = {w[2], w[1]};
    m.fc1_weight = entry(c, "fc1.weight", DTYPE_F32, 2, fc1).payload.data;
    m.fc1_bias = entry(c, "fc1.bias", DTYPE_F32, 1, &w[1]).payload.data;
    m.fc2_weight = (const int8_t *) entry(c, "fc2.weight", DTYPE_I8, 2, fc2).payload.data;
    m.fc2_scale = f32_at(entry(c, "fc2.scale", DTYPE_F32, 0, NULL).payload.data, 0);
    m.fc2_bias = entry(c, "fc2.bias", DTYPE_F32, 1, &w[2]).payload.data;
    return m;
}

/* tiny_mlp::Model::infer, operation for operation: every sum in index order, in f32, each product rounded
   before it is added (no FMA: built with -ffp-contract=off). Returns the first largest logit's index. */
static size_t infer(const struct model *m, const float *input, float *logits)
{
    float hidden[MAX_WIDTH] = {0};
    for (size_t j = 0; j < m->n_hidden; j++) {
        float acc = f32_at(m->fc1_bias, j);
        for (size_t k = 0; k < m->n_in; k++) {
            acc += f32_at(m->fc1_weight, j * m->n_in + k) * input[k];
        }
        hidden[j] = acc > 0.0f ? acc : 0.0f;
    }
    size_t best = 0;
    for (size_t i = 0; i < m->n_out; i++) {
        float acc = 0.0f;
        for (size_t k = 0; k < m->n_hidden; k++) {
            acc += (float) m->fc2_weight[i * m->n_hidden + k] * hidden[k];
        }
        logits[i] = acc * m->fc2_scale + f32_at(m->fc2_bias, i);
        if (i == 0 || logits[i] > logits[best]) {
            best = i;
        }
    }
    return best;
}

void run_model(const tpack_container *c)
{
    tpack_meta_value v;
    tpack_str name = {"?", 1};
    if (tpack_metadata_get(c, "model.name", 10, &v) != TPACK_RESULT_OK || tpack_meta_string(&v, &name) != TPACK_RESULT_OK) {
        name = (tpack_str) {"?", 1};
    }
    struct model m = model_of(c);
    say("model \"%.*s\": layers %u -> %u -> %u (from metadata model.layers)\n", (int) name.len, name.data,
        (unsigned) m.n_in, (unsigned) m.n_hidden, (unsigned) m.n_out);
    say("weights read in place: fc1.weight at %p (flash), dtype %s; fc2.weight dtype %s\n",
        (const void *) m.fc1_weight, tpack_dtype_name(DTYPE_F32), tpack_dtype_name(DTYPE_I8));
    tpack_meta_value labels;
    bool have_labels = tpack_metadata_get(c, "model.labels", 12, &labels) == TPACK_RESULT_OK;

    tpack_entry inputs;
    if (tpack_container_find(c, "test.inputs", 11, &inputs) != TPACK_RESULT_OK || inputs.dtype != DTYPE_F32 ||
        inputs.rank != 2 || inputs.dims[1] != m.n_in || inputs.payload.len != inputs.dims[0] * m.n_in * 4) {
        fail("no test.inputs of F32 [n, %u]", (unsigned) m.n_in);
    }
    size_t count = (size_t) inputs.dims[0];
    if (count != EXPECTED_INPUTS || m.n_out != EXPECTED_OUTPUTS) {
        fail("%u inputs with %u outputs, but the host computed %u with %u", (unsigned) count, (unsigned) m.n_out,
             EXPECTED_INPUTS, EXPECTED_OUTPUTS);
    }
    for (size_t i = 0; i < count; i++) {
        float x[MAX_WIDTH], logits[MAX_WIDTH];
        for (size_t k = 0; k < m.n_in; k++) {
            x[k] = f32_at(inputs.payload.data, i * m.n_in + k);
        }
        size_t class = infer(&m, x, logits);
        tpack_str label = {"?", 1};
        if (!have_labels || tpack_meta_string_at(&labels, class, &label) != TPACK_RESULT_OK) {
            label = (tpack_str) {"?", 1};
        }
        say("input %u: class %u (%.*s), logit bits", (unsigned) i, (unsigned) class, (int) label.len, label.data);
        for (size_t o = 0; o < m.n_out; o++) {
            say(" 0x%08lx", (unsigned long) bits_of(logits[o]));
        }
        say("\n");
        if (class != expected_classes[i]) {
            fail("input %u: class %u, but the host computed %u", (unsigned) i, (unsigned) class,
                 (unsigned) expected_classes[i]);
        }
        for (size_t o = 0; o < m.n_out; o++) {
            if (bits_of(logits[o]) != expected_logit_bits[i][o]) {
                fail("input %u, logit %u: 0x%08lx, but the host computed 0x%08lx", (unsigned) i, (unsigned) o,
                     (unsigned long) bits_of(logits[o]), (unsigned long) expected_logit_bits[i][o]);
            }
        }
    }
    say("all %u results equal the host's, bit for bit (model in flash, math in C)\n", (unsigned) count);
}

/* What a stream gave: events and payload bytes, and the verdict. */
struct stream_run {
    tpack_result verdict;
    tpack_error err;
    unsigned prefixes, payload_events, entry_ends, ends;
    uint64_t payload_bytes;
    /* Bytes fed when tpack_decoder_is_doomed first said yes (checked after each chunk); SIZE_MAX: never. */
    size_t doomed_at;
};

/* Feeds `bytes` to a fresh decoder in CHUNK-byte chunks; every payload event must point into the chunk where
   the verified model (`model`) places that entry and offset. */
static struct stream_run stream(const tpack_container *model, const uint8_t *bytes, size_t len, size_t buffer_len)
{
    static tpack_decoder dec;
    struct stream_run run = {0};
    run.doomed_at = SIZE_MAX;
    if (tpack_decoder_init(&dec, decoder_buffer, buffer_len, NULL) != TPACK_RESULT_OK) {
        fail("tpack_decoder_init refused a %u-byte buffer", (unsigned) buffer_len);
    }
    for (size_t off = 0; off < len; off += CHUNK) {
        const uint8_t *p = bytes + off;
        size_t rest = len - off < CHUNK ? len - off : CHUNK;
        for (unsigned guard = 0;; guard++) {
            size_t used;
            tpack_event ev;
            tpack_result r = tpack_decoder_decode(&dec, p, rest, &used, &ev, &run.err);
            if (r != TPACK_RESULT_OK) {
                run.verdict = r;
                return run;
            }
            if (used > rest || guard > 64) {
                fail("the decoder used %u of %u bytes (call %u of a chunk)", (unsigned) used, (unsigned) rest, guard);
            }
            p += used;
            rest -= used;
            if (ev.kind == TPACK_EVENT_NONE) {
                break;
            }
            switch (ev.kind) {
            case TPACK_EVENT_PREFIX:
                run.prefixes++;
                break;
            case TPACK_EVENT_PAYLOAD: {
                tpack_entry e;
                if (tpack_container_entry(model, ev.entry, &e) != TPACK_RESULT_OK ||
                    ev.offset + ev.bytes.len > e.payload.len) {
                    fail("payload event for entry %u at %u is not in the model", (unsigned) ev.entry,
                         (unsigned) ev.offset);
                }
                const uint8_t *in_stream = bytes + (e.payload.data - tpack_model) + ev.offset;
                if (ev.bytes.data != in_stream) {
                    fail("payload event for entry %u: bytes at %p, not %p", (unsigned) ev.entry,
                         (const void *) ev.bytes.data, (const void *) in_stream);
                }
                run.payload_events++;
                run.payload_bytes += ev.bytes.len;
                break;
            }
            case TPACK_EVENT_ENTRY_END:
                run.entry_ends++;
                break;
            case TPACK_EVENT_END:
                run.ends++;
                break;
            default:
                fail("unknown decoder event %u", (unsigned) ev.kind);
            }
        }
        bool doomed;
        if (tpack_decoder_is_doomed(&dec, &doomed) != TPACK_RESULT_OK) {
            fail("tpack_decoder_is_doomed failed");
        }
        if (doomed && run.doomed_at == SIZE_MAX) {
            run.doomed_at = off + (size_t) (p - (bytes + off));
        }
    }
    run.verdict = tpack_decoder_finish(&dec, &run.err);
    return run;
}

static void run_streams(const tpack_container *model)
{
    uint64_t needed;
    tpack_result r = tpack_decoder_buffer_needed(tpack_model, tpack_model_len, &needed, NULL);
    if (r != TPACK_RESULT_OK) {
        fail("tpack_decoder_buffer_needed: %s", tpack_result_message(r));
    }
    if (needed > sizeof decoder_buffer) {
        fail("the decoder needs a %u-byte buffer, more than %u", (unsigned) needed, (unsigned) sizeof decoder_buffer);
    }
    say("stream decoder RAM: state %u bytes (TPACK_DECODER_SIZE) + buffer %u bytes (tpack_decoder_buffer_needed)\n",
        (unsigned) sizeof(tpack_decoder), (unsigned) needed);

    size_t count;
    uint64_t total = 0, first_payload = UINT64_MAX;
    (void) tpack_container_entry_count(model, &count);
    for (size_t i = 0; i < count; i++) {
        tpack_entry e;
        (void) tpack_container_entry(model, i, &e);
        total += e.payload.len;
        first_payload = e.offset < first_payload ? e.offset : first_payload;
    }
    struct stream_run ok = stream(model, tpack_model, tpack_model_len, (size_t) needed);
    if (ok.verdict != TPACK_RESULT_OK || ok.prefixes != 1 || ok.ends != 1 || ok.entry_ends != count ||
        ok.payload_bytes != total) {
        fail("stream of the model: result %u (%s), %u prefix, %u entry ends of %u, %u payload bytes of %u",
             (unsigned) ok.verdict, ok.verdict == TPACK_RESULT_OK ? "ok" : text_of(&ok.err), ok.prefixes,
             ok.entry_ends, (unsigned) count, (unsigned) ok.payload_bytes, (unsigned) total);
    }
    say("stream received: %u bytes in %u-byte chunks, %u payload events (%u bytes, each in place in its chunk), "
        "verdict of tpack_decoder_finish: ok\n",
        (unsigned) tpack_model_len, CHUNK, ok.payload_events, (unsigned) ok.payload_bytes);

    tpack_entry victim;
    (void) tpack_container_find(model, "fc1.weight", 10, &victim);
    memcpy(ram_copy, tpack_model, tpack_model_len);
    ram_copy[victim.offset + 5] ^= FLIP;
    struct stream_run bad = stream(model, ram_copy, tpack_model_len, (size_t) needed);
    /* The payload checksums are compared by tpack_decoder_finish, once the trailer is in. */
    if (bad.verdict != TPACK_RESULT_INVALID_CONTAINER || bad.err.rule != 50) {
        fail("stream with a flipped payload byte: result %u, rule %u", (unsigned) bad.verdict,
             (unsigned) bad.err.rule);
    }
    say("stream with a flipped payload byte refused by tpack_decoder_finish: %s: %s\n", tpack_rule_id(bad.err.rule),
        text_of(&bad.err));

    memcpy(ram_copy, tpack_model, tpack_model_len);
    ram_copy[(size_t) (victim.name.data - (const char *) tpack_model) + 2] ^= FLIP;
    struct stream_run name = stream(model, ram_copy, tpack_model_len, (size_t) needed);
    /* The header checksum covers the names: the stream is doomed as soon as the prefix is in, and not one
       payload byte is handed out. */
    if (name.verdict != TPACK_RESULT_INVALID_CONTAINER || name.err.rule != 13 || name.payload_events != 0 ||
        name.prefixes != 0 || name.doomed_at > first_payload) {
        fail("stream with a flipped name byte: result %u, rule %u, %u payload events, %u prefix events, doomed at %u",
             (unsigned) name.verdict, (unsigned) name.err.rule, name.payload_events, name.prefixes,
             (unsigned) name.doomed_at);
    }
    say("stream with a flipped name byte refused: %s; doomed after %u of %u bytes (before the first payload), "
        "%u payload events\n",
        text_of(&name.err), (unsigned) name.doomed_at, (unsigned) tpack_model_len, name.payload_events);
}

int main(void)
{
    say("tpack C firmware on mps2-an386 (Cortex-M4F), through the C API (libtpack.a)\n");
    check_dtype_codes();
    tpack_container model;
    load_and_verify(&model);
    refuse_corrupt_copies(&model);
    run_model(&model);
    run_streams(&model);
#ifndef NO_SIGNED /* size.sh builds without it, to measure what signed models cost */
    run_signed();
#endif
    say("stack high-water mark: %u bytes\n", (unsigned) stack_high_water());
    say("PASS\n");
    return 0;
}
