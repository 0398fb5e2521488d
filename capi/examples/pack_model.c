/* A host tool that packs a model for the device: weights from training (here made up by a formula) are
 * quantized where the device wants integers, described by metadata, and written as one container, a payload
 * at a time, without ever holding the file in memory.
 *
 *   pack_model OUT.tpack      writes a tiny-mlp model (the layout flash_model.c and ota_receive.c expect)
 *
 * The writer is the seekable one, on a FILE *: it writes zeros for the prefix, streams the payloads, then
 * seeks back to fill the prefix in at tpack_writer_finish (the one-pass writer, tpack_writer_init, needs no
 * seek and suits a pipe or a socket). docs/c-api.md shows parts of this file; CI checks that they are the same
 * text, and builds and runs it (capi/examples/run.sh). */
#define _POSIX_C_SOURCE 200809L /* fseeko, ftello */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "tpack.h"

enum { INPUTS = 4, HIDDEN = 8, OUTPUTS = 3, TESTS = 6 };

/* The writer's sink: a FILE *. Both callbacks return 0 for success. */
static int32_t file_write(void *user, const uint8_t *bytes, size_t len) {
    return fwrite(bytes, 1, len, (FILE *)user) == len ? 0 : -1;
}
static int32_t file_seek(void *user, int64_t offset, int32_t whence, uint64_t *out_position) {
    FILE *f = user;
    int how = whence == TPACK_SEEK_SET ? SEEK_SET : whence == TPACK_SEEK_CUR ? SEEK_CUR : SEEK_END;
    if (fseeko(f, (off_t)offset, how) != 0) return -1;
    off_t at = ftello(f);
    if (at < 0) return -1;
    *out_position = (uint64_t)at;
    return 0;
}

static void report(const char *what, const tpack_error *err) {
    const char *rule = tpack_rule_id(err->rule); /* NULL unless a rule of the spec is broken */
    char msg[200];
    tpack_error_message(err, msg, sizeof msg);
    fprintf(stderr, "pack_model: %s failed (%s): %s\n", what, rule ? rule : "no rule", msg);
}

/* Metadata: one typed call per value, gguf style; numbers in host order, strings NUL-terminated. */
static int write_metadata(tpack_writer *w, tpack_error *err) {
    static const char *const labels[OUTPUTS] = {"setosa", "versicolor", "virginica"};
    static const uint64_t layers[3] = {INPUTS, HIDDEN, OUTPUTS};
    const size_t nul = TPACK_NUL_TERMINATED;
    if (tpack_writer_metadata_u64_array(w, "model.layers", nul, layers, 3, err) != TPACK_RESULT_OK ||
        tpack_writer_metadata_string_array(w, "model.labels", nul, labels, OUTPUTS, err) != TPACK_RESULT_OK ||
        tpack_writer_metadata_string(w, "model.name", nul, "tiny-mlp", nul, err) != TPACK_RESULT_OK ||
        tpack_writer_metadata_string(w, "model.activation", nul, "relu", nul, err) != TPACK_RESULT_OK)
        return -1;
    return 0;
}

/* One tensor: declared, then its payload. Payloads go out in the order they were declared. */
struct tensor {
    const char *name;
    uint16_t dtype;
    uint8_t rank;
    uint64_t dims[2];
    const void *data;
    size_t len;
};

/* Payloads are the tensors' bytes as the container stores them, little-endian: so are the arrays below on the
 * hosts this tool runs on (x86, ARM); a big-endian host would swap each value before tpack_writer_write. */
