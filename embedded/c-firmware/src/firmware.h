/* What startup.c and main.c share. */
#ifndef FIRMWARE_H
#define FIRMWARE_H

#include <stddef.h>

/* The byte the free stack is painted with at reset. */
#define STACK_PAINT 0xa5u

/* The deepest the stack has reached since reset, in bytes from its top. */
size_t stack_high_water(void);

/* Never returns: the library's panic handler (capi/firmware-staticlib) calls it. */
__attribute__((noreturn)) void tpack_panic(void);

#endif
