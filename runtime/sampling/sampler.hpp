#pragma once
// Picks the next token from logits: greedy (temperature 0), or a draw from
// softmax(logits / temperature) restricted to the top_k most likely tokens and then to the
// smallest set whose probability reaches top_p. The random stream is our own (splitmix64) and the
// draw is ops::ranked_draw (f32, an exp of its own), so the same logits and seed give the same
// tokens on every platform and standard library, and on the device when it decodes sampled tokens ahead
// (pick_token.comp): device_draws() tells it the uniforms the next tokens use. With top-k off the
// draw is over the whole row (whole_row_draw: linear time where top-p is 1).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ops/pick_token.hpp"
#include "ops/ranked_draw.hpp"
#include "ops/top_k.hpp"

namespace infini::model {

struct SamplerOptions {
  double temperature = 0.8;  // 0: greedy
  int top_k = 40;            // 0: all tokens
  double top_p = 0.95;       // 1: no nucleus cut
  uint64_t seed = 0;
};

class Sampler {
 public:
  // Throws infini::Error on a negative temperature or top_k, or top_p outside (0, 1].
  explicit Sampler(const SamplerOptions& options);
  // Throws infini::Error when logits is empty or holds NaN.
  int32_t sample(std::span<const float> logits);
  // The same draw from the best logits only, ranked best first with ties to the lower id (as
  // ops::TopK ranks them): equal to sample() of the whole row when `ranked` holds at least
  // ranked_needed() of its best (not 0: with top-k off sample() draws over the whole row its own
  // way). Throws infini::Error when it is empty or holds NaN.
  int32_t sample_ranked(std::span<const ops::RankedLogit> ranked);
  // How many of the best logits a draw needs: 1 for greedy, top_k when it is at most
  // ops::TopK::kMaxK, 0 when it needs the whole row.
  uint32_t ranked_needed() const noexcept;
  // The token the device drew (ops::PickToken) with this sampler's settings and next uniform
  // (peek_uniforms): takes that draw, as sample_ranked would have. Throws infini::Error on a NaN
  // logit (which the device passes on) without taking it.
  int32_t take_drawn(const ops::RankedLogit& pick);
  // What ops::PickToken reads to draw the next `steps` tokens as this sampler would (at most
  // PickToken::kMaxSteps); nothing is taken.
  ops::PickToken::Draws device_draws(uint32_t steps) const;
  // Uniform in [0, 1) from the next 24 bits of the stream (exact in f32).
  float next_uniform();
  // Whether the draw is from the whole row with nothing ranked (top-k off, top-p 1, temperature
  // above 0): ops::row_draw, which a device draws ahead as ops::PickToken::record_row.
  bool draws_whole_row() const noexcept {
    return options_.temperature > 0 && options_.top_k == 0 && settings_.top_p >= 1.0f;
  }
  // What a chain's steps pick from on the device (LlamaRunner::forward_sampled's k): the best
  // ranked_needed() (greedy, top-k 1..64), 0 for whole rows (draws_whole_row()); none where the
  // draw cannot be made there (top-k off with top-p below 1, top-k above 64).
  std::optional<uint32_t> device_ranking() const noexcept {
    if (draws_whole_row()) return 0u;
    if (const uint32_t k = ranked_needed()) return k;
    return std::nullopt;
  }
  // Random numbers each token takes: 0 greedy, 1 otherwise.
  uint32_t draws_per_token() const noexcept { return options_.temperature == 0 ? 0 : 1; }
  // The uniforms of the next `count` draws, without taking them (skip() does).
  std::vector<float> peek_uniforms(uint32_t count) const;
  void skip(uint32_t draws) noexcept { state_ += uint64_t(draws) * kGolden; }
  const ops::DrawSettings& settings() const noexcept { return settings_; }

 private:
  static constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
  SamplerOptions options_;
  ops::DrawSettings settings_;
  uint64_t state_;
  std::vector<int32_t> order_;         // scratch, kept to avoid reallocating per token
  std::vector<ops::RankedLogit> top_;  // likewise
  std::vector<float> weights_;         // likewise
};

}  // namespace infini::model
