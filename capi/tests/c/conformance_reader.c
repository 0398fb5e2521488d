/*
 * The C reader of the conformance kit (spec/conformance/README.md), written against tpack.h only.
 *
 *   conformance_reader FILE
 *
 * A valid container (parse + verify, nested containers included): its canonical JSON decoding (spec §13) on
 * stdout, exit 0. An invalid one: the broken rule's id first ("R17 ..."), then the library's message, exit 1.
 * A path that is not a regular file, a file above 1 GiB, or one that cannot be read: a line on stderr and
 * exit 2, without reading it. Anything the library does that its contract rules out (a code other than OK or
 * INVALID_CONTAINER, a rule without an id, a string that is not UTF-8): a line on stderr and exit 3, which the
 * kit counts as a crash.
 *
 * The reading is the C API's; this file only prints. Every value goes through the accessor of its type, so
 * the kit's comparison with the manifest checks those accessors too.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpack.h"

/* The largest file read, 1 GiB: the whole file goes into memory, and the vectors are a few KiB. */
#define MAX_INPUT_LEN ((uint64_t)1 << 30)

/* Exit statuses of the protocol, and ours for a broken library contract. */
#define EXIT_VALID 0
#define EXIT_INVALID 1
#define EXIT_NOT_READ 2
#define EXIT_BROKEN 3

/* Codes the §13 decoding treats specially. */
#define DTYPE_CONTAINER 19

/* Metadata type codes of format 1.1 (spec §7.1). */
enum {
    T_U64 = 1, T_I64, T_F64, T_BOOL, T_STRING, T_BYTES, T_U64S, T_I64S, T_F64S, T_STRINGS,
    T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32,
    T_U8S, T_I8S, T_U16S, T_I16S, T_U32S, T_I32S, T_F32S, T_BOOLS, T_ARRAYS
};

static const char *input_path = "";

/* Prints the message, naming the file, and ends the program with `status`. */
static void die(int status, const char *fmt, va_list ap) {
    fprintf(stderr, "conformance_reader: %s: ", input_path);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    exit(status);
}

/* Ends the program: the library broke its contract (or stdout failed). The kit sees exit 3 as a crash. */
static void broken(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die(EXIT_BROKEN, fmt, ap);
}

/* Calls that the contract says cannot fail on a verified container. */
static void must(tpack_result r, const char *what) {
    if (r != TPACK_RESULT_OK) broken("%s gave %u (%s)", what, (unsigned)r, tpack_result_message(r));
}
#define MUST(call) must((call), #call)

/* ---- reading the file --------------------------------------------------------------------------------- */

static void not_read(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die(EXIT_NOT_READ, fmt, ap);
}

static const char *kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    return "not a regular file";
}

/*
 * The bytes of the regular file at `path`. The path is checked with stat() before it is opened, so a FIFO is
 * never opened and waited on; it is opened with O_NONBLOCK and checked again with fstat(), in case it was
 * replaced meanwhile. At most its length and one more byte are read: a file that grows or shrinks while it
 * is read is refused, rather than read to whatever end it has.
 */
