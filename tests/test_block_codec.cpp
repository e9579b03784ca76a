// Block formats on the host (util/block_codec.hpp) against hand-made blocks: ggml's Q8_0 is an
// f16 scale then 32 int8 values, each value scale * q; Q4_0 an f16 scale then 16 bytes whose low
// nibbles are values 0..15 and high nibbles values 16..31, each value scale * (nibble - 8).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>
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

// ggml's K formats, built byte by byte from the layout as ggml documents it (block_q4_K,
// block_q5_K, block_q6_K): Q4_K/Q5_K keep eight 6-bit scales and mins in 12 bytes (bytes 0-3:
// scales 0-3 in bits 0-5 and bits 4-5 of scales 4-7 in bits 6-7; bytes 4-7 the same for mins;
// bytes 8-11: scale 4-7 bits 0-3 in the low nibble, min 4-7 bits 0-3 in the high nibble).
void put_half_bytes(std::vector<std::byte>& b, size_t at, float v) {
  const uint16_t h = float_to_half(v);
  b[at] = std::byte(h & 0xff);
  b[at + 1] = std::byte(h >> 8);
}
void put_six_bit_scales(std::vector<std::byte>& b, size_t at, const unsigned (&scale)[8], const unsigned (&min)[8]) {
  for (unsigned s = 0; s < 4; ++s) {
    b[at + s] = std::byte(uint8_t((scale[s] & 63) | (scale[s + 4] >> 4) << 6));
    b[at + 4 + s] = std::byte(uint8_t((min[s] & 63) | (min[s + 4] >> 4) << 6));
    b[at + 8 + s] = std::byte(uint8_t((scale[s + 4] & 15) | (min[s + 4] & 15) << 4));
  }
}

TEST_CASE("Q4_K and Q5_K blocks decode to d * scale * q - dmin * min per sub-block", "[quant]") {
  const bool five = GENERATE(false, true);
  INFO((five ? "Q5_K" : "Q4_K"));
  std::vector<std::byte> b(five ? 176 : 144);
  put_half_bytes(b, 0, 0.5f);
  put_half_bytes(b, 2, 0.25f);
  unsigned scale[8], min[8];
  for (unsigned s = 0; s < 8; ++s) {
    scale[s] = 8 * s + 5;  // 5 .. 61: sub-blocks 4-7 use the top bits
    min[s] = 63 - 7 * s;   // 63 .. 14
  }
  put_six_bit_scales(b, 4, scale, min);
  // Sub-blocks 2j and 2j + 1 share 32 quant bytes: low nibbles for 2j, high for 2j + 1. Q5_K's
  // fifth bits: bit s of byte l of qh (bytes 16..47) belongs to value l of sub-block s.
  auto q = [&](unsigned s, unsigned l) { return (l * 7 + s * 3) % (five ? 32 : 16); };
  const size_t qs = five ? 48 : 16;
  for (unsigned s = 0; s < 8; ++s)
    for (unsigned l = 0; l < 32; ++l) {
      const unsigned n = q(s, l);
      b[qs + 32 * (s / 2) + l] |= std::byte(uint8_t((n & 15) << (4 * (s % 2))));
      if (five) b[16 + l] |= std::byte(uint8_t((n >> 4) << s));
    }
  std::vector<double> out(256);
  decode_blocks(five ? ElementType::Q5_K : ElementType::Q4_K, b, 0, 256, out.data());
  for (unsigned s = 0; s < 8; ++s)
    for (unsigned l = 0; l < 32; ++l) {
      INFO("sub-block " << s << " value " << l);
      CHECK(out[32 * s + l] == 0.5 * scale[s] * q(s, l) - 0.25 * min[s]);
    }
  std::vector<double> part(3);  // a range inside the block
  decode_blocks(five ? ElementType::Q5_K : ElementType::Q4_K, b, 159, 3, part.data());
  CHECK(part == std::vector<double>{out[159], out[160], out[161]});
}

TEST_CASE("Q6_K blocks decode to d * scale * (q - 32) per sub-block of 16", "[quant]") {
  // ql[128] low nibbles, qh[64] high bit pairs, int8 scales[16], f16 d. In each half (128 values),
  // value 32j + l takes nibble j / 2 of ql[64 half + 32 (j % 2) + l] and bits 2j..2j+1 of
  // qh[32 half + l]; its scale is scales[8 half + 2j + l / 16].
  std::vector<std::byte> b(210);
  put_half_bytes(b, 208, -0.125f);
  for (unsigned s = 0; s < 16; ++s) b[192 + s] = std::byte(uint8_t(int8_t(int(s) * 17 - 128)));  // -128 .. 127
  auto q = [](unsigned i) { return (i * 37 + 5) % 64; };
  for (unsigned i = 0; i < 256; ++i) {
    const unsigned half = i / 128, j = i % 128 / 32, l = i % 32;
    b[64 * half + 32 * (j % 2) + l] |= std::byte(uint8_t((q(i) & 15) << (4 * (j / 2))));
    b[128 + 32 * half + l] |= std::byte(uint8_t((q(i) >> 4) << (2 * j)));
  }
  std::vector<double> out(256);
  decode_blocks(ElementType::Q6_K, b, 0, 256, out.data());
  for (unsigned i = 0; i < 256; ++i) {
    const unsigned half = i / 128, j = i % 128 / 32, l = i % 32;
    const int scale = int((8 * half + 2 * j + l / 16) * 17) - 128;
    INFO("value " << i);
    CHECK(out[i] == -0.125 * scale * (int(q(i)) - 32));
  }
}

