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

uint32_t Sampler::ranked_needed() const noexcept {
  if (options_.temperature == 0) return 1;
  if (options_.top_k > 0 && uint32_t(options_.top_k) <= ops::TopK::kMaxK) return uint32_t(options_.top_k);
  return 0;
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
  top_.resize(k);
  for (size_t i = 0; i < k; ++i) top_[i] = {logits[size_t(order_[i])], order_[i]};
  return sample_ranked(top_);
}

int32_t Sampler::sample_ranked(std::span<const ops::RankedLogit> ranked) {
  if (ranked.empty()) throw Error("sampler: no logits");
  for (const ops::RankedLogit& r : ranked)
    if (std::isnan(r.logit)) throw Error("sampler: the logits contain NaN");
  if (options_.temperature == 0) return ranked[0].id;
  const size_t k = options_.top_k > 0 ? std::min(ranked.size(), size_t(options_.top_k)) : ranked.size();

  // Softmax over the top k in double, then the nucleus: the shortest prefix reaching top_p.
  std::vector<double> p(k);
  const double top = ranked[0].logit;
  double sum = 0;
  for (size_t i = 0; i < k; ++i) sum += p[i] = std::exp((double(ranked[i].logit) - top) / options_.temperature);
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
    if (u < p[i]) return ranked[i].id;
    u -= p[i];
  }
  return ranked[keep - 1].id;  // rounding left u just past the end
}

}  // namespace infini::model
