#pragma once
// The draw of a token from the best logits of a row (temperature, top-k already applied by the
// ranking, top-p), defined operation by operation in f32 so that the host (model::Sampler) and
// the device (pick_token.comp, which decodes sampled tokens ahead on the GPU) pick the same token
// for the same uniform number. Vulkan makes f32 add, subtract and multiply correctly rounded but
// lets a device flush subnormals and fuse a multiply-add, and leaves exp() a few ulp loose; so
// this draw uses an exp of its own (a polynomial, constants given as bit patterns, shared with the
// shader), keeps every value out of the subnormal range by flushing it to zero itself, and is
// compiled without contraction (the shader marks its arithmetic precise).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ops/top_k.hpp"

namespace infini::ops {

struct DrawSettings {
  float inv_temperature = 1;  // 1 / T, a normal float (draw_settings makes it)
  float top_p = 1;            // in [2^-126, 1]
};

// The settings for a temperature > 0 and top_p in (0, 1], as the draw and the device read them.
DrawSettings draw_settings(double temperature, double top_p) noexcept;

// A logit as the draw reads it (subnormals flushed to zero), and its weight exp((logit - best) / T)
// against the best one so read: 1 for the best (and its ties, and when both are infinite).
float draw_logit(float logit) noexcept;
float draw_weight(float logit, float best, float inv_temperature) noexcept;
// draw_weight of every logit of a row into out[0..logits.size()) (a loop that vectorises).
void draw_weights(std::span<const float> logits, float best, float inv_temperature, float* out) noexcept;

// exp(x) within a few ulp for x in [-87, 88]; 0 below (and for NaN), infinity above. The same
// bits on every machine whose f32 arithmetic is IEEE.
float portable_exp(float x) noexcept;

// The index (into `ranked`, best first, no NaN, not empty) of the token that `u` in [0, 1)
// draws: weights exp((logit - best) / T), the shortest prefix whose weight reaches top_p of the
// whole, then the candidate where u times that prefix's weight falls.
size_t ranked_draw(std::span<const RankedLogit> ranked, const DrawSettings& settings, float u) noexcept;

// Tokens per chunk of row_draw (pick_row.comp's CHUNK).
inline constexpr size_t kRowDrawChunk = 256;

// The token `u` in [0, 1) draws from a whole row of logits (no NaN, not empty) with top-k off and
// top-p 1, as pick_row.comp draws it on the device: the weights against the row's best (the
// largest flushed logit), summed in order within chunks of kRowDrawChunk tokens and then over the
// chunks in order; u times the total walks the chunks, then the tokens of the chunk it lands in
// (rounding past a chunk's or the row's end: its last token with a weight). `scratch` holds the
// weights between calls.
size_t row_draw(std::span<const float> row, float inv_temperature, float u, std::vector<float>& scratch);

}  // namespace infini::ops
