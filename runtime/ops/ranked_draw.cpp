#include "ops/ranked_draw.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

// The project compiles with -ffp-contract=off (CMakeLists.txt): a fused multiply-add would round
// differently from pick_token.comp's separate (precise) operations.
namespace infini::ops {
namespace {

// The constants of pick_token.comp, bit for bit.
constexpr float bits(uint32_t word) { return std::bit_cast<float>(word); }
constexpr float kLog2e = bits(0x3fb8aa3bu);    // 1 / ln 2
constexpr float kLn2High = bits(0x3f318000u);  // ln 2 = high + low, high with few bits (n * high is exact)
constexpr float kLn2Low = bits(0xb95e8083u);
constexpr float kInvFactorial[8] = {bits(0x3f800000u), bits(0x3f800000u), bits(0x3f000000u), bits(0x3e2aaaabu),
                                    bits(0x3d2aaaabu), bits(0x3c088889u), bits(0x3ab60b61u), bits(0x39500d01u)};
constexpr float kSmallestNormal = 0x1.0p-126f;

// Subnormals become zero here, so a device that flushes them computes what the host does.
inline float flushed(float v) noexcept { return std::fabs(v) < kSmallestNormal ? 0.0f : v; }

// floor(y) for |y| < 2^31 (exact, as every floor is), without a libm call: loops over a row vectorise.
inline float floor_of(float y) noexcept {
  const float t = float(int32_t(y));
  return t > y ? t - 1.0f : t;
}

// portable_exp, written with selects rather than branches (the same operations on the same values).
inline float exp_of(float x) noexcept {
  float c = x >= -87.0f ? x : -87.0f;  // NaN too: its result is replaced below
  c = c > 88.0f ? 88.0f : c;
  // x = n ln 2 + r with |r| <= ln 2 / 2 (Cody and Waite), e^r by Taylor to r^7 (error < 1e-8).
  const float n = floor_of(c * kLog2e + 0.5f);
  const float r = (c - n * kLn2High) - n * kLn2Low;
  float p = kInvFactorial[7];
  for (int j = 6; j >= 0; --j) p = p * r + kInvFactorial[j];
  // n is in [-125, 127]: 2^n is a normal float, and so is the product.
  const float e = p * std::bit_cast<float>(uint32_t(int32_t(n) + 127) << 23);
  // exp(-87) is still a normal float: 0 below it (and for NaN).
  return x >= -87.0f ? (x > 88.0f ? std::numeric_limits<float>::infinity() : e) : 0.0f;
}

inline float weight_of(float logit, float best, float inv_temperature) noexcept {
  const float l = flushed(logit);
  const float e = exp_of(flushed(flushed(l - best) * inv_temperature));
  return l == best ? 1.0f : e;
}

}  // namespace

float draw_logit(float logit) noexcept { return flushed(logit); }

float draw_weight(float logit, float best, float inv_temperature) noexcept {
  return weight_of(logit, best, inv_temperature);
}

void draw_weights(std::span<const float> logits, float best, float inv_temperature, float* out) noexcept {
  for (size_t i = 0; i < logits.size(); ++i) out[i] = weight_of(logits[i], best, inv_temperature);
}

DrawSettings draw_settings(double temperature, double top_p) noexcept {
  // 1 / T kept finite and normal: a device need not preserve infinities and NaN, and 0 * inf or
  // -inf * 0 would make one.
  const float inv_t = float(std::clamp(1.0 / temperature, double(kSmallestNormal), double(std::numeric_limits<float>::max())));
  return {inv_t, std::clamp(float(top_p), kSmallestNormal, 1.0f)};
}

float portable_exp(float x) noexcept { return exp_of(x); }

size_t ranked_draw(std::span<const RankedLogit> ranked, const DrawSettings& s, float u) noexcept {
  const size_t k = ranked.size();
  const float best = flushed(ranked[0].logit);
  const auto w = [&](size_t i) { return weight_of(ranked[i].logit, best, s.inv_temperature); };
  float sum = 0;
  for (size_t i = 0; i < k; ++i) sum += w(i);
  // The nucleus: the shortest prefix holding top_p of the weight.
  const float limit = s.top_p * sum;
  size_t keep = k;
  float held = 0;
  for (size_t i = 0; i < k; ++i) {
    held += w(i);
    if (held >= limit) {
      keep = i + 1;
      break;
    }
  }
  float total = 0;
  for (size_t i = 0; i < keep; ++i) total += w(i);
  float x = u * total;
  for (size_t i = 0; i < keep; ++i) {
    const float wi = w(i);
    if (x < wi) return i;
    x = flushed(x - wi);
  }
  return keep - 1;  // rounding left x just past the end
}

size_t row_draw(std::span<const float> row, float inv_temperature, float u, std::vector<float>& scratch) {
  const size_t n = row.size();
  float best = -std::numeric_limits<float>::infinity();
  for (float v : row) best = std::max(best, flushed(v));  // the max of flushed values, as the device takes it
  scratch.resize(n);
  draw_weights(row, best, inv_temperature, scratch.data());
  const size_t chunks = (n + kRowDrawChunk - 1) / kRowDrawChunk;
  const auto chunk_end = [&](size_t c) { return std::min(n, c * kRowDrawChunk + kRowDrawChunk); };
  const auto chunk_sum = [&](size_t c) {
    float s = 0;
    for (size_t i = c * kRowDrawChunk; i < chunk_end(c); ++i) s += scratch[i];
    return s;
  };
  const auto last_weighted = [&](size_t c) {
    size_t last = c * kRowDrawChunk;
    for (size_t i = c * kRowDrawChunk; i < chunk_end(c); ++i)
      if (scratch[i] > 0) last = i;
    return last;
  };
  float total = 0;
  for (size_t c = 0; c < chunks; ++c) total += chunk_sum(c);
  float x = u * total;
  for (size_t c = 0; c < chunks; ++c) {
    const float s = chunk_sum(c);
    if (!(x < s)) {
      x = flushed(x - s);
      continue;
    }
    for (size_t i = c * kRowDrawChunk; i < chunk_end(c); ++i) {
      if (x < scratch[i]) return i;
      x = flushed(x - scratch[i]);
    }
    return last_weighted(c);
  }
  size_t c = chunks - 1;
  while (c > 0 && !(chunk_sum(c) > 0)) --c;
  return last_weighted(c);
}

}  // namespace infini::ops
