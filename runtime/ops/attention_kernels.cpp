#include "ops/attention_kernels.hpp"

#include <iterator>

#include "infini/error.hpp"
#include "ops/matrix_units.hpp"
#include "spirv/attention_coopmat_v16.h"
#include "spirv/attention_coopmat_v16_emulated.h"
#include "spirv/attention_coopmat_v32.h"
#include "spirv/attention_coopmat_v32_emulated.h"
#include "spirv/attention_decode_merge_gate_f16.h"
#include "spirv/attention_decode_merge_gate_f32.h"
#include "spirv/attention_decode_merge_plain.h"
#include "spirv/attention_decode_v16.h"
#include "spirv/attention_decode_v16_fresh_merge.h"
#include "spirv/attention_decode_v16_fresh_merge_gate.h"
#include "spirv/attention_decode_v32.h"
#include "spirv/attention_decode_v32_fresh_merge.h"
#include "spirv/attention_decode_v32_fresh_merge_gate.h"
#include "spirv/attention_rows_v16.h"
#include "spirv/attention_rows_v32.h"
#include "spirv/attention_segment_v16.h"
#include "spirv/attention_segment_v32.h"
#include "spirv/attention_split_v16.h"
#include "spirv/attention_split_v32.h"
#include "spirv/cache_append_halves.h"
#include "spirv/cache_append_words.h"
#include "spirv/rope_f16.h"
#include "spirv/rope_f32.h"

