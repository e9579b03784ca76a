// The element-type table: every row consistent with the GGUF ids and names it is looked up by,
// block arithmetic, and the scalar-size guard the kernels rely on.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "infini/element_type.hpp"
#include "infini/error.hpp"
#include "util/scalar_bytes.hpp"

namespace infini::test {
namespace {

TEST_CASE("Element types: one row each, found again by GGUF id and by name", "[element_type]") {
  std::set<uint32_t> ids;
  std::set<std::string_view> names;
  for (size_t i = 0; i < std::size(kElementTypes); ++i) {
    const ElementTraits& t = kElementTypes[i];
    INFO(t.name);
    CHECK(size_t(t.type) == i);  // element_traits indexes the table by the enum
    CHECK(&element_traits(t.type) == &t);
    CHECK(element_type_from_ggml(t.ggml_type) == t.type);
    CHECK(element_type_from_name(t.name) == t.type);
    CHECK(t.block_elements >= 1);
    CHECK(t.block_bytes >= 1);
    CHECK(ids.insert(t.ggml_type).second);
    CHECK(names.insert(t.name).second);
  }
  // ggml's published ids and block layouts.
  CHECK(element_type_from_ggml(0) == ElementType::F32);
  CHECK(element_type_from_ggml(1) == ElementType::F16);
  CHECK(element_type_from_ggml(8) == ElementType::Q8_0);
  CHECK(element_traits(ElementType::Q8_0).block_elements == 32);
  CHECK(element_traits(ElementType::Q8_0).block_bytes == 2 + 32);
  CHECK(element_type_from_ggml(2) == ElementType::Q4_0);
  CHECK(element_traits(ElementType::Q4_0).block_bytes == 2 + 16);
  // K formats: super-blocks of 256 (f16 d and dmin + 12 scale bytes + quants; Q6_K: quants,
  // 16 int8 scales, f16 d).
  CHECK(element_type_from_ggml(12) == ElementType::Q4_K);
  CHECK(element_traits(ElementType::Q4_K).block_bytes == 2 + 2 + 12 + 128);
  CHECK(element_type_from_ggml(13) == ElementType::Q5_K);
  CHECK(element_traits(ElementType::Q5_K).block_bytes == 2 + 2 + 12 + 32 + 128);
  CHECK(element_type_from_ggml(14) == ElementType::Q6_K);
  CHECK(element_traits(ElementType::Q6_K).block_bytes == 128 + 64 + 16 + 2);
  CHECK(element_traits(ElementType::Q6_K).block_elements == 256);
  // ggml's other 32-value blocks: Q4_1 (d, m, nibbles), Q5_0 (d, qh, nibbles), Q5_1 (d, m, qh,
  // nibbles); bf16 (type 30) two bytes a value.
  CHECK(element_type_from_ggml(3) == ElementType::Q4_1);
  CHECK(element_traits(ElementType::Q4_1).block_bytes == 2 + 2 + 16);
  CHECK(element_type_from_ggml(6) == ElementType::Q5_0);
  CHECK(element_traits(ElementType::Q5_0).block_bytes == 2 + 4 + 16);
  CHECK(element_type_from_ggml(7) == ElementType::Q5_1);
  CHECK(element_traits(ElementType::Q5_1).block_bytes == 2 + 2 + 4 + 16);
  CHECK(element_type_from_ggml(30) == ElementType::BF16);
  CHECK(element_traits(ElementType::BF16).block_bytes == 2);
  // ggml's 2- and 3-bit K formats: 84 bytes (scales, 2-bit values, d, dmin) and 110 bytes (high
  // bits, 2-bit values, 12 bytes of 6-bit scales, d) per 256 values.
  CHECK(element_type_from_ggml(10) == ElementType::Q2_K);
  CHECK(element_traits(ElementType::Q2_K).block_bytes == 16 + 64 + 2 + 2);
  CHECK(element_type_from_ggml(11) == ElementType::Q3_K);
  CHECK(element_traits(ElementType::Q3_K).block_bytes == 32 + 64 + 12 + 2);
  CHECK_FALSE(element_type_from_ggml(16));  // IQ2_XXS: not stored by infini
  CHECK_FALSE(element_type_from_name("iq2_xxs"));
}

TEST_CASE("Element bytes: whole blocks only, no overflow", "[element_type]") {
  CHECK(element_bytes(ElementType::F32, 3) == 12u);
  CHECK(element_bytes(ElementType::F16, 7) == 14u);
  CHECK(element_bytes(ElementType::F16, 0) == 0u);
  CHECK_FALSE(element_bytes(ElementType::F32, uint64_t(1) << 63));
  CHECK(scalar_bytes(ElementType::F32) == 4);
  CHECK(scalar_bytes(ElementType::F16) == 2);
  CHECK(element_bytes(ElementType::Q8_0, 64) == 68u);
  CHECK_FALSE(element_bytes(ElementType::Q8_0, 48));
  CHECK_THROWS_WITH(scalar_bytes(ElementType::Q8_0), Catch::Contains("block format"));
}

}  // namespace
}  // namespace infini::test