TEST_CASE("K-format encoding rounds to within the formats' expected error", "[quant]") {
  // Round to nearest on a uniform grid of step D leaves an error of D^2 / 12. For Gaussian values
  // a sub-block of 32 spans about 4.1 sigma, so Q4_K's step is about 4.1 / 15 sigma (NMSE about
  // 0.006) and Q5_K's 4.1 / 31 (0.0015); Q6_K maps a 16-value sub-block's largest magnitude
  // (about 2 sigma) to 32 (0.0003). The bounds below add about 60% for the quantized scales.
  // Q2_K's 4 levels over a 16-value sub-block (about 3.5 sigma) leave about 0.08 after its fit,
  // Q3_K's 8 levels about 0.02 (ggml's own encoder: at most 0.104 and 0.027 over 16 such blocks).
  const ElementType type =
      GENERATE(ElementType::Q4_K, ElementType::Q5_K, ElementType::Q6_K, ElementType::Q2_K, ElementType::Q3_K);
  const double bound = type == ElementType::Q4_K   ? 0.01
                       : type == ElementType::Q5_K ? 0.0025
                       : type == ElementType::Q6_K ? 0.0006
                       : type == ElementType::Q2_K ? 0.15
                                                   : 0.045;
  INFO(element_name(type));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.3f, 1.0f);
  std::vector<float> x(4 * 256);
  for (float& v : x) v = normal(rng);
  for (size_t i = 256; i < 512; ++i) x[i] = 0;          // an all-zero block
  for (size_t i = 512; i < 768; ++i) x[i] = std::fabs(x[i]) + 2;  // all positive, away from 0
  const std::vector<std::byte> bytes = encode_blocks(type, x);
  REQUIRE(bytes.size() == 4 * element_traits(type).block_bytes);
  CHECK(first_bad_scale(type, bytes) == -1);
  std::vector<double> back(x.size());
  decode_blocks(type, bytes, 0, x.size(), back.data());
  for (size_t i = 256; i < 512; ++i) CHECK(back[i] == 0);
  for (size_t block : {0, 2, 3}) {
    double err = 0, power = 0;
    for (size_t i = 256 * block; i < 256 * (block + 1); ++i) {
      err += (back[i] - x[i]) * (back[i] - x[i]);
      power += double(x[i]) * x[i];
    }
    INFO("block " << block);
    CHECK(err / power < bound);
  }
  CHECK_THROWS_WITH(encode_blocks(type, std::vector<float>(255, 1.0f)), Catch::Contains("not whole"));
}

TEST_CASE("a K-format block whose d or dmin is NaN or infinite is found", "[quant]") {
  const std::vector<std::byte> good = encode_blocks(ElementType::Q4_K, std::vector<float>(512, 1.5f));
  CHECK(first_bad_scale(ElementType::Q4_K, good) == -1);
  std::vector<std::byte> bad = good;
  bad[144 + 3] = std::byte(0x7c);  // the second block's dmin becomes infinite
  CHECK(first_bad_scale(ElementType::Q4_K, bad) == 1);
  std::vector<std::byte> q6 = encode_blocks(ElementType::Q6_K, std::vector<float>(512, -0.5f));
  CHECK(first_bad_scale(ElementType::Q6_K, q6) == -1);
  q6[208 + 1] = std::byte(0x7e);  // the first block's d becomes a NaN
  CHECK(first_bad_scale(ElementType::Q6_K, q6) == 0);
}

// 16 super-blocks of 256 values: uniform, Gaussian-like, heavy-tailed, all negative, large,
// tiny, sparse (mostly zero), a zero block, steps of repeated values; from a fixed integer
// generator, so every platform encodes the same floats.
std::vector<float> quant_parity_input() {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto uniform = [&]() {  // in [0, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 40) / double(1ull << 24);
  };
  std::vector<float> x;
  for (int block = 0; block < 16; ++block)
    for (int i = 0; i < 256; ++i) {
      const double u = uniform(), v = uniform();
      const double gauss = (u + v + uniform() + uniform() - 2.0) * 1.7;
      double value = 0;
      switch (block % 8) {
        case 0: value = u - 0.5; break;
        case 1: value = gauss * 0.02; break;
        case 2: value = 0.01 * std::tan(3.0 * (u - 0.5)); break;
        case 3: value = -std::fabs(gauss) * 3 - 0.5; break;
        case 4: value = gauss * 150.0; break;
        case 5: value = gauss * 1e-6; break;
        case 6: value = v < 0.1 ? gauss : 0.0; break;
        case 7: value = block == 7 ? 0.0 : std::floor(u * 5) * 0.25 - 0.5; break;
      }
      x.push_back(float(value));
    }
  return x;
}

