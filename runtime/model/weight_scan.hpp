#pragma once
// Finds NaN and infinity in f32/f16 weights. A model with a non-finite weight produces garbage
// (or NaN logits) far from the cause, so the loader reports it up front, by tensor.
#include <cstdint>

#include "model/llama_weights.hpp"

namespace infini::model {

struct NonFiniteCount {
  uint64_t count = 0;  // NaN or +-Inf elements
  uint64_t first = 0;  // index of the first one (valid when count > 0)
};

// For block formats, whose values are integers behind a scale, a scale that is NaN or infinite
// makes the whole block garbage: that throws infini::Error naming the tensor and the block.
NonFiniteCount count_non_finite(const TensorView& t);

}  // namespace infini::model
