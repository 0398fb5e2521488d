/* A model of NOR flash for the install phase: regions of RAM that behave like flash (erase sets 0xff, a write
   may only clear bits of erased bytes) and count every erase and write, so the firmware can show that a refused
   model never reached the final region. */
#ifndef FLASH_H
#define FLASH_H

#include <stddef.h>
#include <stdint.h>

struct flash_region {
    const char *name;
    uint8_t *bytes;
    size_t len;
    /* Calls since the last flash_reset_counts. */
    unsigned erases, writes;
    size_t bytes_written;
};

/* Erases `len` bytes at `offset` (to 0xff). Fails the run when out of range. */
void flash_erase(struct flash_region *r, size_t offset, size_t len);

/* Programs `len` bytes at `offset`. Fails the run when out of range or over bytes not erased. */
void flash_write(struct flash_region *r, size_t offset, const uint8_t *bytes, size_t len);

/* Sets the counters to zero. */
void flash_reset_counts(struct flash_region *r);

#endif
