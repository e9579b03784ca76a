#include "decode_tokens.hpp"

#include <span>

namespace infini::cli {

int32_t decode_tokens(model::LlamaRunner& runner, int32_t next, int64_t tokens, const model::SamplerOptions& sampling) {
  model::Sampler sampler(sampling);
  const uint32_t k = sampler.ranked_needed();
  for (int64_t i = 0; i < tokens;) {
    const uint32_t steps = runner.chain_steps(tokens - i);
    if (steps > 1 && sampler.draws_per_token() == 0) {
      next = runner.forward_greedy(next, steps).back().id;
    } else if (steps > 1) {
      const model::LlamaRunner::ChainPicks drawn = runner.forward_sampled(next, steps, sampler.device_draws(steps - 1), k);
      for (const ops::RankedLogit& pick : drawn.picks) sampler.take_drawn(pick);
      next = sampler.sample_ranked(drawn.last);
    } else {
      next = sampler.sample_ranked(runner.forward_ranked(std::span<const int32_t>(&next, 1), k));
    }
    i += steps > 1 ? steps : 1;
  }
  return next;
}

model::SamplerOptions bench_sampling(double temperature) {
  return temperature == 0 ? model::SamplerOptions{0, 1, 1, 0} : model::SamplerOptions{temperature, 40, 0.95, 0};
}

}  // namespace infini::cli
