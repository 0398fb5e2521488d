/* What startup.c, main.c and signed.c share. */
#ifndef FIRMWARE_H
#define FIRMWARE_H

#include <stddef.h>

#include "tpack.h"

/* The byte the free stack is painted with at reset. */
#define STACK_PAINT 0xa5u

/* The deepest the stack has reached since reset, in bytes from its top. */
size_t stack_high_water(void);

/* Never returns: the library's panic handler (capi/firmware-staticlib) calls it. */
__attribute__((noreturn)) void tpack_panic(void);

/* The error's message (main.c): the core's own text, naming the rule (the rule's name with -DSHORT_MESSAGES). */
const char *text_of(const tpack_error *err);

/* Runs the MLP on the container's weights and the held-out inputs it carries; every logit must equal the host's
   (main.c). */
void run_model(const tpack_container *c);

/* Signed models: in flash and installed over a stream (signed.c). */
void run_signed(void);

#endif
