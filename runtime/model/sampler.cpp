#include "model/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "infini/error.hpp"

namespace infini::model {

Sampler::Sampler(const SamplerOptions& options) : options_(options), state_(options.seed) {
  if (!(options.temperature >= 0) || !std::isfinite(options.temperature))
    throw Error("sampler: temperature must be >= 0, got " + std::to_string(options.temperature));
  if (options.top_k < 0) throw Error("sampler: top-k must be >= 0, got " + std::to_string(options.top_k));
  if (!(options.top_p > 0 && options.top_p <= 1))
    throw Error("sampler: top-p must be in (0, 1], got " + std::to_string(options.top_p));
}

double Sampler::next_uniform() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53;
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (logits.empty()) throw Error("sampler: no logits");
  for (float v : logits)
    if (std::isnan(v)) throw Error("sampler: the logits contain NaN");
  // Greedy: the first maximum, so ties resolve the same way everywhere.
  if (options_.temperature == 0) return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());

  const size_t n = logits.size();
  const size_t k = options_.top_k > 0 ? std::min(n, size_t(options_.top_k)) : n;
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0);
  auto more_likely = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  std::partial_sort(order_.begin(), order_.begin() + std::ptrdiff_t(k), order_.end(), more_likely);

  // Softmax over the top k in double, then the nucleus: the shortest prefix reaching top_p.
  std::vector<double> p(k);
  const double top = logits[order_[0]];
  double sum = 0;
  for (size_t i = 0; i < k; ++i) sum += p[i] = std::exp((double(logits[order_[i]]) - top) / options_.temperature);
  size_t keep = k;
  double kept = 0;
  for (size_t i = 0; i < k; ++i) {
    kept += p[i] / sum;
    if (kept >= options_.top_p) {
      keep = i + 1;
      break;
    }
  }
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += p[i];
  double u = next_uniform() * total;
  for (size_t i = 0; i < keep; ++i) {
    if (u < p[i]) return order_[i];
    u -= p[i];
  }
  return order_[keep - 1];  // rounding left u just past the end
}

}  // namespace infini::model
