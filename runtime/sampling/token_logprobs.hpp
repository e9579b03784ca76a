#pragma once
// Log-probabilities of a row of logits, as OpenAI's `logprobs` report them: the log-softmax of
// the raw logits (no temperature, penalties or cuts), in double precision on the host.
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace infini::model {

struct TokenLogprobs {
  float chosen = 0;                             // log p(token)
  std::vector<std::pair<int32_t, float>> top;   // the `top` most likely tokens, best first, ties to the lower id
};

// Throws infini::Error when the row holds NaN or `token` is outside it.
TokenLogprobs token_logprobs(std::span<const float> row, int32_t token, size_t top);

}  // namespace infini::model
