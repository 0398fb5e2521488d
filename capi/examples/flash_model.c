/* A model in flash, read in place: check it once at boot, then run it from where it lies (no copy, no malloc).
 *
 * On a microcontroller the container is linked into flash (`.balign 64` then `.incbin "tiny-mlp.tpack"` in a
 * `.rodata` section) and `model_open` is called with its address and length. On a host, main() below maps a
 * file read-only, which stands in for memory-mapped flash:
 *
 *   flash_model MODEL.tpack            exit 0: the model checked and run; 1: refused (the rule printed)
 *   flash_model --misaligned MODEL     the same bytes one byte off their alignment: refused, never read as floats
 *
 * The model is embedded/tiny-mlp's: metadata `model.layers` (u64[]: inputs, hidden, outputs) and `model.labels`
 * (string[]), weights fc1.weight (F32 [hidden, inputs]), fc1.bias, fc2.weight (I8 [outputs, hidden]),
 * fc2.scale (F32, rank 0), fc2.bias, and the test inputs test.inputs (F32 [n, inputs]). docs/c-api.md shows
 * parts of this file; CI checks that they are the same text, and builds and runs it (capi/examples/run.sh). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpack.h"

#define MAX_WIDTH 16

/* The model as the application uses it: pointers into flash, checked once. */
struct model {
    tpack_container container; /* 160 bytes: a handle that borrows the flash bytes */
    uint64_t inputs, hidden, outputs;
    const float *fc1_weight, *fc1_bias, *fc2_scale, *fc2_bias;
    const int8_t *fc2_weight;
};

/* Why a container was refused. tpack_rule_id() is NULL when no rule of the spec is broken (a bad argument, a
 * buffer too small, ...): then the result code says what happened. */
static void report_refusal(const char *what, const tpack_error *err) {
    const char *rule = tpack_rule_id(err->rule);
    char msg[200];
    tpack_error_message(err, msg, sizeof msg);
    printf("%s refused (%s): %s\n", what, rule ? rule : tpack_result_message((tpack_result)err->result), msg);
}

/* The entry `name` as `count` values of `dtype` that the CPU may read in place. A payload is aligned to its
 * entry's alignment relative to the container's first byte, so it is aligned in memory only when the container
 * is: check before casting, instead of reading a misaligned float (undefined behaviour in C, a fault on a
 * Cortex-M0). */
static const void *tensor(const tpack_container *c, const char *name, uint16_t dtype, size_t elem_size,
                          uint64_t count) {
    tpack_entry e;
    if (tpack_container_find(c, name, TPACK_NUL_TERMINATED, &e) != TPACK_RESULT_OK) {
        printf("model: no entry %s\n", name);
        return NULL;
    }
    if (e.dtype != dtype || e.payload.len != count * elem_size) {
        printf("model: %s is not %llu values of %s\n", name, (unsigned long long)count, tpack_dtype_name(dtype));
        return NULL;
    }
    if ((uintptr_t)e.payload.data % elem_size != 0) {
        printf("model: %s is not aligned in memory: place the container at a 64-byte boundary\n", name);
        return NULL;
    }
    return e.payload.data;
}

/* Checks the container in flash once (structure, padding, every payload's CRC-32) and points `m` into it. */
static int model_open(const uint8_t *flash, size_t len, struct model *m) {
    tpack_error err;
    if (tpack_container_parse(flash, len, &m->container, &err) != TPACK_RESULT_OK ||
        tpack_container_verify(&m->container, &err) != TPACK_RESULT_OK) {
        report_refusal("model", &err);
        return -1;
    }
    /* model.layers: three widths, as uint64_t whatever unsigned type was stored (up to 4 read: 3 must come). */
    tpack_meta_value layers;
    uint64_t widths[4];
    size_t n = 0;
    if (tpack_metadata_get(&m->container, "model.layers", TPACK_NUL_TERMINATED, &layers) != TPACK_RESULT_OK ||
        tpack_meta_array_read(&layers, 0, 4, TPACK_META_U64, widths, &n) != TPACK_RESULT_OK || n != 3 ||
        widths[0] > MAX_WIDTH || widths[1] > MAX_WIDTH || widths[2] > MAX_WIDTH) {
        printf("model: model.layers is not three widths of at most %d\n", MAX_WIDTH);
        return -1;
    }
    m->inputs = widths[0], m->hidden = widths[1], m->outputs = widths[2];
    m->fc1_weight = tensor(&m->container, "fc1.weight", TPACK_DTYPE_F32, 4, m->hidden * m->inputs);
    m->fc1_bias = tensor(&m->container, "fc1.bias", TPACK_DTYPE_F32, 4, m->hidden);
    m->fc2_weight = tensor(&m->container, "fc2.weight", TPACK_DTYPE_I8, 1, m->outputs * m->hidden);
    m->fc2_scale = tensor(&m->container, "fc2.scale", TPACK_DTYPE_F32, 4, 1);
    m->fc2_bias = tensor(&m->container, "fc2.bias", TPACK_DTYPE_F32, 4, m->outputs);
    if (!m->fc1_weight || !m->fc1_bias || !m->fc2_weight || !m->fc2_scale || !m->fc2_bias) return -1;
    return 0;
}

