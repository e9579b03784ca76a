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
constexpr uint64_t kSuper = 256;  // values per K-format super-block

float half_at(const std::byte* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return half_to_float(h);
}
void put_half(std::byte* p, float v) {
  const uint16_t h = float_to_half(v);
  std::memcpy(p, &h, 2);
}
unsigned byte_at(const std::byte* p, uint64_t i) { return unsigned(p[i]); }

// Q4_K and Q5_K pack eight 6-bit scales and eight 6-bit mins into 12 bytes: sub-blocks 0-3 in
// the low 6 bits of bytes 0-3 (scales) and 4-7 (mins); sub-blocks 4-7 in the nibbles of bytes
// 8-11 (scale low, min high), with their top two bits in the spare top bits of bytes 0-7.
void unpack_scale_min(const std::byte* packed, unsigned s, unsigned& scale, unsigned& min) {
  if (s < 4) {
    scale = byte_at(packed, s) & 63;
    min = byte_at(packed, s + 4) & 63;
  } else {
    scale = (byte_at(packed, s + 4) & 15) | (byte_at(packed, s - 4) >> 6) << 4;
    min = (byte_at(packed, s + 4) >> 4) | (byte_at(packed, s) >> 6) << 4;
  }
}
void pack_scale_min(std::byte* packed, unsigned s, unsigned scale, unsigned min) {
  auto set = [&](unsigned i, unsigned v) { packed[i] = std::byte(uint8_t(byte_at(packed, i) | v)); };
  if (s < 4) {
    set(s, scale);
    set(s + 4, min);
  } else {
    set(s + 4, (scale & 15) | (min & 15) << 4);
    set(s - 4, (scale >> 4) << 6);
    set(s, (min >> 4) << 6);
  }
}

// The 256 values of one K-format super-block.
void decode_super_block(ElementType type, const std::byte* block, double* out) {
  if (type == ElementType::Q6_K) {
    // ql[128], qh[64], int8 scales[16], f16 d. Each half of 128 values takes 64 ql bytes and 32
    // qh bytes: value 32q + l of the half (q < 4, l < 32) is nibble q / 2 of ql[32 (q % 2) + l]
    // with bits 2q, 2q + 1 of qh[l] above it, less 32; its scale is scales[8 half + 2q + l / 16].
    const double d = half_at(block + 208);
    for (unsigned half = 0; half < 2; ++half)
      for (unsigned q = 0; q < 4; ++q)
        for (unsigned l = 0; l < 32; ++l) {
          const unsigned low = byte_at(block, 64 * half + 32 * (q % 2) + l) >> (4 * (q / 2)) & 15;
          const unsigned high = byte_at(block, 128 + 32 * half + l) >> (2 * q) & 3;
          const auto scale = static_cast<int8_t>(block[192 + 8 * half + 2 * q + l / 16]);
          out[128 * half + 32 * q + l] = d * double(scale) * (int(low | high << 4) - 32);
        }
    return;
  }
  // Q4_K: f16 d, f16 dmin, scales[12], qs[128]; Q5_K puts qh[32] before qs. Sub-block s (32
  // values) is nibble s % 2 of qs[32 (s / 2) + l]; Q5_K adds bit s of qh[l] as 16.
  const double d = half_at(block), dmin = half_at(block + 2);
  const bool five = type == ElementType::Q5_K;
  const std::byte* qs = block + (five ? 48 : 16);
  for (unsigned s = 0; s < 8; ++s) {
    unsigned scale, min;
    unpack_scale_min(block + 4, s, scale, min);
    for (unsigned l = 0; l < 32; ++l) {
      unsigned n = byte_at(qs, 32 * (s / 2) + l) >> (4 * (s % 2)) & 15;
      if (five) n |= (byte_at(block, 16 + l) >> s & 1) << 4;
      out[32 * s + l] = d * scale * n - dmin * min;
    }
  }
}