static uint8_t *read_input(const char *path, size_t *out_len) {
    struct stat st;
    if (stat(path, &st) != 0) not_read("cannot stat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode)) not_read("%s: only regular files are read", kind_of(st.st_mode));
    if ((uint64_t)st.st_size > MAX_INPUT_LEN)
        not_read("%" PRIu64 " bytes, above the %" PRIu64 "-byte limit", (uint64_t)st.st_size, MAX_INPUT_LEN);
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) not_read("cannot open: %s", strerror(errno));
    if (fstat(fd, &st) != 0) not_read("cannot stat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode)) not_read("%s: only regular files are read", kind_of(st.st_mode));
    if ((uint64_t)st.st_size > MAX_INPUT_LEN)
        not_read("%" PRIu64 " bytes, above the %" PRIu64 "-byte limit", (uint64_t)st.st_size, MAX_INPUT_LEN);
    size_t len = (size_t)st.st_size;
    uint8_t *bytes = malloc(len + 1);
    if (bytes == NULL) not_read("out of memory for %zu bytes", len);
    size_t got = 0;
    while (got < len + 1) {
        ssize_t n = read(fd, bytes + got, len + 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) not_read("cannot read: %s", strerror(errno));
        if (n == 0) break;
        got += (size_t)n;
    }
    close(fd);
    if (got != len) not_read("changed while it was read: %zu bytes by fstat, %zu read", len, got);
    *out_len = len;
    return bytes;
}

/* ---- JSON --------------------------------------------------------------------------------------------- */

/* Length of the UTF-8 sequence at s[0..n), or 0 if it is not well-formed (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF). */
static size_t utf8_sequence(const uint8_t *s, size_t n) {
    uint8_t c = s[0];
    size_t len;
    uint32_t min, cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; min = 0x80; cp = c & 0x1Fu; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; min = 0x800; cp = c & 0x0Fu; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; min = 0x10000; cp = c & 0x07u; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0u) != 0x80u) return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFFu || (cp >= 0xD800u && cp <= 0xDFFFu)) return 0;
    return len;
}

/* A JSON string of the `len` bytes at `data`: `"` and `\` escaped, control characters as \u00XX, everything
 * else (non-ASCII included) as the UTF-8 it is. The library promises UTF-8; a broken promise is exit 3. */
static void json_string(const char *data, size_t len) {
    const uint8_t *s = (const uint8_t *)data;
    putchar('"');
    for (size_t i = 0; i < len;) {
        uint8_t c = s[i];
        size_t n = utf8_sequence(s + i, len - i);
        if (n == 0) broken("a string from the library is not UTF-8 (byte %zu of %zu)", i, len);
        if (c == '"' || c == '\\') {
            putchar('\\');
            putchar(c);
        } else if (c < 0x20) {
            switch (c) {
            case '\b': fputs("\\b", stdout); break;
            case '\f': fputs("\\f", stdout); break;
            case '\n': fputs("\\n", stdout); break;
            case '\r': fputs("\\r", stdout); break;
            case '\t': fputs("\\t", stdout); break;
            default: printf("\\u%04x", (unsigned)c); break;
            }
        } else {
            fwrite(s + i, 1, n, stdout);
        }
        i += n;
    }
    putchar('"');
}

static void json_str(tpack_str s) { json_string(s.data, s.len); }

static void json_hex(const uint8_t *data, size_t len) {
    putchar('"');
    for (size_t i = 0; i < len; i++) printf("%02x", (unsigned)data[i]);
    putchar('"');
}

/* §13: f64 as the 16 hex digits of its bits, f32 as 8, so that NaNs and -0 are exact. */
static void json_f64(double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    printf("\"%016" PRIx64 "\"", bits);
}

static void json_f32(float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    printf("\"%08" PRIx32 "\"", bits);
}

/* A type's §13 name: the spec's name, or the integer code for one this library does not know. */
static void json_type(uint8_t code) {
    const char *name = tpack_meta_type_name(code);
    if (name != NULL) json_string(name, strlen(name));
    else printf("%u", (unsigned)code);
}

/* ---- the §13 decoding --------------------------------------------------------------------------------- */

static void json_value(const tpack_meta_value *v);

