// tpack.h used from C++17: the header compiles as C++, and its types and functions work from C++ code.
//
//   smoke_cpp VECTORS_DIR
//
// Reads valid/example.tpack into a std::vector, parses it into a handle on the stack, looks entries up by
// name, reads metadata of several types (string, i64, f64, bool, u64[], string[] with non-ASCII), walks a
// nested container (valid/nested.tpack), checks that an invalid vector names its rule, and writes a container
// through a captureless lambda as the writer's callback, then reads it back. Exit 0 when every check holds.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tpack.h"

// The handles are plain data: C++ may copy them, put them in containers, and take them by value.
static_assert(std::is_trivially_copyable_v<tpack_container>);
static_assert(std::is_standard_layout_v<tpack_container>);
static_assert(sizeof(tpack_container) == TPACK_CONTAINER_SIZE && alignof(tpack_container) == TPACK_CONTAINER_ALIGN);
static_assert(sizeof(tpack_meta_value) == TPACK_META_VALUE_SIZE && alignof(tpack_meta_value) == TPACK_META_VALUE_ALIGN);
static_assert(sizeof(tpack_decoder) == TPACK_DECODER_SIZE && alignof(tpack_decoder) == TPACK_DECODER_ALIGN);
static_assert(sizeof(tpack_writer) == TPACK_WRITER_SIZE && alignof(tpack_writer) == TPACK_WRITER_ALIGN);
// In C++ the enums are typed with their underlying type, as in C23.
static_assert(std::is_same_v<std::underlying_type_t<tpack_result>, uint32_t>);
static_assert(TPACK_RESULT_OK == 0);