// Round-to-nearest encoders of the K formats, following the formats' scale rules without ggml's
// iterative search: a sub-block's scale (and, for Q4_K/Q5_K, its min) comes from its extremes,
// the scales are quantized against the super-block's largest, and the values are rounded against
// the quantized scales.
void encode_q45_k(const float* x, std::byte* block, bool five) {
  const int top = five ? 31 : 15;
  float scale[8], min[8], max_scale = 0, max_min = 0;
  for (unsigned s = 0; s < 8; ++s) {
    float lo = 0, hi = x[32 * s];  // the min is at most 0, as in ggml
    for (unsigned l = 0; l < 32; ++l) {
      lo = std::min(lo, x[32 * s + l]);
      hi = std::max(hi, x[32 * s + l]);
    }
    scale[s] = std::max(0.0f, hi - lo) / float(top);
    min[s] = -lo;
    max_scale = std::max(max_scale, scale[s]);
    max_min = std::max(max_min, min[s]);
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f, inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  std::memset(block, 0, five ? 176 : 144);
  put_half(block, max_scale / 63.0f);
  put_half(block + 2, max_min / 63.0f);
  const float d = half_at(block), dmin = half_at(block + 2);
  std::byte* qs = block + (five ? 48 : 16);
  for (unsigned s = 0; s < 8; ++s) {
    const auto ls = unsigned(std::min(63L, std::lround(inv_scale * scale[s])));
    const auto lm = unsigned(std::min(63L, std::lround(inv_min * min[s])));
    pack_scale_min(block + 4, s, ls, lm);
    const float step = d * float(ls), offset = dmin * float(lm);
    for (unsigned l = 0; l < 32; ++l) {
      const long n = step > 0 ? std::clamp(std::lround((x[32 * s + l] + offset) / step), 0L, long(top)) : 0L;
      const unsigned at = 32 * (s / 2) + l;
      qs[at] = std::byte(uint8_t(byte_at(qs, at) | unsigned(n & 15) << (4 * (s % 2))));
      if (five) block[16 + l] = std::byte(uint8_t(byte_at(block, 16 + l) | unsigned(n >> 4) << s));
    }
  }
}

void encode_q6_k(const float* x, std::byte* block) {
  // Each sub-block of 16 maps its value of largest magnitude to -32; the sub-block scales are
  // int8 against the super-block's largest (which maps to -128).
  float scale[16], max_scale = 0;
  for (unsigned s = 0; s < 16; ++s) {
    float extreme = 0;
    for (unsigned l = 0; l < 16; ++l)
      if (std::fabs(x[16 * s + l]) > std::fabs(extreme)) extreme = x[16 * s + l];
    scale[s] = extreme / -32.0f;
    if (std::fabs(scale[s]) > std::fabs(max_scale)) max_scale = scale[s];
  }
  std::memset(block, 0, 210);
  const float inv = max_scale != 0 ? -128.0f / max_scale : 0.0f;
  put_half(block + 208, max_scale != 0 ? 1.0f / inv : 0.0f);
  const float d = half_at(block + 208);
  for (unsigned s = 0; s < 16; ++s) {
    const auto ls = int8_t(std::min(127L, std::lround(inv * scale[s])));
    block[192 + s] = std::byte(uint8_t(ls));
    const float step = d * float(ls);
    for (unsigned l = 0; l < 16; ++l) {
      const unsigned i = 16 * s + l, half = i / 128, q = i % 128 / 32, r = i % 32;
      const long n = (step != 0 ? std::clamp(std::lround(x[i] / step), -32L, 31L) : 0L) + 32;
      const unsigned lo_at = 64 * half + 32 * (q % 2) + r, hi_at = 128 + 32 * half + r;
      block[lo_at] = std::byte(uint8_t(byte_at(block, lo_at) | unsigned(n & 15) << (4 * (q / 2))));
      block[hi_at] = std::byte(uint8_t(byte_at(block, hi_at) | unsigned(n >> 4) << (2 * q)));
    }
  }
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
        out[i] = double(half_at(block)) * double(q);
      }
      return;
    case ElementType::Q4_0:
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t e = first + i, j = e % kQ4Block;
        const std::byte* block = data.data() + e / kQ4Block * kQ4Bytes;
        const auto byte = static_cast<unsigned>(block[2 + j % 16]);
        const int n = int(j < 16 ? byte & 15u : byte >> 4);
        out[i] = double(half_at(block)) * double(n - 8);
      }
      return;
    case ElementType::Q4_K:
    case ElementType::Q5_K:
    case ElementType::Q6_K: {
      const uint64_t bytes = element_traits(type).block_bytes;
      double values[kSuper];
      for (uint64_t i = 0; i < count;) {
        const uint64_t e = first + i, b = e / kSuper, at = e % kSuper, n = std::min(kSuper - at, count - i);
        decode_super_block(type, data.data() + b * bytes, values);
        std::copy_n(values + at, n, out + i);
        i += n;
      }
      return;
    }
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
        put_half(block, d);
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
        put_half(block, d);
        auto nibble = [&](uint64_t j) { return unsigned(std::min(15, int(x[j] * inv + 8.5f))); };
        for (uint64_t j = 0; j < 16; ++j) block[2 + j] = std::byte(uint8_t(nibble(j) | nibble(j + 16) << 4));
      }
      break;
    case ElementType::Q4_K:
    case ElementType::Q5_K:
      for (size_t b = 0; b < values.size() / kSuper; ++b)
        encode_q45_k(values.data() + b * kSuper, out.data() + b * t.block_bytes, type == ElementType::Q5_K);
      break;
    case ElementType::Q6_K:
      for (size_t b = 0; b < values.size() / kSuper; ++b) encode_q6_k(values.data() + b * kSuper, out.data() + b * t.block_bytes);
      break;
  }
  return out;
}

int64_t first_bad_scale(ElementType type, std::span<const std::byte> data) {
  const ElementTraits& t = element_traits(type);
  if (t.block_elements == 1) return -1;
  // Where each format keeps its f16 super-scales: Q8_0, Q4_0 and Q6_K one (d), Q4_K and Q5_K two
  // (d, dmin); the sub-block scales are integers.
  const uint64_t at = type == ElementType::Q6_K ? 208 : 0;
  const bool two = type == ElementType::Q4_K || type == ElementType::Q5_K;
  for (uint64_t b = 0; b < data.size() / t.block_bytes; ++b) {
    const std::byte* block = data.data() + b * t.block_bytes + at;
    if (!std::isfinite(half_at(block)) || (two && !std::isfinite(half_at(block + 2)))) return int64_t(b);
  }
  return -1;
}

}  // namespace infini
