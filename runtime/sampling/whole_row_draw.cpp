#include "sampling/whole_row_draw.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

namespace infini::model {
namespace {

// A weight's histogram bin: its top 12 bits (sign, exponent, 3 bits of mantissa), which order
// non-negative floats as their values do. Weights are at most 1 (bin 1016).
constexpr size_t kBins = 1024;
size_t bin_of(float w) noexcept { return size_t(std::bit_cast<uint32_t>(w) >> 20); }

// Ranks `order` (token ids) best first as far as the nucleus reaches: rounds of the best m of the
// rest (64, then 8 times more), so that the ranks, the sums in rank order and so the draw are
// the same on every standard library. Returns the nucleus's size, or 0 when all of `order` holds
// less than `limit`.
size_t rank_nucleus(std::vector<int32_t>& order, std::span<const float> logits, const std::vector<float>& weights,
                    double limit) {
  // By logit, ties to the lower id: as ops::TopK and the top-k path rank (weights can tie where logits do not).
  const auto more_likely = [&](int32_t a, int32_t b) {
    return logits[size_t(a)] > logits[size_t(b)] || (logits[size_t(a)] == logits[size_t(b)] && a < b);
  };
  const size_t n = order.size();
  size_t ranked = 0;
  double held = 0;
  for (size_t m = std::min<size_t>(64, n);; m = std::min(n, m * 8)) {
    std::partial_sort(order.begin() + std::ptrdiff_t(ranked), order.begin() + std::ptrdiff_t(m), order.end(),
                      more_likely);
    for (; ranked < m; ++ranked)
      if ((held += weights[size_t(order[ranked])]) >= limit) return ranked + 1;
    if (m == n) return 0;
  }
}

}  // namespace

int32_t whole_row_draw(std::span<const float> logits, const ops::DrawSettings& s, float u, std::vector<float>& weights,
                       std::vector<int32_t>& order) {
  const size_t n = logits.size();
  const float best = ops::draw_logit(*std::max_element(logits.begin(), logits.end()));
  weights.resize(n);
  ops::draw_weights(logits, best, s.inv_temperature, weights.data());
  double sum = 0;
  for (float w : weights) sum += w;

  // The nucleus is a prefix of the tokens ranked best first. Only those at least as heavy as the
  // lightest bin it can reach need ranking: the bins above it hold top_p of the weight (one bin
  // lower for rounding), found from a histogram. The nucleus itself comes from ranking those
  // candidates, the same tokens as ranking the whole row; when rounding leaves them short of the
  // limit, the whole row is ranked.
  const double limit = double(s.top_p) * sum;
  std::vector<double> mass(kBins, 0.0);
  for (float w : weights) mass[bin_of(w)] += w;
  size_t bound = 0;
  double above = 0;
  for (size_t b = kBins; b-- > 0;)
    if ((above += mass[b]) >= limit) {
      bound = b > 0 ? b - 1 : 0;
      break;
    }
  order.clear();
  for (size_t i = 0; i < n; ++i)
    if (bin_of(weights[i]) >= bound) order.push_back(int32_t(i));
  size_t keep = rank_nucleus(order, logits, weights, limit);
  if (keep == 0) {
    order.resize(n);
    std::iota(order.begin(), order.end(), 0);
    keep = rank_nucleus(order, logits, weights, limit);
    if (keep == 0) keep = n;  // rounding: the whole row
  }
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += weights[size_t(order[i])];
  double x = double(u) * total;
  for (size_t i = 0; i < keep; ++i) {
    const float w = weights[size_t(order[i])];
    if (x < w) return order[i];
    x -= w;
  }
  return order[keep - 1];
}

}  // namespace infini::model