/* The items of an array value, each with its own accessor. */
static void json_array(const tpack_meta_value *v, uint8_t type) {
    size_t n = 0;
    MUST(tpack_meta_array_len(v, &n));
    putchar('[');
    for (size_t i = 0; i < n; i++) {
        if (i > 0) putchar(',');
        switch (type) {
        case T_U64S: { uint64_t x; MUST(tpack_meta_u64_at(v, i, &x)); printf("%" PRIu64, x); break; }
        case T_I64S: { int64_t x; MUST(tpack_meta_i64_at(v, i, &x)); printf("%" PRId64, x); break; }
        case T_F64S: { double x; MUST(tpack_meta_f64_at(v, i, &x)); json_f64(x); break; }
        case T_STRINGS: { tpack_str x; MUST(tpack_meta_string_at(v, i, &x)); json_str(x); break; }
        case T_U8S: { uint8_t x; MUST(tpack_meta_u8_at(v, i, &x)); printf("%u", (unsigned)x); break; }
        case T_I8S: { int8_t x; MUST(tpack_meta_i8_at(v, i, &x)); printf("%d", (int)x); break; }
        case T_U16S: { uint16_t x; MUST(tpack_meta_u16_at(v, i, &x)); printf("%u", (unsigned)x); break; }
        case T_I16S: { int16_t x; MUST(tpack_meta_i16_at(v, i, &x)); printf("%d", (int)x); break; }
        case T_U32S: { uint32_t x; MUST(tpack_meta_u32_at(v, i, &x)); printf("%" PRIu32, x); break; }
        case T_I32S: { int32_t x; MUST(tpack_meta_i32_at(v, i, &x)); printf("%" PRId32, x); break; }
        case T_F32S: { float x; MUST(tpack_meta_f32_at(v, i, &x)); json_f32(x); break; }
        case T_BOOLS: { bool x; MUST(tpack_meta_bool_at(v, i, &x)); fputs(x ? "true" : "false", stdout); break; }
        case T_ARRAYS: {
            tpack_meta_value item;
            uint8_t item_type = 0;
            MUST(tpack_meta_array_at(v, i, &item));
            MUST(tpack_meta_value_type(&item, &item_type));
            fputs("{\"type\":", stdout);
            json_type(item_type);
            fputs(",\"value\":", stdout);
            json_value(&item);
            putchar('}');
            break;
        }
        default: broken("array type %u has no items", (unsigned)type);
        }
    }
    putchar(']');
}

static void json_value(const tpack_meta_value *v) {
    uint8_t type = 0;
    MUST(tpack_meta_value_type(v, &type));
    switch (type) {
    case T_U64: { uint64_t x; MUST(tpack_meta_u64(v, &x)); printf("%" PRIu64, x); break; }
    case T_I64: { int64_t x; MUST(tpack_meta_i64(v, &x)); printf("%" PRId64, x); break; }
    case T_F64: { double x; MUST(tpack_meta_f64(v, &x)); json_f64(x); break; }
    case T_BOOL: { bool x; MUST(tpack_meta_bool(v, &x)); fputs(x ? "true" : "false", stdout); break; }
    case T_STRING: { tpack_str x; MUST(tpack_meta_string(v, &x)); json_str(x); break; }
    case T_BYTES: { tpack_bytes x; MUST(tpack_meta_bytes(v, &x)); json_hex(x.data, x.len); break; }
    case T_U8: { uint8_t x; MUST(tpack_meta_u8(v, &x)); printf("%u", (unsigned)x); break; }
    case T_I8: { int8_t x; MUST(tpack_meta_i8(v, &x)); printf("%d", (int)x); break; }
    case T_U16: { uint16_t x; MUST(tpack_meta_u16(v, &x)); printf("%u", (unsigned)x); break; }
    case T_I16: { int16_t x; MUST(tpack_meta_i16(v, &x)); printf("%d", (int)x); break; }
    case T_U32: { uint32_t x; MUST(tpack_meta_u32(v, &x)); printf("%" PRIu32, x); break; }
    case T_I32: { int32_t x; MUST(tpack_meta_i32(v, &x)); printf("%" PRId32, x); break; }
    case T_F32: { float x; MUST(tpack_meta_f32(v, &x)); json_f32(x); break; }
    case T_U64S: case T_I64S: case T_F64S: case T_STRINGS:
    case T_U8S: case T_I8S: case T_U16S: case T_I16S: case T_U32S: case T_I32S: case T_F32S: case T_BOOLS:
    case T_ARRAYS:
        json_array(v, type);
        break;
    default:
        if (tpack_meta_type_name(type) != NULL) broken("type %u is known but has no accessor here", (unsigned)type);
        {
            /* A type of a newer minor version: its pool bytes. */
            tpack_bytes x;
            MUST(tpack_meta_unknown_bytes(v, &x));
            json_hex(x.data, x.len);
        }
        break;
    }
}

