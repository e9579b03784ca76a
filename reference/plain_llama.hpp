#pragma once
// The ordinary Llama forward pass in float64: absolute positions 0..T-1, full causal softmax
// attention, no segments and no memory. Written apart from LlamaReference and from the
// Infini-attention reference (its own RoPE in Hugging Face form, q*cos + rotate(q)*sin, and its
// own masked-softmax attention), so it plays "another Llama runtime" in the tests: LlamaReference
// with memory off and a segment >= T must agree with it.
#include <cstdint>
#include <span>
#include <vector>

#include "model/llama_weights.hpp"

namespace infini::model {

// Logits [tokens.size()][vocab], row-major. RoPE is weights.config.rope (dynamic RoPE scales for
// the length T, as Hugging Face does for one forward call). Throws infini::Error on bad weights
// or a token id outside [0, vocab).
std::vector<double> plain_llama_logits(const LlamaWeights& weights, std::span<const int32_t> tokens);

}  // namespace infini::model