/* Runs the model on `input` and returns the predicted class: the weights are read straight from flash. */
static unsigned model_run(const struct model *m, const float *input) {
    float hidden[MAX_WIDTH];
    for (uint64_t j = 0; j < m->hidden; j++) {
        float acc = m->fc1_bias[j];
        for (uint64_t i = 0; i < m->inputs; i++) acc += m->fc1_weight[j * m->inputs + i] * input[i];
        hidden[j] = acc > 0.0f ? acc : 0.0f;
    }
    unsigned best = 0;
    float best_logit = 0.0f;
    for (uint64_t o = 0; o < m->outputs; o++) {
        float acc = 0.0f;
        for (uint64_t j = 0; j < m->hidden; j++) acc += (float)m->fc2_weight[o * m->hidden + j] * hidden[j];
        float logit = acc * m->fc2_scale[0] + m->fc2_bias[o];
        if (o == 0 || logit > best_logit) best = (unsigned)o, best_logit = logit;
    }
    return best;
}

/* Names and strings come from the file: print them escaped, never raw. */
static void print_escaped(tpack_str s) {
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') putchar(c); else printf("\\x%02x", c);
    }
}

/* The host's stand-in for a firmware's boot: the file mapped read-only plays the flash. */
int main(int argc, char **argv) {
    int misaligned = argc == 3 && strcmp(argv[1], "--misaligned") == 0;
    if (argc != 2 && !misaligned) {
        fprintf(stderr, "usage: flash_model [--misaligned] MODEL.tpack\n");
        return 2;
    }
    int fd = open(argv[argc - 1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        fprintf(stderr, "flash_model: cannot read %s\n", argv[argc - 1]);
        return 2;
    }
    size_t len = (size_t)st.st_size;
    const uint8_t *flash;
    if (!misaligned) {
        /* mmap gives a page-aligned address, as a linker script gives an aligned one in flash. */
        void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) return 2;
        flash = map;
    } else {
        /* The same container one byte off an aligned address. */
        uint8_t *copy = mmap(NULL, len + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (copy == MAP_FAILED || read(fd, copy + 1, len) != (ssize_t)len) return 2;
        flash = copy + 1;
    }
    close(fd);

    static struct model m;
    if (model_open(flash, len, &m) != 0) return 1;
    printf("model in flash at %p: %llu-%llu-%llu, every checksum verified, weights read in place\n",
           (const void *)flash, (unsigned long long)m.inputs, (unsigned long long)m.hidden,
           (unsigned long long)m.outputs);

    /* Run it on the test inputs the container carries, and name each class by model.labels. */
    const float *inputs = NULL;
    tpack_entry t;
    if (tpack_container_find(&m.container, "test.inputs", TPACK_NUL_TERMINATED, &t) == TPACK_RESULT_OK && t.rank == 2 &&
        t.dims[1] == m.inputs)
        inputs = tensor(&m.container, "test.inputs", TPACK_DTYPE_F32, 4, t.dims[0] * m.inputs);
    tpack_meta_value labels;
    int have_labels = tpack_metadata_get(&m.container, "model.labels", TPACK_NUL_TERMINATED, &labels) == TPACK_RESULT_OK;
    for (uint64_t k = 0; inputs && k < t.dims[0]; k++) {
        unsigned class = model_run(&m, inputs + k * m.inputs);
        tpack_str label;
        printf("input %llu: class %u", (unsigned long long)k, class);
        if (have_labels && tpack_meta_string_at(&labels, class, &label) == TPACK_RESULT_OK) {
            printf(" (");
            print_escaped(label);
            printf(")");
        }
        printf("\n");
    }
    return 0;
}
