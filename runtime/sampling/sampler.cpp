#include "sampling/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "infini/error.hpp"
#include "sampling/whole_row_draw.hpp"

namespace infini::model {

Sampler::Sampler(const SamplerOptions& options) : options_(options), state_(options.seed) {
  if (!(options.temperature >= 0) || !std::isfinite(options.temperature))
    throw Error("sampler: temperature must be >= 0, got " + std::to_string(options.temperature));
  if (options.top_k < 0) throw Error("sampler: top-k must be >= 0, got " + std::to_string(options.top_k));
  if (!(options.top_p > 0 && options.top_p <= 1))
    throw Error("sampler: top-p must be in (0, 1], got " + std::to_string(options.top_p));
  if (options.temperature > 0) settings_ = ops::draw_settings(options.temperature, options.top_p);
}

namespace {
// splitmix64's output for the state after an advance.
uint64_t mixed(uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
float uniform_of(uint64_t z) noexcept { return float(mixed(z) >> 40) * 0x1.0p-24f; }
}  // namespace

float Sampler::next_uniform() { return uniform_of(state_ += kGolden); }

std::vector<float> Sampler::peek_uniforms(uint32_t count) const {
  std::vector<float> out(count);
  uint64_t state = state_;
  for (float& u : out) u = uniform_of(state += kGolden);
  return out;
}

uint32_t Sampler::ranked_needed() const noexcept {
  if (options_.temperature == 0) return 1;
  if (options_.top_k > 0 && uint32_t(options_.top_k) <= ops::TopK::kMaxK) return uint32_t(options_.top_k);
  return 0;
}

int32_t Sampler::take_drawn(const ops::RankedLogit& pick) {
  if (std::isnan(pick.logit)) throw Error("sampler: the logits contain NaN");
  skip(draws_per_token());
  return pick.id;
}

ops::PickToken::Draws Sampler::device_draws(uint32_t steps) const {
  if (steps > ops::PickToken::kMaxSteps)
    throw Error("sampler: " + std::to_string(steps) + " draws ahead; the device takes at most " +
                std::to_string(ops::PickToken::kMaxSteps));
  ops::PickToken::Draws d;
  d.greedy = options_.temperature == 0 ? 1 : 0;
  d.inv_temperature = settings_.inv_temperature;
  d.top_p = settings_.top_p;
  if (!d.greedy) {
    const std::vector<float> u = peek_uniforms(steps);
    std::copy(u.begin(), u.end(), d.uniforms.begin());
  }
  return d;
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (logits.empty()) throw Error("sampler: no logits");
  for (float v : logits)
    if (std::isnan(v)) throw Error("sampler: the logits contain NaN");
  // Greedy: the first maximum, so ties resolve the same way everywhere.
  if (options_.temperature == 0) return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());

  // Top-k off: every token is a candidate, drawn without ranking the row (top-p 1: as a device
  // draws it ahead, ops::row_draw) or ranking only the nucleus.
  if (options_.top_k == 0 && settings_.top_p >= 1.0f)
    return int32_t(ops::row_draw(logits, settings_.inv_temperature, next_uniform(), weights_));
  if (options_.top_k == 0) return whole_row_draw(logits, settings_, next_uniform(), weights_, order_);
  // Else the k best, ranked as ops::TopK ranks them, so that the draw is sample_ranked's.
  const size_t n = logits.size();
  const size_t k = std::min(n, size_t(options_.top_k));
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
  return ranked[ops::ranked_draw(ranked.first(k), settings_, next_uniform())].id;
}

}  // namespace infini::model
