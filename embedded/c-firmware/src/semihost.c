#include "semihost.h"

#include <stdarg.h>
#include <stdint.h>

/* Operation numbers and exit reasons: ARM's "Semihosting for AArch32 and AArch64", 2.0. */
enum {
    SYS_OPEN = 0x01,
    SYS_WRITE = 0x05,
    SYS_EXIT = 0x18,
    SYS_EXIT_EXTENDED = 0x20,
    ADP_STOPPED_APPLICATION_EXIT = 0x20026,
    /* SYS_OPEN mode "w": with the name ":tt", the host's stdout. */
    OPEN_MODE_W = 4,
};

static uintptr_t sh_call(uintptr_t op, const void *arg)
{
    register uintptr_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void sh_write(const char *s, size_t len)
{
    static intptr_t handle = -1;
    if (handle == -1) {
        const uintptr_t open[3] = {(uintptr_t) ":tt", OPEN_MODE_W, 3};
        handle = (intptr_t) sh_call(SYS_OPEN, open);
    }
    const uintptr_t write[3] = {(uintptr_t) handle, (uintptr_t) s, len};
    (void) sh_call(SYS_WRITE, write);
}

void sh_exit(int status)
{
    /* SYS_EXIT_EXTENDED carries the status as the subcode of an application exit; QEMU exits with it. */
    const uintptr_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uintptr_t) status};
    (void) sh_call(SYS_EXIT_EXTENDED, block);
    /* A host without the extension: plain SYS_EXIT, where any other reason than an application exit is 1. */
    (void) sh_call(SYS_EXIT, (const void *) (uintptr_t) (status == 0 ? ADP_STOPPED_APPLICATION_EXIT : 0x20023));
    for (;;) {
        __asm__ volatile("bkpt 0");
    }
}

/* The line being built; flushed at '\n' or when full. */
static char line[256];
static size_t line_len;

static void flush(void)
{
    if (line_len > 0) {
        sh_write(line, line_len);
        line_len = 0;
    }
}

static void put(char c)
{
    if (line_len == sizeof line) {
        flush();
    }
    line[line_len++] = c;
    if (c == '\n') {
        flush();
    }
}

static void put_n(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        put(s[i]);
    }
}

static void put_number(unsigned long long v, unsigned base, unsigned width, char pad, int negative)
{
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v != 0);
    if (negative) {
        digits[n++] = '-';
    }
    while (n < width) {
        put(pad);
        width--;
    }
    while (n > 0) {
        put(digits[--n]);
    }
}

static void vsay(const char *fmt, va_list ap)
{
    for (const char *p = fmt; *p != '\0'; p++) {
        if (*p != '%') {
            put(*p);
            continue;
        }
        p++;
        char pad = ' ';
        unsigned width = 0;
        int precision = -1;
        int longs = 0;
        if (*p == '0') {
            pad = '0';
            p++;
        }
        while (*p >= '0' && *p <= '9') {
            width = width * 10 + (unsigned) (*p++ - '0');
        }
        if (p[0] == '.' && p[1] == '*') {
            precision = va_arg(ap, int);
            p += 2;
        }
        while (*p == 'l') {
            longs++;
            p++;
        }
        unsigned long long u;
        switch (*p) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (s == NULL) {
                s = "(null)";
            }
            size_t n = 0;
            while ((precision < 0 || n < (size_t) precision) && s[n] != '\0') {
                n++;
            }
            put_n(s, n);
            break;
        }
        case 'c':
            put((char) va_arg(ap, int));
            break;
        case 'd': {
            long long d = longs >= 2 ? va_arg(ap, long long) : longs == 1 ? va_arg(ap, long) : va_arg(ap, int);
            put_number(d < 0 ? 0ull - (unsigned long long) d : (unsigned long long) d, 10, width, pad, d < 0);
            break;
        }
        case 'u':
        case 'x':
            u = longs >= 2 ? va_arg(ap, unsigned long long)
                : longs == 1 ? va_arg(ap, unsigned long)
                             : va_arg(ap, unsigned);
            put_number(u, *p == 'u' ? 10 : 16, width, pad, 0);
            break;
        case 'p':
            put_n("0x", 2);
            put_number((uintptr_t) va_arg(ap, void *), 16, 8, '0', 0);
            break;
        case '%':
            put('%');
            break;
        default: /* not a conversion this printf knows: show it rather than guess */
            put('%');
            put(*p);
            if (*p == '\0') {
                return;
            }
            break;
        }
    }
}

void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

void fail(const char *fmt, ...)
{
    flush();
    put_n("FAIL: ", 6);
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    put('\n');
    sh_exit(1);
}
