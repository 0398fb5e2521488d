/*
 * Compiles tpack.h alone, as C99 and as C++, with every warning an error (capi/check-header.sh): the header
 * must be self-contained, and the storage types must have the sizes and alignments it states.
 */
#include "tpack.h"

/* C99 has no static_assert: an array of negative size fails the build instead. */
#define TPACK_TEST_ASSERT(name, cond) typedef char tpack_test_##name[(cond) ? 1 : -1]

TPACK_TEST_ASSERT(container_size, sizeof(tpack_container) == TPACK_CONTAINER_SIZE);
TPACK_TEST_ASSERT(meta_value_size, sizeof(tpack_meta_value) == TPACK_META_VALUE_SIZE);
TPACK_TEST_ASSERT(decoder_size, sizeof(tpack_decoder) == TPACK_DECODER_SIZE);
TPACK_TEST_ASSERT(writer_size, sizeof(tpack_writer) == TPACK_WRITER_SIZE);
TPACK_TEST_ASSERT(authenticated_size, sizeof(tpack_authenticated) == TPACK_AUTHENTICATED_SIZE);
TPACK_TEST_ASSERT(signed_decoder_size, sizeof(tpack_signed_decoder) == TPACK_SIGNED_DECODER_SIZE);
TPACK_TEST_ASSERT(result_size, sizeof(tpack_result) == 4);

struct tpack_test_align_container { char c; tpack_container x; };
struct tpack_test_align_decoder { char c; tpack_decoder x; };
struct tpack_test_align_writer { char c; tpack_writer x; };
struct tpack_test_align_authenticated { char c; tpack_authenticated x; };
struct tpack_test_align_signed_decoder { char c; tpack_signed_decoder x; };
TPACK_TEST_ASSERT(container_align, offsetof(struct tpack_test_align_container, x) == TPACK_CONTAINER_ALIGN);
TPACK_TEST_ASSERT(decoder_align, offsetof(struct tpack_test_align_decoder, x) == TPACK_DECODER_ALIGN);
TPACK_TEST_ASSERT(writer_align, offsetof(struct tpack_test_align_writer, x) == TPACK_WRITER_ALIGN);
TPACK_TEST_ASSERT(authenticated_align,
                  offsetof(struct tpack_test_align_authenticated, x) == TPACK_AUTHENTICATED_ALIGN);
TPACK_TEST_ASSERT(signed_decoder_align,
                  offsetof(struct tpack_test_align_signed_decoder, x) == TPACK_SIGNED_DECODER_ALIGN);

int tpack_test_header(const unsigned char *bytes, size_t len);

int tpack_test_header(const unsigned char *bytes, size_t len) {
    tpack_container c;
    tpack_error e;
    tpack_result r = tpack_container_parse(bytes, len, &c, &e);
    return r == TPACK_RESULT_OK ? 0 : (int)e.rule;
}