namespace infini::ops {
namespace {

struct StepSources {
  AttentionStep step;
  vk::KernelSource words, halves;
};

// Bindings: RoPE 4, the append 3, attention 5 (6 with the sinks' queries: split, rows, decode
// and segment), the merging decode 11 (14 with the gate), the merges 2 and, with the gate, 6.
constexpr uint32_t kMergedGateBindings = 14;
const StepSources kSteps[] = {
    {AttentionStep::Rope, {"rope_f32", spirv::rope_f32, 4, sizeof(RopePush)}, {"rope_f16", spirv::rope_f16, 4, sizeof(RopePush)}},
    {AttentionStep::CacheAppend,
     {"cache_append_words", spirv::cache_append_words, 3, sizeof(AppendPush)},
     {"cache_append_halves", spirv::cache_append_halves, 3, sizeof(AppendPush)}},
    {AttentionStep::Split,
     {"attention_split_v32", spirv::attention_split_v32, 6, sizeof(AttentionPush)},
     {"attention_split_v16", spirv::attention_split_v16, 6, sizeof(AttentionPush)}},
    {AttentionStep::Rows,
     {"attention_rows_v32", spirv::attention_rows_v32, 6, sizeof(AttentionPush)},
     {"attention_rows_v16", spirv::attention_rows_v16, 6, sizeof(AttentionPush)}},
    {AttentionStep::Decode,
     {"attention_decode_v32", spirv::attention_decode_v32, 6, sizeof(DecodePush)},
     {"attention_decode_v16", spirv::attention_decode_v16, 6, sizeof(DecodePush)}},
    {AttentionStep::DecodeFreshMerge,
     {"attention_decode_v32_fresh_merge", spirv::attention_decode_v32_fresh_merge, 11, sizeof(DecodePush)},
     {"attention_decode_v16_fresh_merge", spirv::attention_decode_v16_fresh_merge, 11, sizeof(DecodePush)}},
    {AttentionStep::DecodeFreshMergeGate,
     {"attention_decode_v32_fresh_merge_gate", spirv::attention_decode_v32_fresh_merge_gate, kMergedGateBindings,
      sizeof(DecodePush)},
     {"attention_decode_v16_fresh_merge_gate", spirv::attention_decode_v16_fresh_merge_gate, kMergedGateBindings,
      sizeof(DecodePush)}},
    {AttentionStep::Merge,
     {"attention_decode_merge_plain", spirv::attention_decode_merge_plain, 2, sizeof(DecodeMergePush)},
     {"attention_decode_merge_plain", spirv::attention_decode_merge_plain, 2, sizeof(DecodeMergePush)}},
    {AttentionStep::MergeGate,
     {"attention_decode_merge_gate_f32", spirv::attention_decode_merge_gate_f32, 6, sizeof(DecodeMergePush)},
     {"attention_decode_merge_gate_f16", spirv::attention_decode_merge_gate_f16, 6, sizeof(DecodeMergePush)}},
    {AttentionStep::Segment,
     {"attention_segment_v32", spirv::attention_segment_v32, 6, sizeof(AttentionPush)},
     {"attention_segment_v16", spirv::attention_segment_v16, 6, sizeof(AttentionPush)}},
    {AttentionStep::Matrix,
     {"attention_coopmat_v32", spirv::attention_coopmat_v32, 6, sizeof(AttentionPush)},
     {"attention_coopmat_v16", spirv::attention_coopmat_v16, 6, sizeof(AttentionPush)}},
    {AttentionStep::MatrixEmulated,
     {"attention_coopmat_v32_emulated", spirv::attention_coopmat_v32_emulated, 6, sizeof(AttentionPush)},
     {"attention_coopmat_v16_emulated", spirv::attention_coopmat_v16_emulated, 6, sizeof(AttentionPush)}},
};

// Why the matrix attention cannot take this shape on this device; empty when it can. Its shared
// memory is read from the kernel itself (every variant declares the same arrays).
std::string matrix_attention_misfit(const AttentionShape& s, const vk::Capabilities& caps) {
  return matrix_head_dims_misfit(s.head_dim, s.value_dim, kMatrixAttnWorkgroup, {spirv::attention_coopmat_v32_emulated},
                                 caps);
}

}  // namespace

const vk::KernelSource& attention_source(AttentionStep step, bool f16) {
  for (const StepSources& s : kSteps)
    if (s.step == step) return f16 ? s.halves : s.words;
  throw Error("infini attention: no kernel for this step");  // every step has a row
}

AttnTiles attention_tiles(const vk::Capabilities& caps) {
  constexpr AttnTiles choices[] = {{32, 64}, {16, 64}, {16, 32}};
  for (const AttnTiles& t : choices) {
    const uint32_t cg = kAttnWorkgroup / kAttnRows;
    const uint64_t floats = kAttnRows * (kAttnDimChunk + 1) + t.keys * (kAttnDimChunk + 1) + kAttnRows * (t.keys + 1) +
                            t.keys * t.value_chunk + 2 * cg * kAttnRows;
    if (floats * 4 <= caps.max_shared_memory_bytes) return t;
  }
  return choices[std::size(choices) - 1];  // the pipeline cache names the limit
}

// Registers hold R rows of Q and of the output. More rows share each key's loads, which a CPU
// driver makes lane by lane, so more is faster, up to 256 vec4s of Q and output per invocation:
// past that the driver's compile time grows faster than the speed. On lavapipe at D = Dv = 64
// (f32, 4096 tokens), R 8 ran 1.22-1.34x R 4 and took 7.9 s against 3.9 s to compile; R 16 ran
// 1.52x but took 20 s; at D 128 R 8 ran 1.22x and took 30 s against 13 s, so there it stays 4.
uint32_t rows_per_invocation(const AttentionShape& s) {
  const uint32_t vec4s = uint32_t(s.head_dim + s.value_dim) / 4;
  return vec4s * 8 <= 256 ? 8 : 4;
}

AttentionKernel choose_attention_kernel(AttentionKernel kernel, const AttentionShape& shape, const vk::Capabilities& caps) {
  const bool rows_fit = shape.head_dim % 4 == 0 && shape.value_dim % 4 == 0;
  if (kernel == AttentionKernel::Rows && !rows_fit)
    throw Error("infini attention: the rows kernel needs D and Dv to be multiples of 4, got D = " +
                std::to_string(shape.head_dim) + ", Dv = " + std::to_string(shape.value_dim));
  const std::string matrix_misfit = matrix_attention_misfit(shape, caps);
  if (const std::string missing = kernel == AttentionKernel::Matrix ? missing_matrix_units(caps) : "";
      !missing.empty())
    throw Error("infini attention: the matrix kernel needs " + missing + ", which '" + caps.name + "' does not have");
  if (kernel == AttentionKernel::MatrixEmulated && !caps.shader_float16)
    throw Error("infini attention: the matrix-emulated kernel needs f16 arithmetic (shaderFloat16), which '" + caps.name +
                "' does not have");
  const bool matrix_asked = kernel == AttentionKernel::Matrix || kernel == AttentionKernel::MatrixEmulated;
  if (matrix_asked && !matrix_misfit.empty()) throw Error("infini attention: the matrix kernel " + matrix_misfit);
  if (kernel != AttentionKernel::Auto) return kernel;
  const MatrixUnits units = matrix_misfit.empty() ? matrix_units_for_auto(caps) : MatrixUnits::None;
  return units == MatrixUnits::Hardware   ? AttentionKernel::Matrix
         : units == MatrixUnits::Emulated ? AttentionKernel::MatrixEmulated
         : caps.is_software() && rows_fit ? AttentionKernel::Rows
                                          : AttentionKernel::Tiled;
}

}  // namespace infini::ops
