#include "util/iq4_blocks.hpp"

#include <cmath>
#include <cstring>

#include "util/half.hpp"

namespace infini {
namespace {

constexpr int kSub = 32;  // values per IQ4_NL block and per IQ4_XS sub-block

// The level nearest x (ties to the upper one), as ggml's best_index_int8.
int nearest_level(float x) {
  if (x <= kIq4Levels[0]) return 0;
  if (x >= kIq4Levels[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (x < kIq4Levels[mid] ? hi : lo) = mid;
  }
  return x - kIq4Levels[hi - 1] < kIq4Levels[hi] - x ? hi - 1 : hi;
}

// 32 values' indices under inverse scale `inv`, and the weighted sums that fit a scale to them.
void fit(const float* x, const float* w, float inv, int* levels, float& sum_qx, float& sum_q2) {
  sum_qx = sum_q2 = 0;
  for (int j = 0; j < kSub; ++j) {
    const int l = nearest_level(inv * x[j]);
    if (levels) levels[j] = l;
    const float q = kIq4Levels[l];
    sum_qx += w[j] * q * x[j];
    sum_q2 += w[j] * q * q;
  }
}

// The scale of 32 values: the best of 15 candidate scales around the one that maps the value of
// largest magnitude to the lowest level, each refitted by weighted least squares (weights x^2).
float sub_block_scale(const float* x, int* levels) {
  float w[kSub], amax = 0, max = 0;
  for (int j = 0; j < kSub; ++j) {
    w[j] = x[j] * x[j];
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  if (amax < 1e-15f) {
    for (int j = 0; j < kSub; ++j) levels[j] = 0;
    return 0;
  }
  constexpr int kTries = 7;
  float sum_qx, sum_q2;
  fit(x, w, 1 / (-max / kIq4Levels[0]), levels, sum_qx, sum_q2);
  float d = sum_qx / sum_q2, best = d * sum_qx;
  for (int t = -kTries; t <= kTries; ++t) {
    fit(x, w, (float(t) + kIq4Levels[0]) / max, nullptr, sum_qx, sum_q2);
    if (sum_q2 > 0 && sum_qx * sum_qx > best * sum_q2) {
      d = sum_qx / sum_q2;
      best = d * sum_qx;
    }
  }
  return d;
}

// 32 indices into 16 bytes, as Q4_0 packs its nibbles.
void put_indices(const int* l, std::byte* q) {
  for (int j = 0; j < 16; ++j) q[j] = std::byte(uint8_t(l[j] | l[j + 16] << 4));
}

void decode_indices(const std::byte* q, double scale, double* out) {
  for (int j = 0; j < 16; ++j) {
    out[j] = scale * kIq4Levels[unsigned(q[j]) & 15];
    out[j + 16] = scale * kIq4Levels[unsigned(q[j]) >> 4];
  }
}

}  // namespace

void decode_iq4_block(ElementType type, const std::byte* block, double* out) {
  const double d = half_at(block);
  if (type == ElementType::IQ4_NL) return decode_indices(block + 2, d, out);
  uint16_t high;
  std::memcpy(&high, block + 2, 2);
  for (int s = 0; s < 8; ++s) {
    const unsigned low = (unsigned(block[4 + s / 2]) >> (4 * (s % 2))) & 15;
    const int scale = int(low | ((high >> (2 * s)) & 3u) << 4) - 32;
    decode_indices(block + 8 + 16 * s, double(float(d * scale)), out + kSub * s);
  }
}

void encode_iq4_block(ElementType type, const float* x, std::byte* block) {
  int levels[256];
  if (type == ElementType::IQ4_NL) {
    const float d = sub_block_scale(x, levels);
    put_half(block, d);
    // The indices again under the scale found (ggml's last pass for a lone block).
    const float inv = d != 0.0f ? 1 / d : 0.0f;
    for (int j = 0; j < kSub; ++j) levels[j] = nearest_level(inv * x[j]);
    put_indices(levels, block + 2);
    return;
  }
  // IQ4_XS: each sub-block's scale, then d = -(the scale of largest magnitude) / 32 and every
  // sub-block's scale rounded to a 6-bit multiple of d, its indices refitted under it.
  float scales[8], max_scale = 0, amax_scale = 0;
  for (int s = 0; s < 8; ++s) {
    scales[s] = sub_block_scale(x + kSub * s, levels + kSub * s);
    if (std::fabs(scales[s]) > amax_scale) {
      amax_scale = std::fabs(scales[s]);
      max_scale = scales[s];
    }
  }
  const float d = -max_scale / 32;
  put_half(block, d);
  const float inv = d != 0.0f ? 1 / d : 0.0f;
  uint16_t high = 0;
  std::memset(block + 4, 0, 4);
  for (int s = 0; s < 8; ++s) {
    const int l = std::max(-32, std::min(31, int(std::lrintf(inv * scales[s]))));
    const float dl = d * float(l), inv_dl = dl != 0.0f ? 1 / dl : 0.0f;
    for (int j = 0; j < kSub; ++j) levels[kSub * s + j] = nearest_level(inv_dl * x[kSub * s + j]);
    const unsigned u = unsigned(l + 32);
    block[4 + s / 2] |= std::byte(uint8_t((u & 15) << (4 * (s % 2))));
    high |= uint16_t((u >> 4) << (2 * s));
    put_indices(levels + kSub * s, block + 8 + 16 * s);
  }
  std::memcpy(block + 2, &high, 2);
}

}  // namespace infini
