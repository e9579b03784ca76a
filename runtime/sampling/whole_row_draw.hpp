#pragma once
// The draw over every token of a row with top-k off and top-p below 1, ranking only the nucleus:
// ranking a 150,000-token row to walk it best first cost tens of milliseconds a token on the
// host, more than a GPU takes to decode it. (Top-p 1 is ops::row_draw, which ranks nothing.) The
// weights are ops::ranked_draw's (f32, its exp), summed in double (a whole vocabulary of them).
#include <cstdint>
#include <span>
#include <vector>

#include "ops/ranked_draw.hpp"

namespace infini::model {

// The token `u` in [0, 1) draws from all of `logits` (no NaN, not empty) with `settings` (top_p
// below 1): within the nucleus, the fewest most likely tokens (ties to the lower id) holding
// top_p of the whole weight, walked best first,
// found by ranking only as many tokens as it takes (64, then 8 times more until they hold it).
// `weights` and `order` are scratch, kept by the caller between tokens.
int32_t whole_row_draw(std::span<const float> logits, const ops::DrawSettings& settings, float u,
                       std::vector<float>& weights, std::vector<int32_t>& order);

}  // namespace infini::model
