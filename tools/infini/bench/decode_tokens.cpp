#include "decode_tokens.hpp"

#include <span>

namespace infini::cli {

int32_t decode_tokens(model::LlamaRunner& runner, int32_t next, int64_t tokens, const model::SamplerOptions& sampling) {
  model::Sampler sampler(sampling);
  const uint32_t k = sampler.draws_whole_row() ? 0 : sampler.ranked_needed();
  for (int64_t i = 0; i < tokens;) {
    // As Session::generate: chains where the runner offers them.
    const bool rows = sampler.draws_whole_row() && runner.draws_rows_ahead();
    const uint32_t steps = k > 0 || rows ? runner.chain_steps(tokens - i) : 1;
    const std::span<const int32_t> one(&next, 1);
    if (steps > 1 && sampler.draws_per_token() == 0) {
      next = runner.forward_greedy(next, steps).back().id;
    } else if (steps > 1) {
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