static void json_container(const tpack_container *c) {
    uint16_t major = 0, minor = 0;
    uint64_t flags = 0;
    size_t count = 0, meta = 0;
    MUST(tpack_container_version(c, &major, &minor));
    MUST(tpack_container_compat_flags(c, &flags));
    MUST(tpack_container_entry_count(c, &count));
    MUST(tpack_metadata_count(c, &meta));
    printf("{\"version\":[%u,%u],\"compat_flags\":%" PRIu64 ",\"entries\":[", (unsigned)major, (unsigned)minor,
           flags);
    for (size_t i = 0; i < count; i++) {
        tpack_entry e;
        MUST(tpack_container_entry(c, i, &e));
        if (i > 0) putchar(',');
        fputs("{\"name\":", stdout);
        json_str(e.name);
        fputs(",\"dtype\":", stdout);
        const char *dtype = tpack_dtype_name(e.dtype);
        if (dtype != NULL) json_string(dtype, strlen(dtype));
        else printf("%u", (unsigned)e.dtype);
        fputs(",\"shape\":[", stdout);
        if (e.rank > TPACK_MAX_RANK) broken("entry %zu has rank %u", i, (unsigned)e.rank);
        for (unsigned d = 0; d < e.rank; d++) printf("%s%" PRIu64, d > 0 ? "," : "", e.dims[d]);
        printf("],\"offset\":%" PRIu64 ",\"length\":%zu,\"alignment\":%" PRIu32 ",\"target\":", e.offset,
               e.payload.len, e.alignment);
        if (e.has_target) printf("%" PRIu64, e.target);
        else fputs("null", stdout);
        printf(",\"checksum\":%" PRIu32, e.checksum);
        if (e.dtype == DTYPE_CONTAINER) {
            tpack_container nested;
            MUST(tpack_container_nested(c, i, &nested));
            fputs(",\"container\":", stdout);
            json_container(&nested);
        }
        putchar('}');
    }
    fputs("],\"metadata\":[", stdout);
    for (size_t i = 0; i < meta; i++) {
        tpack_str key;
        tpack_meta_value v;
        uint8_t type = 0;
        MUST(tpack_metadata_at(c, i, &key, &v));
        MUST(tpack_meta_value_type(&v, &type));
        if (i > 0) putchar(',');
        fputs("{\"key\":", stdout);
        json_str(key);
        fputs(",\"type\":", stdout);
        json_type(type);
        fputs(",\"value\":", stdout);
        json_value(&v);
        putchar('}');
    }
    fputs("]}", stdout);
}

/* ---- main --------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: conformance_reader FILE\n");
        return EXIT_NOT_READ;
    }
    input_path = argv[1];
    size_t len = 0;
    uint8_t *bytes = read_input(argv[1], &len);

    tpack_container c;
    tpack_error err;
    tpack_result r = tpack_container_parse(bytes, len, &c, &err);
    if (r == TPACK_RESULT_OK) r = tpack_container_verify(&c, &err);
    if (r == TPACK_RESULT_INVALID_CONTAINER) {
        /* The rule is the one the kit expects as it stands: R39 for a structural rule broken inside a nested
         * container, R38 at every level, R37 and R50 found inside a nested container as themselves. */
        const char *id = tpack_rule_id(err.rule);
        if (id == NULL) broken("INVALID_CONTAINER with rule %u, which has no id", (unsigned)err.rule);
        char msg[512];
        MUST(tpack_error_message(&err, msg, sizeof msg));
        /* The core's message begins with the id already ("R13 HeaderChecksum: ..."). */
        size_t id_len = strlen(id);
        if (strncmp(msg, id, id_len) == 0 && msg[id_len] == ' ') printf("%s\n", msg);
        else printf("%s %s\n", id, msg);
        free(bytes);
        if (fflush(stdout) != 0 || ferror(stdout)) broken("cannot write stdout");
        return EXIT_INVALID;
    }
    if (r != TPACK_RESULT_OK) broken("parse/verify gave %u (%s)", (unsigned)r, tpack_result_message(r));

    json_container(&c);
    putchar('\n');
    free(bytes);
    if (fflush(stdout) != 0 || ferror(stdout)) broken("cannot write stdout");
    return EXIT_VALID;
}
