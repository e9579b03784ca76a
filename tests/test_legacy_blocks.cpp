// ggml's Q4_1, Q5_0 and Q5_1 blocks and bf16 values on the host (util/legacy_blocks.hpp,
// util/bfloat16.hpp), against blocks written byte by byte from the formats' definitions:
// Q4_1 is f16 d, f16 m and 16 bytes of nibbles (value j < 16 the low nibble of byte j, value
// j + 16 its high nibble), each value d * n + m; Q5_0 is f16 d, a 32-bit word qh whose bit j is
// value j's fifth bit, and the nibbles, each value d * (n - 16); Q5_1 is d, m, qh, nibbles, each
// value d * n + m.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "util/bfloat16.hpp"
#include "util/block_codec.hpp"
#include "util/half.hpp"

namespace infini::test {
namespace {

void put_f16(std::vector<std::byte>& b, size_t at, float v) {
  const uint16_t h = float_to_half(v);
  b[at] = std::byte(h & 0xff);
  b[at + 1] = std::byte(h >> 8);
}

// One block of `type` holding quants n[0..31] (0..15 or 0..31), written from the layout above.
std::vector<std::byte> block_of(ElementType type, float d, float m, const std::vector<unsigned>& n) {
  const bool min = type != ElementType::Q5_0, five = type != ElementType::Q4_1;
  std::vector<std::byte> b(element_traits(type).block_bytes);
  put_f16(b, 0, d);
  if (min) put_f16(b, 2, m);
  const size_t qh_at = min ? 4 : 2, nibbles = five ? qh_at + 4 : 4;
  for (unsigned j = 0; j < 16; ++j) b[nibbles + j] = std::byte(uint8_t((n[j] & 15) | (n[j + 16] & 15) << 4));
  if (five)
    for (unsigned j = 0; j < 32; ++j)
      if (n[j] & 16) b[qh_at + j / 8] = std::byte(uint8_t(unsigned(b[qh_at + j / 8]) | 1u << (j % 8)));
  return b;
}

TEST_CASE("Q4_1, Q5_0 and Q5_1 blocks decode as their layouts define", "[quant]") {
  const ElementType type = GENERATE(ElementType::Q4_1, ElementType::Q5_0, ElementType::Q5_1);
  INFO(element_name(type));
  const unsigned levels = type == ElementType::Q4_1 ? 16 : 32;
  std::vector<unsigned> n(32);
  for (unsigned j = 0; j < 32; ++j) n[j] = (j * 7 + 3) % levels;  // every level, the fifth bit in both halves
  const float d = 0.375f, m = -2.5f;
  std::vector<std::byte> data = block_of(type, d, m, n);
  const std::vector<std::byte> second = block_of(type, -0.5f, 1.0f, std::vector<unsigned>(32, levels - 1));
  data.insert(data.end(), second.begin(), second.end());
  std::vector<double> out(64);
  decode_blocks(type, data, 0, 64, out.data());
  const auto value = [&](double dd, double mm, unsigned q) {
    return type == ElementType::Q5_0 ? dd * (int(q) - 16) : dd * q + mm;
  };
  for (unsigned j = 0; j < 32; ++j) {
    INFO(j);
    CHECK(out[j] == value(d, m, n[j]));
    CHECK(out[32 + j] == value(-0.5, 1.0, levels - 1));
  }
  std::vector<double> part(4);  // a range across the two blocks
  decode_blocks(type, data, 30, 4, part.data());
  CHECK(part == std::vector<double>{out[30], out[31], out[32], out[33]});
}

TEST_CASE("Q4_1, Q5_0 and Q5_1 encodings round to within half a step", "[quant]") {
  const ElementType type = GENERATE(ElementType::Q4_1, ElementType::Q5_0, ElementType::Q5_1);
  INFO(element_name(type));
  std::vector<float> x(96);
  for (size_t j = 0; j < 64; ++j) x[j] = 0.37f * (float(j % 32) - 20.0f) + (j >= 32 ? 3.0f : 0.0f);  // an offset block
  // The third block stays zero: it must decode to zero.
  const std::vector<std::byte> bytes = encode_blocks(type, x);
  REQUIRE(bytes.size() == 3 * element_traits(type).block_bytes);
  std::vector<double> back(96);
  decode_blocks(type, bytes, 0, 96, back.data());
  for (size_t b = 0; b < 2; ++b) {
    float lo = x[32 * b], hi = x[32 * b];
    for (size_t j = 32 * b; j < 32 * b + 32; ++j) lo = std::min(lo, x[j]), hi = std::max(hi, x[j]);
    // Step: the range in 15 or 31 steps (with a min), or twice the largest magnitude in 16 or 32.
    const double step = type == ElementType::Q4_1   ? (hi - lo) / 15.0
                        : type == ElementType::Q5_1 ? (hi - lo) / 31.0
                                                    : std::max(std::fabs(lo), std::fabs(hi)) / 16.0;
    for (size_t j = 32 * b; j < 32 * b + 32; ++j) {
      INFO(j);
      // Half a step, plus the f16 roundings of d and m (2^-11 of each, times up to 31 steps).
      CHECK(std::abs(back[j] - x[j]) <= step * (0.5 + 32.0 / 2048) + std::fabs(lo) / 2048 + 1e-6);
    }
  }
  for (size_t j = 64; j < 96; ++j) CHECK(back[j] == 0);
  x[40] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH(encode_blocks(type, x), Catch::Contains("not finite"));
}

TEST_CASE("a Q4_1, Q5_0 or Q5_1 block whose d or m is NaN or infinite is found", "[quant]") {
  const ElementType type = GENERATE(ElementType::Q4_1, ElementType::Q5_0, ElementType::Q5_1);
  INFO(element_name(type));
  const std::vector<unsigned> n(32, 1);
  std::vector<std::byte> data = block_of(type, 1.0f, 0.5f, n);
  CHECK(first_bad_scale(type, data) == -1);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<std::byte> bad_d = block_of(type, inf, 0.5f, n);
  data.insert(data.end(), bad_d.begin(), bad_d.end());
  CHECK(first_bad_scale(type, data) == 1);
  if (type != ElementType::Q5_0) {  // the min
    std::vector<std::byte> bad_m = block_of(type, 1.0f, std::numeric_limits<float>::quiet_NaN(), n);
    CHECK(first_bad_scale(type, bad_m) == 0);
  }
}

TEST_CASE("bf16 is the high half of an f32, narrowed to nearest even", "[quant]") {
  CHECK(bf16_to_float(0x3f80) == 1.0f);
  CHECK(bf16_to_float(0xc040) == -3.0f);
  CHECK(std::isinf(bf16_to_float(0x7f80)));
  CHECK(std::isnan(bf16_to_float(0x7fc1)));
  const auto narrow = [](uint32_t bits) { return float_to_bf16(std::bit_cast<float>(bits)); };
  CHECK(narrow(0x3f808000u) == 0x3f80);  // a tie goes to the even mantissa
  CHECK(narrow(0x3f818000u) == 0x3f82);
  CHECK(narrow(0x3f808001u) == 0x3f81);  // past the tie, up
  CHECK(narrow(0x7f7fffffu) == 0x7f80);  // the largest f32 rounds to infinity
  CHECK(narrow(0x00000001u) == 0x0000);  // the smallest subnormal rounds to zero, not flushed by rule
  CHECK(narrow(0x00008000u) == 0x0000);
  CHECK(narrow(0x00018000u) == 0x0002);
  CHECK((narrow(0x7f800001u) & 0x7fc0) == 0x7fc0);  // a signalling NaN stays NaN, made quiet
  // Stored and decoded: bf16 values come back exactly, and encode_blocks writes bf16 as above.
  const std::vector<float> x = {1.0f, -3.0f, 0.1f, 65504.0f, 3.0e38f, 1.0e-40f};
  const std::vector<std::byte> bytes = encode_blocks(ElementType::BF16, x);
  REQUIRE(bytes.size() == 12);
  std::vector<double> back(x.size());
  decode_blocks(ElementType::BF16, bytes, 0, x.size(), back.data());
  for (size_t i = 0; i < x.size(); ++i) {
    INFO(i);
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    CHECK(h == float_to_bf16(x[i]));
    CHECK(back[i] == double(bf16_to_float(h)));
    // 8 significant bits; a subnormal is off by at most half bf16's smallest step, 2^-133
    CHECK(std::abs(back[i] - x[i]) <= std::abs(x[i]) / 256 + 0x1p-134);
  }
}

}  // namespace
}  // namespace infini::test
