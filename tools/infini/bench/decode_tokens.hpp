#pragma once
// Decode as `infini run` does it, for the benchmarks: the ranking taken on the device, and the
// tokens picked there in chains where the runner offers them (LlamaRunner::chain_steps; greedy,
// or drawn as the host sampler draws), token by token elsewhere.
#include <cstdint>

#include "exec/llama_runner.hpp"
#include "sampling/sampler.hpp"

namespace infini::cli {

// Decodes `tokens` tokens from `next` (fed first), drawn with `sampling` (temperature 0: greedy;
// top_k 1..64); returns the token that would come next.
int32_t decode_tokens(model::LlamaRunner& runner, int32_t next, int64_t tokens, const model::SamplerOptions& sampling);

// The sampling of `infini bench --temperature T --top-k K --top-p P`: greedy at temperature 0.
model::SamplerOptions bench_sampling(double temperature, int top_k, double top_p);

}  // namespace infini::cli
