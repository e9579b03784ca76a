#pragma once
// Consistency of a LlamaWeights: every tensor has the shape the config implies (ggml order) and
// holds the bytes that shape needs. Run once before a forward pass, so the loops that follow can
// index without checks.
#include "model/llama_weights.hpp"

namespace infini::model {

// Throws infini::Error with a one-line reason naming the first bad hyperparameter or tensor.
void check_llama_weights(const LlamaWeights& weights);

}  // namespace infini::model
