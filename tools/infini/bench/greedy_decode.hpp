#pragma once
// Greedy decode as `infini run --temp 0` does it, for the benchmarks: the argmax taken on the
// device, and the tokens fed from there in chains where the runner offers them
// (LlamaRunner::chain_steps), token by token elsewhere.
#include <cstdint>

#include "model/llama_runner.hpp"

namespace infini::cli {

// Decodes `tokens` tokens from `next` (fed first); returns the token that would come next.
int32_t decode_greedy(model::LlamaRunner& runner, int32_t next, int64_t tokens);

}  // namespace infini::cli
