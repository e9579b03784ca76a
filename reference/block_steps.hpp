#pragma once
// Steps of a transformer block that depend on the architecture, in float64, shared by the
// references (llama_reference.cpp, plain_llama.cpp): the feed-forward's gate and the embedding's
// scale (model/architecture.hpp).
#include <cmath>

#include "model/llama_weights.hpp"

namespace infini::model {

// silu(gate) * up, or gemma's gelu(gate) * up with GELU's tanh approximation.
inline double gated(FfnGate kind, double gate, double up) {
  if (kind == FfnGate::GeGlu) {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    return 0.5 * gate * (1.0 + std::tanh(k * (gate + 0.044715 * gate * gate * gate))) * up;
  }
  return gate / (1.0 + std::exp(-gate)) * up;
}

// What the embedding rows are multiplied by: sqrt(n_embd) rounded to f32 for gemma (as the device
// and llama.cpp take it), else 1.
inline double embedding_scale(const LlamaConfig& c) {
  return c.scaled_embedding ? double(float(std::sqrt(double(c.embd)))) : 1.0;
}

}  // namespace infini::model
