#include "util/low_bit_k_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "util/half.hpp"
#include "util/k_scale_fit.hpp"

namespace infini {
namespace {

constexpr unsigned kSuper = 256, kSub = 16;

unsigned byte_at(const std::byte* p, unsigned i) { return unsigned(p[i]); }
void or_byte(std::byte* p, unsigned i, unsigned v) { p[i] = std::byte(uint8_t(byte_at(p, i) | v)); }

// Where value v keeps its two low bits: byte (v / 128) * 32 + v % 32 of qs, at bit 2 ((v / 32) % 4).
unsigned low_byte(unsigned v) { return v / 128 * 32 + v % 32; }
unsigned low_shift(unsigned v) { return 2 * (v / 32 % 4); }

// Q3_K's sixteen 6-bit scales (stored + 32) in 12 bytes.
unsigned q3_scale(const std::byte* scales, unsigned s) {
  const unsigned low = s < 8 ? byte_at(scales, s) & 15 : byte_at(scales, s - 8) >> 4;
  return low | (byte_at(scales, 8 + s % 4) >> (2 * (s / 4)) & 3) << 4;
}

// Q3_K: a sub-block of n values on levels -top..top-1 by least squares weighted by x^2, refined
// level by level while that lowers the error (ggml's make_q3_quants); levels stored + top.
float fit_q3_scale(const float* x, int n, int top, int* levels) {
  float extreme = 0, amax = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), extreme = x[i];
  if (amax < 1e-15f) {
    std::fill_n(levels, n, 0);  // stored as they are, as ggml leaves a sub-block of zeros
    return 0;
  }
  const float iscale = -float(top) / extreme;
  float sum_lx = 0, sum_l2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale * x[i]), -top, top - 1);
    levels[i] = l;
    const float w = x[i] * x[i];
    sum_lx += w * x[i] * float(l);
    sum_l2 += w * float(l) * float(l);
  }
  for (int round = 0; round < 5; ++round) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sum_lx - w * x[i] * float(levels[i]);
      if (slx <= 0) continue;
      float sl2 = sum_l2 - w * float(levels[i]) * float(levels[i]);
      const int l = std::clamp(nearest_int(x[i] * sl2 / slx), -top, top - 1);
      if (l == levels[i]) continue;
      slx += w * x[i] * float(l);
      sl2 += w * float(l) * float(l);
      if (sl2 > 0 && slx * slx * sum_l2 > sum_lx * sum_lx * sl2) {
        levels[i] = l;
        sum_lx = slx;
        sum_l2 = sl2;
        ++changed;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; ++i) levels[i] += top;
  return sum_lx / sum_l2;
}

void pack_low_bits(const int* levels, std::byte* qs) {
  for (unsigned v = 0; v < kSuper; ++v) or_byte(qs, low_byte(v), unsigned(levels[v] & 3) << low_shift(v));
}

void encode_q2_k(const float* x, std::byte* block) {
  float scale[16], min[16], max_scale = 0, max_min = 0;
  int levels[kSuper];
  for (unsigned s = 0; s < 16; ++s) {
    float w[kSub];
    for (unsigned l = 0; l < kSub; ++l) w[l] = std::fabs(x[kSub * s + l]);
    scale[s] = fit_scale_min(x + kSub * s, w, int(kSub), 3, -0.5f, 0.1f, 15, true, min[s], levels + kSub * s);
    max_scale = std::max(max_scale, scale[s]);
    max_min = std::max(max_min, min[s]);
  }
  std::memset(block, 0, 84);
  if (max_scale > 0) {
    const float inv = 15.0f / max_scale;
    for (unsigned s = 0; s < 16; ++s) block[s] = std::byte(uint8_t(nearest_int(inv * scale[s])));
    put_half(block + 80, max_scale / 15.0f);
  }
  if (max_min > 0) {
    const float inv = 15.0f / max_min;
    for (unsigned s = 0; s < 16; ++s) or_byte(block, s, unsigned(nearest_int(inv * min[s])) << 4);
    put_half(block + 82, max_min / 15.0f);
  }
  const float d = half_at(block + 80), dmin = half_at(block + 82);
  for (unsigned s = 0; s < 16; ++s) {
    const float step = d * float(byte_at(block, s) & 15);
    if (step == 0) continue;  // the fit's levels stay (they decode to -offset all the same)
    const float offset = dmin * float(byte_at(block, s) >> 4);
    for (unsigned l = 0; l < kSub; ++l)
      levels[kSub * s + l] = std::clamp(nearest_int((x[kSub * s + l] + offset) / step), 0, 3);
  }
  pack_low_bits(levels, block + 16);
}

void encode_q3_k(const float* x, std::byte* block) {
  float scale[16], max_scale = 0, amax = 0;
  int levels[kSuper];
  for (unsigned s = 0; s < 16; ++s) {
    scale[s] = fit_q3_scale(x + kSub * s, int(kSub), 4, levels + kSub * s);
    if (std::fabs(scale[s]) > amax) amax = std::fabs(scale[s]), max_scale = scale[s];
  }
  std::memset(block, 0, 110);
  std::byte* scales = block + 96;
  if (max_scale != 0) {
    const float inv = -32.0f / max_scale;
    for (unsigned s = 0; s < 16; ++s) {
      const unsigned l = unsigned(std::clamp(nearest_int(inv * scale[s]), -32, 31) + 32);
      if (s < 8) or_byte(scales, s, l & 15);
      else or_byte(scales, s - 8, (l & 15) << 4);
      or_byte(scales, 8 + s % 4, (l >> 4) << (2 * (s / 4)));
    }
    put_half(block + 108, 1.0f / inv);
  }
  const float d = half_at(block + 108);
  for (unsigned s = 0; s < 16; ++s) {
    const float step = d * float(int(q3_scale(scales, s)) - 32);
    if (step == 0) continue;
    for (unsigned l = 0; l < kSub; ++l)
      levels[kSub * s + l] = std::clamp(nearest_int(x[kSub * s + l] / step), -4, 3) + 4;
  }
  for (unsigned v = 0; v < kSuper; ++v)
    if (levels[v] > 3) {
      or_byte(block, v % 32, 1u << (v / 32));
      levels[v] -= 4;
    }
  pack_low_bits(levels, block + 32);
}

}  // namespace

void decode_low_bit_k_block(ElementType type, const std::byte* block, double* out) {
  if (type == ElementType::Q2_K) {
    const double d = half_at(block + 80), dmin = half_at(block + 82);
    for (unsigned v = 0; v < kSuper; ++v) {
      const unsigned sc = byte_at(block, v / kSub), q = byte_at(block + 16, low_byte(v)) >> low_shift(v) & 3;
      out[v] = d * double(sc & 15) * double(q) - dmin * double(sc >> 4);
    }
    return;
  }
  const double d = half_at(block + 108);
  for (unsigned v = 0; v < kSuper; ++v) {
    const int low = int(byte_at(block + 32, low_byte(v)) >> low_shift(v) & 3);
    const bool high = (byte_at(block, v % 32) >> (v / 32) & 1) != 0;
    out[v] = d * double(int(q3_scale(block + 96, v / kSub)) - 32) * double(low - (high ? 0 : 4));
  }
}

void encode_low_bit_k_block(ElementType type, const float* x, std::byte* block) {
  if (type == ElementType::Q2_K) encode_q2_k(x, block);
  else encode_q3_k(x, block);
}

}  // namespace infini