uint64_t fnv1a(std::span<const std::byte> bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (std::byte b : bytes) h = (h ^ uint64_t(b)) * 0x100000001b3ull;
  return h;
}

// [threads]: left out of the arm64 run under qemu-user, where threads hang.
TEST_CASE("large tensors encoded on several threads are byte for byte those of one thread", "[quant][threads]") {
  // 5001 blocks: past the size where the work is split, in uneven shares of 3 threads (and of one
  // per core); the same values encoded in slices of 1000 blocks on the calling thread.
  const ElementType type = GENERATE(ElementType::Q8_0, ElementType::Q4_0, ElementType::Q4_1, ElementType::Q5_0,
                                    ElementType::Q5_1, ElementType::IQ4_NL, ElementType::IQ4_XS, ElementType::Q2_K,
                                    ElementType::Q3_K, ElementType::Q4_K, ElementType::Q5_K, ElementType::Q6_K);
  const size_t block = element_traits(type).block_elements, blocks = 5001;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 0.05f);
  std::vector<float> x(blocks * block);
  for (float& v : x) v = dist(rng);
  std::vector<std::byte> sliced;
  for (size_t first = 0; first < blocks; first += 1000) {
    const size_t n = std::min<size_t>(1000, blocks - first);
    const std::vector<std::byte> part = encode_blocks(type, std::span<const float>(x).subspan(first * block, n * block));
    sliced.insert(sliced.end(), part.begin(), part.end());
  }
  INFO(element_traits(type).name);
  CHECK(sliced.size() == blocks * element_traits(type).block_bytes);
  CHECK(encode_blocks(type, x, 3) == sliced);
  CHECK(encode_blocks(type, x, 0) == sliced);
}

TEST_CASE("every encoder writes the bytes ggml's reference quantizer writes", "[quant]") {
  // FNV-1a hashes of what quantize_row_q8_0_ref, _q4_0_ref, _q4_1_ref, _q5_0_ref, _q5_1_ref,
  // _q4_K_ref, _q5_K_ref, _q6_K_ref and ggml_fp32_to_bf16_row_ref (libggml-base of
  // @node-llama-cpp/linux-x64-vulkan 3.22.1) wrote for these floats. Beyond this input, the
  // encoders matched those functions byte for byte on more values of other distributions when
  // they were written (Q4_1, Q5_0, Q5_1 and bf16 on 400 tensors of 1024 values each).
  const std::vector<float> x = quant_parity_input();
  REQUIRE(x.size() == 16 * 256);
  CHECK(fnv1a(encode_blocks(ElementType::Q8_0, x)) == 0x5a8816b954e2e97dull);
  CHECK(fnv1a(encode_blocks(ElementType::Q4_0, x)) == 0x852db98736b02c91ull);
  CHECK(fnv1a(encode_blocks(ElementType::Q4_1, x)) == 0xf52f3c34445d4b96ull);
  CHECK(fnv1a(encode_blocks(ElementType::Q5_0, x)) == 0x0b9eeff41163f94eull);
  CHECK(fnv1a(encode_blocks(ElementType::Q5_1, x)) == 0xb4b00ee967c144a6ull);
  CHECK(fnv1a(encode_blocks(ElementType::BF16, x)) == 0x0036130049d59892ull);
  CHECK(fnv1a(encode_blocks(ElementType::Q4_K, x)) == 0x7b3a2d1842183da3ull);
  CHECK(fnv1a(encode_blocks(ElementType::Q5_K, x)) == 0x9295db6dbda8eddbull);
  CHECK(fnv1a(encode_blocks(ElementType::Q6_K, x)) == 0x70de8f104ed534f8ull);
  // IQ4_NL and IQ4_XS: what ggml_quantize_chunk (llama-quantize's path, no importance matrix)
  // writes; IQ4_NL's from_float_ref in that build writes other bytes. Both matched it on 8
  // tensors of 8192 values of other kinds (uniform, normal, outliers, zero blocks, positive,
  // tiny, scales spread over 10^-3..10^2, integers) when the encoders were written.
  CHECK(fnv1a(encode_blocks(ElementType::IQ4_NL, x)) == 0x65783dcef35abc0cull);
  CHECK(fnv1a(encode_blocks(ElementType::IQ4_XS, x)) == 0x2c1ca965aedbae46ull);
  // quantize_row_q2_K_ref and _q3_K_ref (the same build). Both matched those functions byte for
  // byte on 450 tensors of 4096 values each of the kinds above when the encoders were written,
  // and dequantize_row_q2_K / _q3_K gave the values decode_blocks gives.
  CHECK(fnv1a(encode_blocks(ElementType::Q2_K, x)) == 0x9785db135c5bc257ull);
  CHECK(fnv1a(encode_blocks(ElementType::Q3_K, x)) == 0x686a3df58859b2f3ull);
}

}  // namespace
}  // namespace infini::test
