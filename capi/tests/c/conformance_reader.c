/*
 * The C reader of the conformance kit (spec/conformance/README.md), written against tpack.h only.
 *
 *   conformance_reader FILE
 *   conformance_reader --verify-signature KEYS.json POLICY.json FILE
 *
 * A valid container (parse + verify, nested containers included): its canonical JSON decoding (spec §13) on
 * stdout, exit 0. An invalid one: the broken rule's id first ("R17 ..."), then the library's message, exit 1.
 * A path that is not a regular file, a file above 1 GiB, or one that cannot be read: a line on stderr and
 * exit 2, without reading it. Anything the library does that its contract rules out (a code other than OK or
 * INVALID_CONTAINER, a rule without an id, a string that is not UTF-8): a line on stderr and exit 3, which the
 * kit counts as a crash.
 *
 * With --verify-signature (the kit's protocol for verification vectors): the authenticated verification of FILE
 * with the trusted keys of KEYS.json and the policy of POLICY.json, in the spec's order (the structural rules,
 * R58..R63, then the payload-integrity group with R64): "ok" and exit 0, or the broken rule's id and exit 1.
 * A KEYS.json or POLICY.json that is not of the protocol's shape: exit 2.
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

/* §13: a signed container's "signature" object (nothing for an unsigned one): its signed attributes and the
 * message its signature signs. */
static void json_signature(const tpack_container *c) {
    tpack_signed_attributes s;
    tpack_result r = tpack_container_signed_attributes(c, &s);
    if (r == TPACK_RESULT_NOT_SIGNED) return;
    MUST(r);
    uint8_t message[TPACK_SIGNED_MESSAGE_LEN];
    MUST(tpack_container_signed_message(c, NULL, message));
    printf(",\"signature\":{\"algorithm\":%" PRIu64 ",\"key\":", s.algorithm);
    json_hex(s.key_id, sizeof s.key_id);
    printf(",\"counter\":%" PRIu64 ",\"subject\":", s.counter);
    if (s.subject.data != NULL) json_str(s.subject);
    else fputs("null", stdout);
    fputs(",\"public_key\":", stdout);
    if (s.public_key.len > 0) json_hex(s.public_key.data, s.public_key.len); /* absent: empty, never NULL */
    else fputs("null", stdout);
    fputs(",\"message\":", stdout);
    json_hex(message, sizeof message);
    putchar('}');
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
    putchar(']');
    json_signature(c);
    putchar('}');
}

/* ---- --verify-signature: the key set and the policy ------------------------------------------------------ */

/* A JSON reader just large enough for the protocol's two files: objects, arrays, strings without escapes,
 * unsigned integers, true, false, null. */
struct json {
    const char *p;
};

#define MAX_KEYS 16

static void skip(struct json *j) {
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t') j->p++;
}

static bool eat(struct json *j, char c) {
    skip(j);
    if (*j->p != c) return false;
    j->p++;
    return true;
}

static bool literal(struct json *j, const char *word) {
    skip(j);
    size_t n = strlen(word);
    if (strncmp(j->p, word, n) != 0) return false;
    j->p += n;
    return true;
}

/* A string: its bytes in [*start, *start + *len). */
static bool string(struct json *j, const char **start, size_t *len) {
    if (!eat(j, '"')) return false;
    *start = j->p;
    while (*j->p != '"') {
        if (*j->p == '\0' || *j->p == '\\') return false;
        j->p++;
    }
    *len = (size_t)(j->p - *start);
    j->p++;
    return true;
}

