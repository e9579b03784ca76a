#pragma once
// How a model graph's kernels are chosen and its attention streams: what LlamaGraph needs of the
// runner's options (RunnerOptions adds how the graph is run).
#include "infini/attention_options.hpp"
#include "ops/infini_attention_layer.hpp"
#include "ops/matmul.hpp"

namespace infini::model {

struct GraphOptions {
  InfiniOptions infini;  // segment, update rule, conventions, memory on/off (rope: the model's)
  ops::AttentionKernel kernel = ops::AttentionKernel::Auto;
  // The projections' kernel. Decode rows on the vector kernel (GPUs' choice under Auto) also do
  // the norms, the SwiGLU and the biases in the projections' own passes; on the tiled attention
  // family (also GPUs' choice) decode does its RoPE, cache append and merge in the attention's pass.
  ops::MatmulKernel matmul_kernel = ops::MatmulKernel::Auto;
  ops::VectorTiles vector_tiles;  // the shape of the vector kernel (decode on GPUs); zeros: its defaults
  ops::MatrixTiles matrix_tiles = ops::kAutoMatrixTiles;  // the matrix-unit kernel's tiling (prefill on GPUs)
  bool fused_steps = true;  // false: those steps stay separate dispatches (to measure what fusing saves)
};

}  // namespace infini::model
