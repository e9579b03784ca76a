#include "util/legacy_blocks.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "util/block_codec.hpp"
#include "util/half.hpp"

namespace infini {
namespace {

// Q5_0 and Q5_1 keep the fifth bit (16) of value j in bit j of a little-endian word qh.
uint32_t qh_at(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Where a format's 16 bytes of nibbles start (value j < 16 in the low nibble of byte j, value
// j + 16 in its high one), its qh word (five-bit formats) and whether it has a min.
struct Layout {
  unsigned nibbles, qh;
  bool five;
};
Layout layout(ElementType t) {
  switch (t) {
    case ElementType::Q4_0: return {2, 0, false};
    case ElementType::Q4_1: return {4, 0, false};
    case ElementType::Q5_0: return {6, 2, true};
    case ElementType::Q5_1: return {8, 4, true};
    default: return {0, 0, false};
  }
}

// A block's 32 quants (each 0..15 or 0..31) packed into its nibbles and qh.
void put_quants(const Layout& l, const unsigned* n, std::byte* block) {
  uint32_t qh = 0;
  for (unsigned j = 0; j < 16; ++j) {
    block[l.nibbles + j] = std::byte(uint8_t((n[j] & 15) | (n[j + 16] & 15) << 4));
    qh |= uint32_t(n[j] >> 4 & 1) << j | uint32_t(n[j + 16] >> 4 & 1) << (j + 16);
  }
  if (l.five) std::memcpy(block + l.qh, &qh, 4);
}

}  // namespace

void decode_legacy_block(ElementType type, const std::byte* block, double* out) {
  const double d = half_at(block);
  if (type == ElementType::Q8_0) {
    for (unsigned j = 0; j < kLegacyBlock; ++j) out[j] = d * double(static_cast<int8_t>(block[2 + j]));
    return;
  }
  const Layout l = layout(type);
  const uint32_t qh = l.five ? qh_at(block + l.qh) : 0;
  // Q4_0 and Q5_0 centre their quants (less 8 or 16); Q4_1 and Q5_1 add the block's min instead.
  const bool min = has_min_scale(type);  // value = d * n + m
  const double m = min ? half_at(block + 2) : 0.0;
  const int centre = min ? 0 : l.five ? 16 : 8;
  for (unsigned j = 0; j < kLegacyBlock; ++j) {
    const unsigned byte = unsigned(block[l.nibbles + j % 16]);
    const unsigned n = (j < 16 ? byte & 15 : byte >> 4) | (qh >> j & 1) << 4;
    out[j] = d * double(int(n) - centre) + m;
  }
}

void encode_legacy_block(ElementType type, const float* x, std::byte* block) {
  const Layout l = layout(type);
  unsigned n[kLegacyBlock];
  switch (type) {
    case ElementType::Q8_0: {
      // d = max|x| / 127, q = round(x / d).
      float amax = 0;
      for (unsigned j = 0; j < kLegacyBlock; ++j) amax = std::max(amax, std::fabs(x[j]));
      const float d = amax / 127.0f, inv = d != 0 ? 1.0f / d : 0.0f;
      put_half(block, d);
      for (unsigned j = 0; j < kLegacyBlock; ++j) block[2 + j] = std::byte(uint8_t(int8_t(std::lround(x[j] * inv))));
      return;
    }
    case ElementType::Q4_0:
    case ElementType::Q5_0: {
      // The value of largest magnitude, with its sign, maps to the lowest level (-8 or -16):
      // d = that value / -8 (or -16), n = x / d + 8 (16) rounded, at most 15 (31).
      float extreme = 0;
      for (unsigned j = 0; j < kLegacyBlock; ++j)
        if (std::fabs(x[j]) > std::fabs(extreme)) extreme = x[j];
      const float levels = l.five ? 16.0f : 8.0f;
      const float d = extreme / -levels, inv = d != 0 ? 1.0f / d : 0.0f;
      put_half(block, d);
      for (unsigned j = 0; j < kLegacyBlock; ++j)
        n[j] = unsigned(std::min(int(2 * levels) - 1, int(static_cast<int8_t>(x[j] * inv + (levels + 0.5f)))));
      break;
    }
    case ElementType::Q4_1:
    case ElementType::Q5_1: {
      // The block's range in 15 (31) steps from its min: d = (max - min) / 15, n = (x - min) / d
      // rounded (Q4_1 at most 15).
      float lo = FLT_MAX, hi = -FLT_MAX;
      for (unsigned j = 0; j < kLegacyBlock; ++j) {
        lo = std::min(lo, x[j]);
        hi = std::max(hi, x[j]);
      }
      const float d = (hi - lo) / (l.five ? 31.0f : 15.0f), inv = d != 0 ? 1.0f / d : 0.0f;
      put_half(block, d);
      put_half(block + 2, lo);
      for (unsigned j = 0; j < kLegacyBlock; ++j) {
        const float v = (x[j] - lo) * inv + 0.5f;
        n[j] = l.five ? unsigned(static_cast<uint8_t>(v)) : unsigned(std::min(15, int(static_cast<int8_t>(v))));
      }
      break;
    }
    default: return;  // not a legacy block format
  }
  put_quants(l, n, block);
}

}  // namespace infini
