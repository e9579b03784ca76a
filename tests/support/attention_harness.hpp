#pragma once
// Runs the device Infini-attention layer over a whole stream, and the float64 reference over the
// same values, for the layer tests.
#include <cstdint>
#include <vector>

#include "infini/attention_options.hpp"
#include "ops/infini_attention_layer.hpp"
#include "infini/element_type.hpp"

namespace infini::test {

// Normalised error bound of the attention output for the matrix kernels, which round Q, K, P and
// V to f16 (the others compute in f32: 1e-6 against the float64 reference, 1e-4 with f16 inputs).
constexpr double kMatrixAttentionTolerance = 1e-6;  // measured 2e-8 to 8e-8 (lavapipe, emulated)

struct StreamInputs {
  AttentionShape shape;
  int64_t tokens = 0;
  std::vector<float> q, k, v, beta;
};

StreamInputs random_stream(const AttentionShape& shape, int64_t tokens, uint32_t seed);

struct StreamResult {
  std::vector<float> out;      // [T][Hq][Dv]
  std::vector<float> memory;   // M after the stream (last partial segment written)
  std::vector<float> norm;     // z
  size_t guard_violations = 0; // output words written past the rows asked for
  ops::AttentionKernel kernel = ops::AttentionKernel::Auto;  // the kernel the layer ran (Auto resolved)
  ops::MemoryKernel memory_kernel = ops::MemoryKernel::Tiled;  // and its memory kernels
  bool fused_decode = false;   // whether decode pieces ran in one attention pass (RoPE, append, merge)
};

// Feeds the stream to the device layer in pieces of at most `chunk` tokens (0: whole segments).
// `fuse_decode` false keeps decode's RoPE, cache append and merge separate steps.
StreamResult run_device_layer(const StreamInputs& in, const InfiniOptions& options, ElementType input, int64_t chunk = 0,
                              ops::AttentionKernel kernel = ops::AttentionKernel::Auto, bool fuse_decode = true);

struct ReferenceResult {
  std::vector<double> out, memory, norm;
};
ReferenceResult run_reference_layer(const StreamInputs& in, const InfiniOptions& options, ElementType input);

}  // namespace infini::test
