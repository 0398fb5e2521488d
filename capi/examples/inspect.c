/* Lists a tpack file's entries through the C API: `inspect FILE`. Exit 0 for a valid file, 1 for an invalid
 * one (its rule printed), 2 when it cannot be read. Built by capi/examples/Makefile and CMakeLists.txt. */
#include <stdio.h>
#include <stdlib.h>
#include "tpack.h"

/* Names come from the file: print them escaped, never raw. */
static void put_escaped(tpack_str s) {
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') putchar(c); else printf("\\x%02x", c);
    }
}

int main(int argc, char **argv) {
    static unsigned char bytes[1 << 24];
    FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
    if (!f) { fprintf(stderr, "usage: inspect FILE (a readable file of at most 16 MiB)\n"); return 2; }
    size_t len = fread(bytes, 1, sizeof bytes, f);
    int larger = fgetc(f) != EOF;
    fclose(f);
    if (larger) { fprintf(stderr, "inspect: the file is larger than 16 MiB\n"); return 2; }

    tpack_container c;
    tpack_error err;
    if (tpack_container_parse(bytes, len, &c, &err) != TPACK_RESULT_OK ||
        tpack_container_verify(&c, &err) != TPACK_RESULT_OK) {
        char msg[256];
        tpack_error_message(&err, msg, sizeof msg);
        printf("invalid: %s\n", msg);
        return 1;
    }
    size_t n = 0;
    tpack_container_entry_count(&c, &n);
    for (size_t i = 0; i < n; i++) {
        tpack_entry e;
        tpack_container_entry(&c, i, &e);
        const char *dtype = tpack_dtype_name(e.dtype);
        put_escaped(e.name);
        printf("  %s [", dtype ? dtype : "(newer dtype)");
        for (unsigned d = 0; d < e.rank; d++) printf(d ? ", %llu" : "%llu", (unsigned long long)e.dims[d]);
        printf("]  %zu bytes at offset %llu\n", e.payload.len, (unsigned long long)e.offset);
    }
    return 0;
}
