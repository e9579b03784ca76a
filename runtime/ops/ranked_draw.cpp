#include "ops/ranked_draw.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

// The project compiles with -ffp-contract=off (CMakeLists.txt): a fused multiply-add would round
// differently from pick_token.comp's separate (precise) operations.
namespace infini::ops {
namespace {

// The constants of pick_token.comp, bit for bit.
float bits(uint32_t word) { return std::bit_cast<float>(word); }
const float kLog2e = bits(0x3fb8aa3bu);         // 1 / ln 2
const float kLn2High = bits(0x3f318000u);       // ln 2 = high + low, high with few bits (n * high is exact)
const float kLn2Low = bits(0xb95e8083u);
const float kInvFactorial[8] = {bits(0x3f800000u), bits(0x3f800000u), bits(0x3f000000u), bits(0x3e2aaaabu),
                                bits(0x3d2aaaabu), bits(0x3c088889u), bits(0x3ab60b61u), bits(0x39500d01u)};
constexpr float kSmallestNormal = 0x1.0p-126f;

// Subnormals become zero here, so a device that flushes them computes what the host does.
float flushed(float v) noexcept { return std::fabs(v) < kSmallestNormal ? 0.0f : v; }

// exp((logit - best) / T): 1 for the best (and its ties, and when both are infinite).
float weight(float logit, float best, float inv_temperature) noexcept {
  const float l = flushed(logit);
  if (l == best) return 1.0f;
  const float d = flushed(l - best);
  return portable_exp(flushed(d * inv_temperature));
}

}  // namespace

DrawSettings draw_settings(double temperature, double top_p) noexcept {
  return {flushed(float(1.0 / temperature)), std::clamp(float(top_p), kSmallestNormal, 1.0f)};
}

float portable_exp(float x) noexcept {
  if (!(x >= -87.0f)) return 0.0f;  // exp(-87) is still a normal float; NaN ends here too
  if (x > 88.0f) return std::numeric_limits<float>::infinity();
  // x = n ln 2 + r with |r| <= ln 2 / 2 (Cody and Waite), e^r by Taylor to r^7 (error < 1e-8).
  const float n = std::floor(x * kLog2e + 0.5f);
  const float r = (x - n * kLn2High) - n * kLn2Low;
  float p = kInvFactorial[7];
  for (int j = 6; j >= 0; --j) p = p * r + kInvFactorial[j];
  // n is in [-125, 127]: 2^n is a normal float, and so is the product.
  return p * std::bit_cast<float>(uint32_t(int32_t(n) + 127) << 23);
}

size_t ranked_draw(std::span<const RankedLogit> ranked, const DrawSettings& s, float u) noexcept {
  const size_t k = ranked.size();
  const float best = flushed(ranked[0].logit);
  const auto w = [&](size_t i) { return weight(ranked[i].logit, best, s.inv_temperature); };
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

}  // namespace infini::ops
