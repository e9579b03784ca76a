#pragma once
// Picks the next token from logits: greedy (temperature 0), or a draw from
// softmax(logits / temperature) restricted to the top_k most likely tokens and then to the
// smallest set whose probability reaches top_p. The random stream is our own (splitmix64), so a
// seed gives the same tokens on every platform and standard library.
#include <cstdint>
#include <span>
#include <vector>

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
  // ranked_needed() of its best. Throws infini::Error when it is empty or holds NaN.
  int32_t sample_ranked(std::span<const ops::RankedLogit> ranked);
  // How many of the best logits a draw needs: 1 for greedy, top_k when it is at most
  // ops::TopK::kMaxK, 0 when it needs the whole row.
  uint32_t ranked_needed() const noexcept;
  // Uniform in [0, 1) from the next 53 bits of the stream.
  double next_uniform();

 private:
  SamplerOptions options_;
  uint64_t state_;
  std::vector<int32_t> order_;         // scratch, kept to avoid reallocating per token
  std::vector<ops::RankedLogit> top_;  // likewise
};

}  // namespace infini::model
