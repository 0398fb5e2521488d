/* The flash model of flash.h. */
#include "flash.h"

#include <string.h>

#include "semihost.h"

static void check_range(const struct flash_region *r, size_t offset, size_t len)
{
    if (offset > r->len || len > r->len - offset) {
        fail("flash %s: %u bytes at %u are outside its %u bytes", r->name, (unsigned) len, (unsigned) offset,
             (unsigned) r->len);
    }
}

void flash_erase(struct flash_region *r, size_t offset, size_t len)
{
    check_range(r, offset, len);
    memset(r->bytes + offset, 0xff, len);
    r->erases++;
}

void flash_write(struct flash_region *r, size_t offset, const uint8_t *bytes, size_t len)
{
    check_range(r, offset, len);
    for (size_t i = 0; i < len; i++) {
        if (r->bytes[offset + i] != 0xff) {
            fail("flash %s: byte %u written without an erase", r->name, (unsigned) (offset + i));
        }
    }
    memcpy(r->bytes + offset, bytes, len);
    r->writes++;
    r->bytes_written += len;
}

void flash_reset_counts(struct flash_region *r)
{
    r->erases = 0;
    r->writes = 0;
    r->bytes_written = 0;
}