static int pack(FILE *out, const struct tensor *t, size_t count, uint64_t *out_len) {
    static tpack_writer w;           /* TPACK_WRITER_SIZE = 512 bytes */
    static uint8_t bookkeeping[4096]; /* entries, names, metadata: tpack_writer_bookkeeping_size() says how much */
    tpack_error err;
    size_t needed;
    if (tpack_writer_bookkeeping_size(16, 512, &needed) != TPACK_RESULT_OK || needed > sizeof bookkeeping) return -1;
    if (tpack_writer_init_seekable(&w, bookkeeping, sizeof bookkeeping, 16, 512, file_write, file_seek, out, &err) !=
        TPACK_RESULT_OK) {
        report("init", &err);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        tpack_entry_decl d = {0};
        d.name.data = t[i].name;
        d.name.len = TPACK_NUL_TERMINATED;
        d.dims = t[i].dims;
        d.rank = t[i].rank;
        d.dtype = t[i].dtype; /* alignment 0: the default, 64 */
        if (tpack_writer_declare(&w, &d, &err) != TPACK_RESULT_OK) {
            report(t[i].name, &err);
            return -1;
        }
    }
    if (write_metadata(&w, &err) != 0) {
        report("metadata", &err);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        if (tpack_writer_write(&w, t[i].data, t[i].len, &err) != TPACK_RESULT_OK ||
            tpack_writer_end_entry(&w, &err) != TPACK_RESULT_OK) {
            report(t[i].name, &err);
            return -1;
        }
    }
    if (tpack_writer_finish(&w, &err) != TPACK_RESULT_OK) { /* the trailer, then the prefix back-patched */
        report("finish", &err);
        return -1;
    }
    return tpack_writer_length(&w, out_len) == TPACK_RESULT_OK ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: pack_model OUT.tpack\n");
        return 2;
    }
    /* The training run's output: float weights (made up here), and inputs to test the device with. */
    static float fc1_weight[HIDDEN][INPUTS], fc1_bias[HIDDEN], fc2_float[OUTPUTS][HIDDEN], fc2_bias[OUTPUTS];
    static float tests[TESTS][INPUTS];
    for (int j = 0; j < HIDDEN; j++) {
        for (int i = 0; i < INPUTS; i++) fc1_weight[j][i] = sinf((float)(j * INPUTS + i) * 0.7f);
        fc1_bias[j] = 0.1f * (float)(j % 3);
    }
    for (int o = 0; o < OUTPUTS; o++) {
        for (int j = 0; j < HIDDEN; j++) fc2_float[o][j] = cosf((float)(o * HIDDEN + j) * 1.3f);
        fc2_bias[o] = -0.05f * (float)o;
    }
    for (int k = 0; k < TESTS; k++)
        for (int i = 0; i < INPUTS; i++) tests[k][i] = (float)((k * 7 + i * 3) % 10) / 4.0f;

    /* The device multiplies int8 weights: quantize fc2 symmetrically, one scale for the tensor. */
    float max = 0.0f;
    for (int o = 0; o < OUTPUTS; o++)
        for (int j = 0; j < HIDDEN; j++) max = fmaxf(max, fabsf(fc2_float[o][j]));
    float scale = max / 127.0f;
    static int8_t fc2_weight[OUTPUTS][HIDDEN];
    for (int o = 0; o < OUTPUTS; o++)
        for (int j = 0; j < HIDDEN; j++) fc2_weight[o][j] = (int8_t)lrintf(fc2_float[o][j] / scale);

    const struct tensor tensors[] = {
        {"fc1.weight", TPACK_DTYPE_F32, 2, {HIDDEN, INPUTS}, fc1_weight, sizeof fc1_weight},
        {"fc1.bias", TPACK_DTYPE_F32, 1, {HIDDEN, 0}, fc1_bias, sizeof fc1_bias},
        {"fc2.weight", TPACK_DTYPE_I8, 2, {OUTPUTS, HIDDEN}, fc2_weight, sizeof fc2_weight},
        {"fc2.scale", TPACK_DTYPE_F32, 0, {0, 0}, &scale, sizeof scale},
        {"fc2.bias", TPACK_DTYPE_F32, 1, {OUTPUTS, 0}, fc2_bias, sizeof fc2_bias},
        {"test.inputs", TPACK_DTYPE_F32, 2, {TESTS, INPUTS}, tests, sizeof tests},
    };
    FILE *out = fopen(argv[1], "wb");
    if (!out) {
        fprintf(stderr, "pack_model: cannot create %s\n", argv[1]);
        return 2;
    }
    uint64_t len = 0;
    int failed = pack(out, tensors, sizeof tensors / sizeof tensors[0], &len);
    if (fclose(out) != 0 || failed) {
        remove(argv[1]);
        return 1;
    }
    printf("pack_model: %s written, %llu bytes\n", argv[1], (unsigned long long)len);
    return 0;
}
