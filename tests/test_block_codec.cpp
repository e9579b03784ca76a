// Block formats on the host (util/block_codec.hpp) against hand-made blocks: ggml's Q8_0 is an
// f16 scale then 32 int8 values, each value scale * q; Q4_0 an f16 scale then 16 bytes whose low
// nibbles are values 0..15 and high nibbles values 16..31, each value scale * (nibble - 8).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "infini/error.hpp"
#include "util/block_codec.hpp"
#include "util/half.hpp"

namespace infini::test {
namespace {

// One Q8_0 block from its scale and quants, written byte by byte as the format lays it out.
std::vector<std::byte> q8_block(float scale, const std::vector<int>& q) {
  std::vector<std::byte> b(34);
  const uint16_t h = float_to_half(scale);
  b[0] = std::byte(h & 0xff);
  b[1] = std::byte(h >> 8);
  for (size_t j = 0; j < 32; ++j) b[2 + j] = std::byte(uint8_t(int8_t(q[j])));
  return b;
}

TEST_CASE("Q8_0 blocks decode to scale times quant", "[quant]") {
  std::vector<int> q(32);
  for (int j = 0; j < 32; ++j) q[size_t(j)] = j % 2 ? -j * 4 : j * 3;  // -124 .. 90
  q[31] = -128;
  std::vector<std::byte> data = q8_block(0.5f, q);
  const std::vector<std::byte> second = q8_block(-0.25f, std::vector<int>(32, 127));
  data.insert(data.end(), second.begin(), second.end());
  std::vector<double> out(64);
  decode_blocks(ElementType::Q8_0, data, 0, 64, out.data());
  for (size_t j = 0; j < 32; ++j) CHECK(out[j] == 0.5 * q[j]);
  for (size_t j = 32; j < 64; ++j) CHECK(out[j] == -0.25 * 127);
  // A range that starts and ends inside blocks.
  std::vector<double> part(5);
  decode_blocks(ElementType::Q8_0, data, 30, 5, part.data());
  CHECK(part == std::vector<double>{0.5 * q[30], 0.5 * -128, -31.75, -31.75, -31.75});
}

TEST_CASE("Q8_0 encoding takes d = max|x| / 127 and rounds to nearest", "[quant]") {
  std::vector<float> x(64);
  for (size_t j = 0; j < 32; ++j) x[j] = float(j) - 12.7f;  // max |x| = 18.3, at j = 31
  std::vector<double> back(64);
  const std::vector<std::byte> bytes = encode_blocks(ElementType::Q8_0, x);  // second block all zero
  REQUIRE(bytes.size() == 68);
  decode_blocks(ElementType::Q8_0, bytes, 0, 64, back.data());
  const double d = double(half_to_float(float_to_half(x[31] / 127.0f)));
  for (size_t j = 0; j < 32; ++j) {
    INFO(j);
    // Half a step, plus the f16 rounding of the scale (at most 2^-11 of it) times up to 127.
    CHECK(std::abs(back[j] - x[j]) <= d * (0.5 + 127.0 / 2048) + 1e-6);
    CHECK(std::fmod(std::abs(back[j] / d), 1.0) == Approx(0).margin(1e-9));  // a whole number of steps
  }
  CHECK(std::abs(back[0]) == Approx(12.7).epsilon(0.01));
  for (size_t j = 32; j < 64; ++j) CHECK(back[j] == 0);
  CHECK_THROWS_WITH(encode_blocks(ElementType::Q8_0, std::vector<float>(33, 1.0f)), Catch::Contains("not whole q8_0 blocks"));
  x[3] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(encode_blocks(ElementType::Q8_0, x), Catch::Contains("not finite"));
}

TEST_CASE("Q4_0 blocks decode to scale times (nibble - 8)", "[quant]") {
  std::vector<std::byte> data(18);
  const uint16_t h = float_to_half(-1.5f);
  data[0] = std::byte(h & 0xff);
  data[1] = std::byte(h >> 8);
  for (unsigned j = 0; j < 16; ++j) data[2 + j] = std::byte(uint8_t(j | (15 - j) << 4));  // low j, high 15 - j
  std::vector<double> out(32);
  decode_blocks(ElementType::Q4_0, data, 0, 32, out.data());
  for (int j = 0; j < 16; ++j) {
    CHECK(out[size_t(j)] == -1.5 * (j - 8));
    CHECK(out[size_t(j) + 16] == -1.5 * (15 - j - 8));
  }
  std::vector<double> part(3);
  decode_blocks(ElementType::Q4_0, data, 15, 3, part.data());
  CHECK(part == std::vector<double>{-1.5 * 7, -1.5 * 7, -1.5 * 6});
}

TEST_CASE("Q4_0 encoding maps the largest magnitude to -8 and rounds the rest", "[quant]") {
  std::vector<float> x(32);
  for (size_t j = 0; j < 32; ++j) x[j] = 0.37f * (float(j) - 20.0f);  // -7.4 .. 4.07: extreme -7.4 at j = 0
  const std::vector<std::byte> bytes = encode_blocks(ElementType::Q4_0, x);
  REQUIRE(bytes.size() == 18);
  std::vector<double> back(32);
  decode_blocks(ElementType::Q4_0, bytes, 0, 32, back.data());
  const double d = double(half_to_float(float_to_half(x[0] / -8.0f)));
  CHECK(back[0] == Approx(-8 * d));
  for (size_t j = 0; j < 32; ++j) {
    INFO(j);
    CHECK(std::abs(back[j] - x[j]) <= d * (0.5 + 8.0 / 2048) + 1e-6);
  }
}

TEST_CASE("a block whose scale is NaN or infinite is found", "[quant]") {
  std::vector<std::byte> q4(36);  // two Q4_0 blocks, the second with an infinite scale
  q4[18 + 1] = std::byte(0x7c);
  CHECK(first_bad_scale(ElementType::Q4_0, q4) == 1);
  CHECK(first_bad_scale(ElementType::F16, q4) == -1);
  std::vector<std::byte> data = q8_block(1.0f, std::vector<int>(32, 1));
  CHECK(first_bad_scale(ElementType::Q8_0, data) == -1);
  const std::vector<std::byte> bad = q8_block(std::numeric_limits<float>::infinity(), std::vector<int>(32, 1));
  data.insert(data.end(), bad.begin(), bad.end());
  CHECK(first_bad_scale(ElementType::Q8_0, data) == 1);
  data[35] = std::byte(0x7e);  // the second block's scale becomes a NaN (0x7e..)
  CHECK(first_bad_scale(ElementType::Q8_0, data) == 1);
}

}  // namespace
}  // namespace infini::test