namespace {

int failures = 0;
int checks = 0;

void check(bool ok, const char *what, int line) {
    checks++;
    if (!ok) {
        failures++;
        std::fprintf(stderr, "FAIL smoke.cpp:%d: %s\n", line, what);
    }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

std::string_view view(tpack_str s) { return {s.data, s.len}; }

std::vector<uint8_t> read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A lookup by name that takes a std::string_view.
bool find(const tpack_container &c, std::string_view name, tpack_entry &out) {
    return tpack_container_find(&c, name.data(), name.size(), &out) == TPACK_RESULT_OK;
}

bool meta(const tpack_container &c, std::string_view key, tpack_meta_value &out) {
    return tpack_metadata_get(&c, key.data(), key.size(), &out) == TPACK_RESULT_OK;
}

void check_example(const std::string &dir) {
    const std::vector<uint8_t> bytes = read_file(dir + "/valid/example.tpack");
    CHECK(!bytes.empty());
    tpack_container c;
    tpack_error err{};
    CHECK(tpack_container_parse(bytes.data(), bytes.size(), &c, &err) == TPACK_RESULT_OK);
    CHECK(tpack_container_verify(&c, &err) == TPACK_RESULT_OK);

    // A copy of the handle, made by C++ assignment, reads the same.
    const tpack_container copy = c;
    size_t count = 0;
    CHECK(tpack_container_entry_count(&copy, &count) == TPACK_RESULT_OK && count == 6);

    tpack_entry e;
    CHECK(find(copy, "embed.weight", e));
    CHECK(std::string_view(tpack_dtype_name(e.dtype)) == "F32");
    CHECK(e.rank == 2 && e.dims[0] == 4 && e.dims[1] == 8 && e.payload.len == 4 * 8 * sizeof(float));
    CHECK(e.offset == 1216 && e.alignment == 64 && !e.has_target && e.checksum == 1034959719u);
    CHECK(e.payload.data == bytes.data() + e.offset);
    CHECK(find(copy, "boot.code", e));
    CHECK(e.has_target && e.target == 0x20000000u && e.alignment == 1);
    CHECK(!find(copy, "embed", e));

    tpack_meta_value v;
    tpack_str s{};
    CHECK(meta(c, "arch", v) && tpack_meta_string(&v, &s) == TPACK_RESULT_OK && view(s) == "toy-mlp");
    int64_t bias = 0;
    CHECK(meta(c, "bias", v) && tpack_meta_i64(&v, &bias) == TPACK_RESULT_OK && bias == -3);
    uint64_t layers = 0;
    CHECK(meta(c, "layers", v) && tpack_meta_u64(&v, &layers) == TPACK_RESULT_OK && layers == 1);
    // Strict accessors: a u64 is not an i64.
    CHECK(tpack_meta_i64(&v, &bias) == TPACK_RESULT_WRONG_TYPE && bias == -3);
    double eps = 0;
    uint64_t eps_bits = 0;
    CHECK(meta(c, "eps", v) && tpack_meta_f64(&v, &eps) == TPACK_RESULT_OK);
    std::memcpy(&eps_bits, &eps, sizeof eps);
    CHECK(eps_bits == 0x3ee4f8b588e368f1u);
    bool trained = false;
    CHECK(meta(c, "trained", v) && tpack_meta_bool(&v, &trained) == TPACK_RESULT_OK && trained);
    tpack_bytes blob{};
    CHECK(meta(c, "blob", v) && tpack_meta_bytes(&v, &blob) == TPACK_RESULT_OK && blob.len == 4 &&
          std::memcmp(blob.data, "\x00\x01\x02\xff", 4) == 0);

    // u64[]: by element, and in place (little-endian, unaligned: memcpy).
    std::vector<uint64_t> ids;
    size_t n = 0;
    CHECK(meta(c, "ids", v) && tpack_meta_array_len(&v, &n) == TPACK_RESULT_OK && n == 3);
    for (size_t i = 0; i < n; i++) {
        uint64_t id = 0;
        CHECK(tpack_meta_u64_at(&v, i, &id) == TPACK_RESULT_OK);
        ids.push_back(id);
    }
    CHECK((ids == std::vector<uint64_t>{1, 2, 3}));
    tpack_le_array arr{};
    CHECK(tpack_meta_array_data(&v, &arr) == TPACK_RESULT_OK && arr.count == 3 && arr.element_size == 8);

    // string[] with a non-ASCII item, into std::string.
    std::vector<std::string> vocab;
    CHECK(meta(c, "vocab", v) && tpack_meta_array_len(&v, &n) == TPACK_RESULT_OK);
    for (size_t i = 0; i < n; i++) {
        CHECK(tpack_meta_string_at(&v, i, &s) == TPACK_RESULT_OK);
        vocab.emplace_back(view(s));
    }
    CHECK((vocab == std::vector<std::string>{"<s>", "hello", "w\xc3\xb6rld"}));
    CHECK(tpack_meta_string_at(&v, n, &s) == TPACK_RESULT_NOT_FOUND);

    // Metadata in key order, into a std::vector of keys.
    size_t records = 0;
    CHECK(tpack_metadata_count(&c, &records) == TPACK_RESULT_OK && records == 8);
    std::vector<std::string> keys;
    for (size_t i = 0; i < records; i++) {
        tpack_str key{};
        CHECK(tpack_metadata_at(&c, i, &key, &v) == TPACK_RESULT_OK);
        keys.emplace_back(view(key));
    }
    CHECK(std::is_sorted(keys.begin(), keys.end()) && keys.front() == "arch" && keys.back() == "vocab");
}

void check_nested(const std::string &dir) {
    const std::vector<uint8_t> bytes = read_file(dir + "/valid/nested.tpack");
    tpack_container outer;
    CHECK(tpack_container_parse(bytes.data(), bytes.size(), &outer, nullptr) == TPACK_RESULT_OK);
    CHECK(tpack_container_verify(&outer, nullptr) == TPACK_RESULT_OK);
    size_t count = 0;
    CHECK(tpack_container_entry_count(&outer, &count) == TPACK_RESULT_OK);
    // Handles in a std::vector: the nested containers, each filled in place.
    std::vector<tpack_container> inner;
    for (size_t i = 0; i < count; i++) {
        tpack_entry e;
        CHECK(tpack_container_entry(&outer, i, &e) == TPACK_RESULT_OK);
        if (std::string_view(tpack_dtype_name(e.dtype)) != "CONTAINER") continue;
        inner.emplace_back();
        CHECK(tpack_container_nested(&outer, i, &inner.back()) == TPACK_RESULT_OK);
    }
    CHECK(!inner.empty());
    for (const tpack_container &c : inner) {
        tpack_entry e;
        CHECK(tpack_container_verify(&c, nullptr) == TPACK_RESULT_OK);
        CHECK(find(c, "embed.weight", e) && e.payload.data >= bytes.data() &&
              e.payload.data + e.payload.len <= bytes.data() + bytes.size());
    }
}

void check_invalid(const std::string &dir) {
    const std::vector<uint8_t> bytes = read_file(dir + "/invalid/R2-high-bit-stripped.tpack");
    CHECK(!bytes.empty());
    tpack_container c;
    tpack_error err{};
    CHECK(tpack_container_parse(bytes.data(), bytes.size(), &c, &err) == TPACK_RESULT_INVALID_CONTAINER);
    CHECK(err.result == TPACK_RESULT_INVALID_CONTAINER && std::string_view(tpack_rule_id(err.rule)) == "R2");
    std::array<char, 256> msg{};
    CHECK(tpack_error_message(&err, msg.data(), msg.size()) == TPACK_RESULT_OK);
    CHECK(std::string_view(msg.data()).substr(0, 3) == "R2 ");
}

tpack_writer writer;  // 512 bytes; its bookkeeping is a separate block

void check_writer() {
    std::vector<uint8_t> out;
    // A captureless lambda is the C callback; `user` carries the std::vector. It must not throw: catch here.
    tpack_write_fn sink = [](void *user, const uint8_t *bytes, size_t len) -> int32_t {
        try {
            static_cast<std::vector<uint8_t> *>(user)->insert(static_cast<std::vector<uint8_t> *>(user)->end(),
                                                              bytes, bytes + len);
            return 0;
        } catch (...) {
            return -1;
        }
    };
    tpack_error err{};
    size_t need = 0;
    CHECK(tpack_writer_bookkeeping_size(4, 64, &need) == TPACK_RESULT_OK);
    std::vector<uint8_t> books(need);  // the bookkeeping: any alignment, the caller's own memory
    CHECK(tpack_writer_init(&writer, books.data(), books.size(), 4, 64, sink, &out, &err) == TPACK_RESULT_OK);
    const std::array<uint64_t, 2> dims{2, 2};
    const std::string name = "w";
    const tpack_entry_decl decl{{name.data(), name.size()}, dims.data(), dims.size(), 0, 0, TPACK_DTYPE_F32, false,
                                false};
    CHECK(tpack_writer_declare(&writer, &decl, &err) == TPACK_RESULT_OK);
    const std::string arch = "c++";
    CHECK(tpack_writer_metadata(&writer, "arch", 4, TPACK_META_STRING, reinterpret_cast<const uint8_t *>(arch.data()),
                                arch.size(), &err) == TPACK_RESULT_OK);
    const std::array<float, 4> weights{1.0f, -2.0f, 0.5f, 4.0f};
    std::array<uint8_t, sizeof weights> le{};
    std::memcpy(le.data(), weights.data(), le.size());  // little-endian host
    CHECK(tpack_writer_write(&writer, le.data(), le.size(), &err) == TPACK_RESULT_OK);
    CHECK(tpack_writer_end_entry(&writer, &err) == TPACK_RESULT_OK);
    CHECK(tpack_writer_finish(&writer, &err) == TPACK_RESULT_OK);

    tpack_container c;
    tpack_entry e;
    tpack_meta_value v;
    tpack_str s{};
    CHECK(tpack_container_parse(out.data(), out.size(), &c, &err) == TPACK_RESULT_OK);
    CHECK(tpack_container_verify(&c, &err) == TPACK_RESULT_OK);
    CHECK(find(c, "w", e) && e.payload.len == le.size() && std::memcmp(e.payload.data, le.data(), le.size()) == 0);
    CHECK(meta(c, "arch", v) && tpack_meta_string(&v, &s) == TPACK_RESULT_OK && view(s) == "c++");
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s VECTORS_DIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    check_example(dir);
    check_nested(dir);
    check_invalid(dir);
    check_writer();
    std::printf("smoke.cpp: %d checks, %d failures\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
