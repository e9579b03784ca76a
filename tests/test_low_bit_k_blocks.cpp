// Q2_K and Q3_K on the host: blocks built byte by byte from ggml's layout decode to the values the
// format defines, and a non-finite d or dmin is found. (Their encoders' rounding error and bytes
// against ggml's own: test_block_codec.cpp.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "util/block_codec.hpp"
#include "util/half.hpp"

namespace infini::test {
namespace {

void put_half_at(std::vector<std::byte>& b, size_t at, float v) {
  const uint16_t h = float_to_half(v);
  std::memcpy(b.data() + at, &h, 2);
}

void or_at(std::vector<std::byte>& b, size_t at, unsigned v) { b[at] |= std::byte(uint8_t(v)); }

}  // namespace

TEST_CASE("Q2_K blocks decode to d * scale * q - dmin * min per sub-block of 16", "[quant]") {
  // scales[16] (scale in the low nibble, min in the high), qs[64], f16 d at 80, dmin at 82. In
  // each half of 128 values, value 32j + l (l < 32) keeps its 2 bits at bits 2j of qs[32 half + l].
  std::vector<std::byte> b(84);
  for (unsigned s = 0; s < 16; ++s) b[s] = std::byte(uint8_t((s * 7 + 3) % 16 | ((s * 5 + 1) % 16) << 4));
  put_half_at(b, 80, 0.25f);
  put_half_at(b, 82, -0.5f);
  auto q = [](unsigned i) { return (i * 13 + i / 7) % 4; };
  for (unsigned i = 0; i < 256; ++i) or_at(b, 16 + 32 * (i / 128) + i % 32, q(i) << (2 * (i % 128 / 32)));
  std::vector<double> out(256);
  decode_blocks(ElementType::Q2_K, b, 0, 256, out.data());
  for (unsigned i = 0; i < 256; ++i) {
    const unsigned s = i / 16, scale = (s * 7 + 3) % 16, min = (s * 5 + 1) % 16;
    INFO("value " << i);
    CHECK(out[i] == 0.25 * scale * q(i) - (-0.5) * min);
  }
}

TEST_CASE("Q3_K blocks decode to d * (scale - 32) * (q - 4) per sub-block of 16", "[quant]") {
  // hmask[32] (value v's third bit: bit v / 32 of byte v % 32), qs[64] as Q2_K's, scales[12] at 96
  // (the 6-bit scale of sub-block s: low nibble of byte s for s < 8, high nibble of byte s - 8
  // else, its top bits at bits 2 (s / 4) of byte 8 + s % 4), f16 d at 108.
  std::vector<std::byte> b(110);
  auto scale6 = [](unsigned s) { return (s * 23 + 9) % 64; };
  for (unsigned s = 0; s < 16; ++s) {
    or_at(b, 96 + s % 8, (scale6(s) & 15) << (s < 8 ? 0 : 4));
    or_at(b, 96 + 8 + s % 4, (scale6(s) >> 4) << (2 * (s / 4)));
  }
  put_half_at(b, 108, -0.0625f);
  auto q = [](unsigned i) { return (i * 29 + i / 5) % 8; };
  for (unsigned i = 0; i < 256; ++i) {
    or_at(b, 32 + 32 * (i / 128) + i % 32, (q(i) & 3) << (2 * (i % 128 / 32)));
    or_at(b, i % 32, (q(i) >> 2) << (i / 32));
  }
  std::vector<double> out(256);
  decode_blocks(ElementType::Q3_K, b, 0, 256, out.data());
  for (unsigned i = 0; i < 256; ++i) {
    INFO("value " << i);
    CHECK(out[i] == -0.0625 * (int(scale6(i / 16)) - 32) * (int(q(i)) - 4));
  }
  std::vector<double> part(5);  // a range across two sub-blocks
  decode_blocks(ElementType::Q3_K, b, 14, 5, part.data());
  CHECK(part == std::vector<double>(out.begin() + 14, out.begin() + 19));
}

TEST_CASE("a Q2_K or Q3_K block whose d or dmin is NaN or infinite is found", "[quant]") {
  std::vector<std::byte> q2 = encode_blocks(ElementType::Q2_K, std::vector<float>(512, 1.5f));
  CHECK(first_bad_scale(ElementType::Q2_K, q2) == -1);
  q2[84 + 83] = std::byte(0x7c);  // the second block's dmin becomes infinite
  CHECK(first_bad_scale(ElementType::Q2_K, q2) == 1);
  std::vector<std::byte> q3 = encode_blocks(ElementType::Q3_K, std::vector<float>(512, -0.5f));
  CHECK(first_bad_scale(ElementType::Q3_K, q3) == -1);
  q3[109] = std::byte(0x7e);  // the first block's d becomes a NaN
  CHECK(first_bad_scale(ElementType::Q3_K, q3) == 0);
}

}  // namespace infini::test
