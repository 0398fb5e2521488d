/* Semihosting (ARM's debug-monitor calls, which QEMU implements): console output and the exit status. No
   newlib stdio: it would bring a heap (stdout's buffer is malloc'd). */
#ifndef SEMIHOST_H
#define SEMIHOST_H

#include <stddef.h>

/* Writes `len` bytes to the host's stdout. */
void sh_write(const char *s, size_t len);

/* Ends the QEMU run with exit code `status` (0: pass). Does not return. */
__attribute__((noreturn)) void sh_exit(int status);

/* A small printf to the host's stdout: %s, %.*s, %c, %d, %u, %x, %lu, %lx, %llu, %llx, %p, %%, with an
   optional 0 flag and width (%08x). One line per call is the habit; output is buffered until '\n'. */
__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...);

/* Prints "FAIL: ...", a newline, and exits with status 1. */
__attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...);

#endif
