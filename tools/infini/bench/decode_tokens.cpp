#include "decode_tokens.hpp"

#include <span>

namespace infini::cli {

int32_t decode_tokens(model::LlamaRunner& runner, int32_t next, int64_t tokens, const model::SamplerOptions& sampling) {
  model::Sampler sampler(sampling);
  // Top-k 1..64 ranked on the device, else whole rows (as Session::generate).
  const uint32_t k = sampler.device_ranking().value_or(0);
  for (int64_t i = 0; i < tokens;) {
    const uint32_t steps = runner.chain_steps(tokens - i, sampler);
    const std::span<const int32_t> one(&next, 1);
    if (steps > 1) {
      const model::LlamaRunner::ChainPicks drawn = runner.forward_sampled(next, steps, sampler.device_draws(steps - 1), k);
      for (const ops::RankedLogit& pick : drawn.picks) sampler.take_drawn(pick);
      next = k ? sampler.sample_ranked(drawn.last) : sampler.sample(drawn.last_row);
    } else if (k) {
      next = sampler.sample_ranked(runner.forward_ranked(one, k));
    } else {
      next = sampler.sample(runner.forward(one, false));
    }
    i += steps > 1 ? steps : 1;
  }
  return next;
}

model::SamplerOptions bench_sampling(double temperature, int top_k, double top_p) {
  return temperature == 0 ? model::SamplerOptions{0, 1, 1, 0} : model::SamplerOptions{temperature, top_k, top_p, 0};
}

}  // namespace infini::cli
