#pragma once
// The Infini-attention layer's kernels: their push constants, tile constants, and one table of
// each step's shader in its two storage variants (the segment cache as f32 words or f16 halves),
// as ops/matmul.cpp keeps its variants. Which attention family a device runs is chosen here too.
#include <cstdint>
#include <string>

#include "infini/attention_options.hpp"
#include "ops/infini_attention_layer.hpp"
#include "vk/capabilities.hpp"
#include "vk/kernel.hpp"

namespace infini::ops {

// Push constants, laid out exactly as the shaders declare them.
struct RopePush {
  uint32_t tokens, heads, head_dim, rotary_dim, interleaved, x_token0, out_at_open;
  uint32_t max_position = 0xffffffffu;
};
struct AttentionPush {
  uint32_t q_rows, heads_q, heads_kv, head_dim, value_dim;
  float scale;
};
struct DecodePush {
  uint32_t q_rows, heads_q, heads_kv, head_dim, value_dim, splits, keys_per_split;
  float scale;
  uint32_t rotary_dim, interleaved, q_token0, k_token0, v_token0;  // the fresh variants
  uint32_t memory_flags;                                           // the merging ones with the gate:
  float memory_eps;                                                // ops/memory_kernels.hpp's MemoryConventions
};
struct DecodeMergePush {
  uint32_t heads_q, value_dim, splits;
  uint32_t heads_kv, head_dim, x_token0;  // the gate variants' memory read
  uint32_t memory_flags;
  float memory_eps;
};
struct AppendPush {
  uint32_t rows, row_values, src_row0;
};

// The attention kernel's tiles (specialization constants 0..5 of attention_segment.comp).
constexpr uint32_t kAttnWorkgroup = 128, kAttnRows = 32, kAttnDimChunk = 32;
// attention_coopmat.comp: 4 warps of 32 lanes, 16 query rows each; tiles of 32 keys, passes of 32
// value columns; specialization constants: workgroup size, D, Dv (43 KiB of shared memory at D 128,
// 31 KiB at D 64).
constexpr uint32_t kMatrixAttnWorkgroup = 128, kMatrixAttnRows = 64;
// At most this many query rows (decode) go to the split kernels: attention_split.comp (CPU
// drivers) splits the keys over the lanes of a workgroup, attention_decode.comp (GPUs) over
// workgroups, each taking a multiple of kDecodeKeys keys: enough splits that the query heads
// together make about kDecodeWorkgroups workgroups (every core of a large GPU busy; a CPU
// driver, which runs the tiled family only when asked to, has a few cores), fewer when the
// segment has fewer blocks of keys.
constexpr uint32_t kSplitMaxRows = 2;
constexpr uint32_t kDecodeKeys = 64, kDecodeWorkgroups = 512, kDecodeWorkgroupsCpu = 64;
constexpr uint32_t kMaxHeadDim = 256;  // memory_read.comp keeps sigma(X) rows of at most this many dims

// Keys per tile and value columns per pass of attention_segment.comp: the largest that fit the
// device's shared memory (21.4 KiB; 13.3 KiB for the 16 KiB that every device has).
struct AttnTiles {
  uint32_t keys, value_chunk;
};
AttnTiles attention_tiles(const vk::Capabilities& caps);

// attention_rows.comp's query rows per invocation for this shape.
uint32_t rows_per_invocation(const AttentionShape& s);

// The steps of the layer that have a shader per storage variant.
enum class AttentionStep {
  Rope,
  CacheAppend,
  Split,                 // attention_split.comp (Rows family, decode)
  Rows,                  // attention_rows.comp
  Decode,                // attention_decode.comp (tiled families, decode)
  DecodeFreshMerge,      // ... that also does the piece's RoPE and cache append, and merges
  DecodeFreshMergeGate,  // ... and also reads the memory and gates
  Merge,                 // attention_decode_merge.comp (one variant: it reads no cache)
  MergeGate,             // attention_decode_merge.comp with the gate
  Segment,               // attention_segment.comp (Tiled)
  Matrix,                // attention_coopmat.comp on matrix units
  MatrixEmulated,        // ... on fragments emulated in f16
};
const vk::KernelSource& attention_source(AttentionStep step, bool f16);

// The family the layer runs: `asked` itself (checked against the device, throwing with one line
// naming what is missing), or Auto's choice for the device and shape.
AttentionKernel choose_attention_kernel(AttentionKernel asked, const AttentionShape& shape, const vk::Capabilities& caps);

}  // namespace infini::ops
