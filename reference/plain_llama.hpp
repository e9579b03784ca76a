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

// The same model read as StreamingLLM reads a stream (Xiao et al., ICLR 2024), defined per query
// and apart from how infini's sliding context computes it: token i < C attends tokens 0..i at
// positions 0..i; token i >= C attends the first `sinks` tokens at positions 0..sinks-1 and the
// C - sinks most recent tokens (itself the last) at positions sinks..C-1, the query at C-1. RoPE
// frequencies are those of length C. Throws infini::Error unless 0 <= sinks < C.
std::vector<double> streaming_llama_logits(const LlamaWeights& weights, std::span<const int32_t> tokens,
                                           int64_t context, int64_t sinks);

}  // namespace infini::model