static bool number(struct json *j, uint64_t *out) {
    skip(j);
    if (*j->p < '0' || *j->p > '9') return false;
    uint64_t v = 0;
    while (*j->p >= '0' && *j->p <= '9') {
        unsigned d = (unsigned)(*j->p++ - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* A string (copied, NUL-terminated, into `buf` of `cap` bytes) or null (*present false). */
static bool string_or_null(struct json *j, char *buf, size_t cap, bool *present) {
    if (literal(j, "null")) {
        *present = false;
        return true;
    }
    const char *start;
    size_t len;
    if (!string(j, &start, &len) || len >= cap) return false;
    memcpy(buf, start, len);
    buf[len] = '\0';
    *present = true;
    return true;
}

static bool hex_bytes(const char *hex, uint8_t *out, size_t cap, size_t *len) {
    size_t n = strlen(hex);
    if (n % 2 != 0 || n / 2 > cap) return false;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned byte;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1) return false;
        out[i] = (uint8_t)byte;
    }
    *len = n / 2;
    return true;
}

struct key_store {
    uint8_t public_key[MAX_KEYS][65];
    char subject[MAX_KEYS][256];
    tpack_trusted_key keys[MAX_KEYS];
    size_t count;
    char policy_subject[256];
    tpack_policy policy;
};

/* One member "name": value of a key object. */
static bool key_member(struct json *j, struct key_store *ks, size_t i) {
    const char *name;
    size_t len;
    char text[256];
    bool present;
    if (!string(j, &name, &len) || !eat(j, ':')) return false;
    tpack_trusted_key *k = &ks->keys[i];
    if (len == 9 && strncmp(name, "algorithm", len) == 0) return number(j, &k->algorithm);
    if (len == 6 && strncmp(name, "key_id", len) == 0) {
        size_t n;
        return string_or_null(j, text, sizeof text, &present) && present &&
               hex_bytes(text, k->key_id, sizeof k->key_id, &n) && n == sizeof k->key_id;
    }
    if (len == 10 && strncmp(name, "public_key", len) == 0) {
        if (!string_or_null(j, text, sizeof text, &present)) return false;
        if (present) {
            if (!hex_bytes(text, ks->public_key[i], sizeof ks->public_key[i], &k->public_key_len)) return false;
            k->public_key = ks->public_key[i];
        }
        return true;
    }
    if (len == 7 && strncmp(name, "subject", len) == 0) {
        if (!string_or_null(j, ks->subject[i], sizeof ks->subject[i], &present)) return false;
        if (present) {
            k->subject = ks->subject[i];
            k->subject_len = strlen(ks->subject[i]);
        }
        return true;
    }
    return false;
}

static bool parse_keys(const char *text, struct key_store *ks) {
    struct json j = {text};
    if (!eat(&j, '[')) return false;
    if (eat(&j, ']')) return true;
    do {
        if (ks->count == MAX_KEYS || !eat(&j, '{')) return false;
        size_t i = ks->count++;
        memset(&ks->keys[i], 0, sizeof ks->keys[i]);
        do {
            if (!key_member(&j, ks, i)) return false;
        } while (eat(&j, ','));
        if (!eat(&j, '}')) return false;
    } while (eat(&j, ','));
    return eat(&j, ']');
}

static bool parse_policy(const char *text, struct key_store *ks) {
    struct json j = {text};
    tpack_policy *p = &ks->policy;
    if (!eat(&j, '{')) return false;
    do {
        const char *name;
        size_t len;
        bool present;
        if (!string(&j, &name, &len) || !eat(&j, ':')) return false;
        if (len == 17 && strncmp(name, "require_signature", len) == 0) {
            if (literal(&j, "true")) p->require_signature = true;
            else if (literal(&j, "false")) p->require_signature = false;
            else return false;
        } else if (len == 11 && strncmp(name, "min_counter", len) == 0) {
            if (!number(&j, &p->min_counter)) return false;
        } else if (len == 7 && strncmp(name, "subject", len) == 0) {
            if (!string_or_null(&j, ks->policy_subject, sizeof ks->policy_subject, &present)) return false;
            if (present) {
                p->subject = ks->policy_subject;
                p->subject_len = strlen(ks->policy_subject);
            }
        } else {
            return false;
        }
    } while (eat(&j, ','));
    return eat(&j, '}');
}

/* The whole of a small text file, NUL-terminated; exit 2 when it cannot be read. */
static char *read_text(const char *path) {
    size_t len = 0;
    uint8_t *bytes = read_input(path, &len);
    char *text = malloc(len + 1);
    if (text == NULL) not_read("out of memory");
    memcpy(text, bytes, len);
    text[len] = '\0';
    free(bytes);
    return text;
}

/* The verdict: "ok", or the rule id. */
static int verify_signature(const char *keys_path, const char *policy_path, const char *path) {
    static struct key_store ks;
    char *keys = read_text(keys_path), *policy = read_text(policy_path);
    input_path = keys_path;
    if (!parse_keys(keys, &ks)) not_read("not a key set of the kit's protocol");
    input_path = policy_path;
    if (!parse_policy(policy, &ks)) not_read("not a policy of the kit's protocol");
    free(keys);
    free(policy);
    ks.policy.keys = ks.count > 0 ? ks.keys : NULL;
    ks.policy.key_count = ks.count;
    input_path = path;
    size_t len = 0;
    uint8_t *bytes = read_input(path, &len);
    tpack_container c;
    tpack_error err;
    tpack_result r = tpack_container_parse(bytes, len, &c, &err);
    if (r == TPACK_RESULT_OK) r = tpack_container_verify_authentic(&c, &ks.policy, NULL, &err);
    free(bytes);
    if (r == TPACK_RESULT_OK) {
        puts("ok");
        return EXIT_VALID;
    }
    if (r != TPACK_RESULT_INVALID_CONTAINER) {
        broken("verification gave %u (%s)", (unsigned)r, tpack_result_message(r));
    }
    const char *id = tpack_rule_id(err.rule);
    if (id == NULL) broken("INVALID_CONTAINER with rule %u, which has no id", (unsigned)err.rule);
    puts(id);
    return EXIT_INVALID;
}

/* ---- main --------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--verify-signature") == 0) {
        int status = verify_signature(argv[2], argv[3], argv[4]);
        if (fflush(stdout) != 0 || ferror(stdout)) broken("cannot write stdout");
        return status;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: conformance_reader FILE | --verify-signature KEYS.json POLICY.json FILE\n");
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
