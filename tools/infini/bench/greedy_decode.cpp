#include "greedy_decode.hpp"

#include <span>

namespace infini::cli {

int32_t decode_greedy(model::LlamaRunner& runner, int32_t next, int64_t tokens) {
  for (int64_t i = 0; i < tokens;) {
    const uint32_t steps = runner.chain_steps(tokens - i);
    if (steps > 1) {
      next = runner.forward_greedy(next, steps).back().id;
      i += steps;
    } else {
      next = runner.forward_ranked(std::span<const int32_t>(&next, 1), 1).front().id;
      ++i;
    }
  }
  return next;
}

}  // namespace infini::cli
