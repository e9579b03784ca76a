#pragma once
// Reading weight tensors on the host for the CPU references: shape checks and widening of f32 or
// f16 storage to double. memcpy is used for every element, so views into a memory-mapped file
// need no particular alignment.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/llama_weights.hpp"

namespace infini::model {

// Throws infini::Error (one line naming the tensor) unless t has exactly `shape` (ggml order) and
// holds shape-product elements of its type.
void check_tensor(const TensorView& t, const std::vector<int64_t>& shape);

// Elements [first, first + count) of t in storage order, widened to double into out[0..count).
void widen(const TensorView& t, int64_t first, int64_t count, double* out);

// All elements of t, widened to double.
std::vector<double> widen_all(const TensorView& t);

// Adds `bias` (when there is one) to every row of x, rows being bias's length: a projection's
// bias for the references.
void add_bias_rows(std::vector<double>& x, const std::optional<TensorView>& bias);

}  // namespace infini::model
