#include "util/block_codec.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "infini/error.hpp"
#include "util/half.hpp"

namespace infini {
namespace {

constexpr uint64_t kQ8Block = 32, kQ8Bytes = 34;
constexpr uint64_t kQ4Block = 32, kQ4Bytes = 18;

// Both formats start a block with its f16 scale.
float block_scale(const std::byte* block) {
  uint16_t h;
  std::memcpy(&h, block, 2);
  return half_to_float(h);
}

}  // namespace

void decode_blocks(ElementType type, std::span<const std::byte> data, uint64_t first, uint64_t count, double* out) {
  // One case per element type: -Wswitch names this place when a type is added.
  switch (type) {
    case ElementType::F32:
      for (uint64_t i = 0; i < count; ++i) {
        float f;
        std::memcpy(&f, data.data() + (first + i) * 4, 4);
        out[i] = double(f);
      }
      return;
    case ElementType::F16:
      for (uint64_t i = 0; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, data.data() + (first + i) * 2, 2);
        out[i] = double(half_to_float(h));
      }
      return;
    case ElementType::Q8_0:
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t e = first + i;
        const std::byte* block = data.data() + e / kQ8Block * kQ8Bytes;
        const auto q = static_cast<int8_t>(block[2 + e % kQ8Block]);
        out[i] = double(block_scale(block)) * double(q);
      }
      return;
    case ElementType::Q4_0:
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t e = first + i, j = e % kQ4Block;
        const std::byte* block = data.data() + e / kQ4Block * kQ4Bytes;
        const auto byte = static_cast<unsigned>(block[2 + j % 16]);
        const int n = int(j < 16 ? byte & 15u : byte >> 4);
        out[i] = double(block_scale(block)) * double(n - 8);
      }
      return;
  }
}

std::vector<std::byte> encode_blocks(ElementType type, std::span<const float> values) {
  const ElementTraits& t = element_traits(type);
  if (values.size() % t.block_elements != 0)
    throw Error(std::to_string(values.size()) + " values are not whole " + std::string(t.name) + " blocks of " +
                std::to_string(t.block_elements));
  if (t.block_elements > 1)  // f32 and f16 carry NaN and Inf as they are (tests write them on purpose)
    for (float v : values)
      if (!std::isfinite(v)) throw Error("cannot encode a value that is not finite as " + std::string(t.name));
  std::vector<std::byte> out(values.size() / t.block_elements * t.block_bytes);
  switch (type) {
    case ElementType::F32:
      if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
      break;
    case ElementType::F16:
      for (size_t i = 0; i < values.size(); ++i) {
        const uint16_t h = float_to_half(values[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
      break;
    case ElementType::Q8_0:
      for (size_t b = 0; b < values.size() / kQ8Block; ++b) {
        const float* x = values.data() + b * kQ8Block;
        std::byte* block = out.data() + b * kQ8Bytes;
        float amax = 0;
        for (uint64_t j = 0; j < kQ8Block; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float inv = d != 0 ? 1.0f / d : 0.0f;
        const uint16_t h = float_to_half(d);
        std::memcpy(block, &h, 2);
        for (uint64_t j = 0; j < kQ8Block; ++j) block[2 + j] = std::byte(uint8_t(int8_t(std::lround(x[j] * inv))));
      }
      break;
    case ElementType::Q4_0:
      // The value of largest magnitude, with its sign, maps to -8: d = that value / -8, and
      // n = x / d + 8 rounded, at most 15.
      for (size_t b = 0; b < values.size() / kQ4Block; ++b) {
        const float* x = values.data() + b * kQ4Block;
        std::byte* block = out.data() + b * kQ4Bytes;
        float extreme = 0;
        for (uint64_t j = 0; j < kQ4Block; ++j)
          if (std::fabs(x[j]) > std::fabs(extreme)) extreme = x[j];
        const float d = extreme / -8.0f;
        const float inv = d != 0 ? 1.0f / d : 0.0f;
        const uint16_t h = float_to_half(d);
        std::memcpy(block, &h, 2);
        auto nibble = [&](uint64_t j) { return unsigned(std::min(15, int(x[j] * inv + 8.5f))); };
        for (uint64_t j = 0; j < 16; ++j) block[2 + j] = std::byte(uint8_t(nibble(j) | nibble(j + 16) << 4));
      }
      break;
  }
  return out;
}

int64_t first_bad_scale(ElementType type, std::span<const std::byte> data) {
  const ElementTraits& t = element_traits(type);
  if (t.block_elements == 1) return -1;
  for (uint64_t b = 0; b < data.size() / t.block_bytes; ++b)
    if (!std::isfinite(block_scale(data.data() + b * t.block_bytes))) return int64_t(b);
  return -1;
}

}  // namespace infini
