/* The C tests' checks: each failed check is printed with the test's current section and counted, and a test's
 * main reports the counts and fails when any check failed. Each test is one translation unit: the counters are
 * its own. */
#ifndef TPACK_TEST_CHECK_H
#define TPACK_TEST_CHECK_H

#include <stdio.h>

#include "tpack.h"

static int failures = 0;
static int checks = 0;
/* The section being checked, printed with a failure; a test sets it as it goes. */
static const char *current = "(start)";

#define CHECK(cond)                                                                             \
    do {                                                                                        \
        checks++;                                                                               \
        if (!(cond)) {                                                                          \
            failures++;                                                                         \
            fprintf(stderr, "FAIL %s: %s:%d: %s\n", current, __FILE__, __LINE__, #cond);        \
        }                                                                                       \
    } while (0)

#define CHECK_RESULT(expr, want)                                                                \
    do {                                                                                        \
        tpack_result got_ = (expr);                                                             \
        checks++;                                                                               \
        if (got_ != (want)) {                                                                   \
            failures++;                                                                         \
            fprintf(stderr, "FAIL %s: %s:%d: %s gave %u (%s), want %u\n", current, __FILE__,    \
                    __LINE__, #expr, (unsigned)got_, tpack_result_message(got_), (unsigned)(want)); \
        }                                                                                       \
    } while (0)

#endif /* TPACK_TEST_CHECK_H */
