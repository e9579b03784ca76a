#include "util/block_codec.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "infini/error.hpp"
#include "util/bfloat16.hpp"
#include "util/half.hpp"
#include "util/iq4_blocks.hpp"
#include "util/k_scale_fit.hpp"
#include "util/legacy_blocks.hpp"
#include "util/low_bit_k_blocks.hpp"

namespace infini {
namespace {

constexpr uint64_t kSuper = 256;  // values per K-format super-block

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

void encode_q45_k(const float* x, std::byte* block, bool five) {
  const int top = five ? 31 : 15;
  float scale[8], min[8], max_scale = 0, max_min = 0;
  int levels[256];
  for (unsigned s = 0; s < 8; ++s) {
    float sum_x2 = 0, w[32];
    for (unsigned l = 0; l < 32; ++l) sum_x2 += x[32 * s + l] * x[32 * s + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (unsigned l = 0; l < 32; ++l) w[l] = av_x + std::fabs(x[32 * s + l]);
    scale[s] = five ? fit_scale_min(x + 32 * s, w, 32, top, -0.5f, 0.1f, 15, false, min[s], levels + 32 * s)
                    : fit_scale_min(x + 32 * s, w, 32, top, -1.0f, 0.1f, 20, false, min[s], levels + 32 * s);
    max_scale = std::max(max_scale, scale[s]);
    max_min = std::max(max_min, min[s]);
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f, inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  std::memset(block, 0, five ? 176 : 144);
  for (unsigned s = 0; s < 8; ++s)
    pack_scale_min(block + 4, s, unsigned(std::min(63, nearest_int(inv_scale * scale[s]))),
                   unsigned(std::min(63, nearest_int(inv_min * min[s]))));
  put_half(block, max_scale / 63.0f);
  put_half(block + 2, max_min / 63.0f);
  const float d = half_at(block), dmin = half_at(block + 2);
  std::byte* qs = block + (five ? 48 : 16);
  for (unsigned s = 0; s < 8; ++s) {
    unsigned ls, lm;
    unpack_scale_min(block + 4, s, ls, lm);
    const float step = d * float(ls), offset = dmin * float(lm);
    for (unsigned l = 0; l < 32; ++l) {
      // A scale quantized to 0 keeps the fit's levels (they decode to -offset all the same).
      const int n = step != 0 ? std::clamp(nearest_int((x[32 * s + l] + offset) / step), 0, top) : levels[32 * s + l];
      const unsigned at = 32 * (s / 2) + l;
      qs[at] = std::byte(uint8_t(byte_at(qs, at) | unsigned(n & 15) << (4 * (s % 2))));
      if (five) block[16 + l] = std::byte(uint8_t(byte_at(block, 16 + l) | unsigned(n >> 4) << s));
    }
  }
}

// Q6_K: a sub-block of 16 on levels -32..31; the scale maps the value of largest magnitude to -32,
// then the best of nearby scales by least squares weighted by x^2.
float fit_symmetric_scale(const float* x, int n, int* levels_out) {
  constexpr int top = 32;
  float extreme = 0, amax = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), extreme = x[i];
  std::fill_n(levels_out, n, -top);  // stored as 0, as ggml leaves a sub-block of zeros
  if (amax < 1e-15f) return 0;
  const auto level = [&](float iscale, int i) { return float(std::clamp(nearest_int(iscale * x[i]), -top, top - 1)); };
  const auto sums = [&](float iscale, float& sum_xl, float& sum_l2) {
    sum_xl = sum_l2 = 0;
    for (int i = 0; i < n; ++i) {
      const float l = level(iscale, i), w = x[i] * x[i];
      sum_xl += w * x[i] * l;
      sum_l2 += w * l * l;
    }
  };
  const auto keep = [&](float iscale) {
    for (int i = 0; i < n; ++i) levels_out[i] = int(level(iscale, i));
  };
  float sum_xl, sum_l2;
  sums(-float(top) / extreme, sum_xl, sum_l2);
  keep(-float(top) / extreme);
  float scale = sum_l2 != 0 ? sum_xl / sum_l2 : 0.0f, best = scale * sum_xl;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    const float iscale = -(float(top) + 0.1f * float(step)) / extreme;
    sums(iscale, sum_xl, sum_l2);
    if (sum_l2 > 0 && sum_xl * sum_xl > best * sum_l2) {
      keep(iscale);
      scale = sum_xl / sum_l2;
      best = scale * sum_xl;
    }
  }
  return scale;
}

void encode_q6_k(const float* x, std::byte* block) {
  float scale[16], max_scale = 0, max_abs = 0;
  int levels[256];
  for (unsigned s = 0; s < 16; ++s) {
    scale[s] = fit_symmetric_scale(x + 16 * s, 16, levels + 16 * s);
    if (std::fabs(scale[s]) > max_abs) max_abs = std::fabs(scale[s]), max_scale = scale[s];
  }
  std::memset(block, 0, 210);
  if (max_abs < 1e-15f) return;  // all zero: d = 0
  const float inv = -128.0f / max_scale;
  put_half(block + 208, 1.0f / inv);
  for (unsigned s = 0; s < 16; ++s) block[192 + s] = std::byte(uint8_t(int8_t(std::min(127, nearest_int(inv * scale[s])))));
  const float d = half_at(block + 208);
  for (unsigned s = 0; s < 16; ++s) {
    const float step = d * float(static_cast<int8_t>(block[192 + s]));
    for (unsigned l = 0; l < 16; ++l) {
      const unsigned i = 16 * s + l, half = i / 128, q = i % 128 / 32, r = i % 32;
      // A scale quantized to 0 keeps the fit's levels (they decode to 0 all the same).
      const unsigned n = unsigned((step != 0 ? std::clamp(nearest_int(x[i] / step), -32, 31) : levels[i]) + 32);
      const unsigned lo_at = 64 * half + 32 * (q % 2) + r, hi_at = 128 + 32 * half + r;
      block[lo_at] = std::byte(uint8_t(byte_at(block, lo_at) | (n & 15) << (4 * (q / 2))));
      block[hi_at] = std::byte(uint8_t(byte_at(block, hi_at) | (n >> 4) << (2 * q)));
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
    case ElementType::BF16:
      for (uint64_t i = 0; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, data.data() + (first + i) * 2, 2);
        out[i] = double(bf16_to_float(h));
      }
      return;
    case ElementType::Q8_0:
    case ElementType::Q4_0:
    case ElementType::Q4_1:
    case ElementType::Q5_0:
    case ElementType::Q5_1:
    case ElementType::IQ4_NL:
    case ElementType::IQ4_XS:
    case ElementType::Q2_K:
    case ElementType::Q3_K:
    case ElementType::Q4_K:
    case ElementType::Q5_K:
    case ElementType::Q6_K: {
      const uint64_t bytes = element_traits(type).block_bytes, size = element_traits(type).block_elements;
      double values[kSuper];
      for (uint64_t i = 0; i < count;) {
        const uint64_t e = first + i, b = e / size, at = e % size, n = std::min(size - at, count - i);
        if (is_legacy_block(type))
          decode_legacy_block(type, data.data() + b * bytes, values);
        else if (is_iq4_block(type))
          decode_iq4_block(type, data.data() + b * bytes, values);
        else if (is_low_bit_k_block(type))
          decode_low_bit_k_block(type, data.data() + b * bytes, values);
        else
          decode_super_block(type, data.data() + b * bytes, values);
        std::copy_n(values + at, n, out + i);
        i += n;
      }
      return;
    }
  }
}

namespace {

// Blocks [first, last) of a block format: each block is encoded from its own values alone.
void encode_block_range(ElementType type, const float* values, std::byte* out, size_t first, size_t last) {
  const ElementTraits& t = element_traits(type);
  switch (type) {
    case ElementType::F32:
    case ElementType::F16:
    case ElementType::BF16:
      break;  // not block formats
    case ElementType::Q8_0:
    case ElementType::Q4_0:
    case ElementType::Q4_1:
    case ElementType::Q5_0:
    case ElementType::Q5_1:
      for (size_t b = first; b < last; ++b)
        encode_legacy_block(type, values + b * kLegacyBlock, out + b * t.block_bytes);
      break;
    case ElementType::IQ4_NL:
    case ElementType::IQ4_XS:
      for (size_t b = first; b < last; ++b)
        encode_iq4_block(type, values + b * t.block_elements, out + b * t.block_bytes);
      break;
    case ElementType::Q2_K:
    case ElementType::Q3_K:
      for (size_t b = first; b < last; ++b) encode_low_bit_k_block(type, values + b * kSuper, out + b * t.block_bytes);
      break;
    case ElementType::Q4_K:
    case ElementType::Q5_K:
      for (size_t b = first; b < last; ++b)
        encode_q45_k(values + b * kSuper, out + b * t.block_bytes, type == ElementType::Q5_K);
      break;
    case ElementType::Q6_K:
      for (size_t b = first; b < last; ++b) encode_q6_k(values + b * kSuper, out + b * t.block_bytes);
      break;
  }
}

// Smaller tensors are encoded on the calling thread: starting threads would cost more.
constexpr size_t kParallelBlocks = 4096;

}  // namespace

std::vector<std::byte> encode_blocks(ElementType type, std::span<const float> values, unsigned threads) {
  const ElementTraits& t = element_traits(type);
  if (values.size() % t.block_elements != 0)
    throw Error(std::to_string(values.size()) + " values are not whole " + std::string(t.name) + " blocks of " +
                std::to_string(t.block_elements));
  if (t.block_elements > 1)  // f32 and f16 carry NaN and Inf as they are (tests write them on purpose)
    for (float v : values)
      if (!std::isfinite(v)) throw Error("cannot encode a value that is not finite as " + std::string(t.name));
  std::vector<std::byte> out(values.size() / t.block_elements * t.block_bytes);
  if (type == ElementType::F32) {
    if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  if (type == ElementType::F16 || type == ElementType::BF16) {
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t h = type == ElementType::F16 ? float_to_half(values[i]) : float_to_bf16(values[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
    return out;
  }
  const size_t blocks = values.size() / t.block_elements;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const size_t workers = blocks < kParallelBlocks ? 1 : threads;
  if (workers == 1) {
    encode_block_range(type, values.data(), out.data(), 0, blocks);
    return out;
  }
  // Whole blocks per worker, so the bytes are the same whatever the number of threads. A share
  // whose thread cannot be started is encoded here instead.
  std::vector<std::thread> started;
  const size_t per = (blocks + workers - 1) / workers;
  for (size_t first = 0; first < blocks; first += per) {
    const size_t last = std::min(blocks, first + per);
    try {
      started.emplace_back(encode_block_range, type, values.data(), out.data(), first, last);
    } catch (const std::system_error&) {
      encode_block_range(type, values.data(), out.data(), first, last);
    }
  }
  for (std::thread& th : started) th.join();
  return out;
}

int64_t first_bad_scale(ElementType type, std::span<const std::byte> data) {
  const ElementTraits& t = element_traits(type);
  if (t.block_elements == 1) return -1;
  // Each format's f16 scale d (scale_offset) and, with a min, that in the next two bytes; the
  // sub-block scales are integers.
  const uint64_t at = scale_offset(type);
  const bool two = has_min_scale(type);
  for (uint64_t b = 0; b < data.size() / t.block_bytes; ++b) {
    const std::byte* block = data.data() + b * t.block_bytes + at;
    if (!std::isfinite(half_at(block)) || (two && !std::isfinite(half_at(block + 2)))) return int64_t(b);
  }
  return -1;
}

}  // namespace infini
