#include "ops/memory_kernels.hpp"

#include "infini/error.hpp"
#include "ops/matrix_units.hpp"
#include "spirv/memory_read_coopmat_delta_f16.h"
#include "spirv/memory_read_coopmat_delta_f16_emulated.h"
#include "spirv/memory_read_coopmat_delta_f32.h"
#include "spirv/memory_read_coopmat_delta_f32_emulated.h"
#include "spirv/memory_read_coopmat_gate_f16.h"
#include "spirv/memory_read_coopmat_gate_f16_emulated.h"
#include "spirv/memory_read_coopmat_gate_f32.h"
#include "spirv/memory_read_coopmat_gate_f32_emulated.h"
#include "spirv/memory_read_delta_f16.h"
#include "spirv/memory_read_delta_f32.h"
#include "spirv/memory_read_gate_f16.h"
#include "spirv/memory_read_gate_f32.h"
#include "spirv/memory_read_rows_delta_f16.h"
#include "spirv/memory_read_rows_delta_f32.h"
#include "spirv/memory_read_rows_gate_f16.h"
#include "spirv/memory_read_rows_gate_f32.h"
#include "spirv/memory_update_coopmat_k16_w16.h"
#include "spirv/memory_update_coopmat_k16_w16_emulated.h"
#include "spirv/memory_update_coopmat_k16_w32.h"
#include "spirv/memory_update_coopmat_k16_w32_emulated.h"
#include "spirv/memory_update_coopmat_k32_w32.h"
#include "spirv/memory_update_coopmat_k32_w32_emulated.h"
#include "spirv/memory_update_k16_w16.h"
#include "spirv/memory_update_k16_w32.h"
#include "spirv/memory_update_k32_w32.h"
#include "spirv/memory_update_rows_k16_w16.h"
#include "spirv/memory_update_rows_k16_w32.h"
#include "spirv/memory_update_rows_k32_w32.h"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {
namespace {

// Push constants, laid out exactly as the shaders declare them.
struct ReadPush {
  uint32_t tokens, heads, heads_kv, head_dim, value_dim, x_token0, memory_flags;
  float memory_eps;
};
struct UpdatePush {
  uint32_t tokens, heads_kv, head_dim, value_dim;
};
constexpr uint32_t kReadPush = sizeof(ReadPush), kUpdatePush = sizeof(UpdatePush);

constexpr uint32_t kTiledReadTokens = 8;      // memory_read.comp: tokens per workgroup
constexpr uint32_t kTiledUpdateRows = 16;     // memory_update.comp: a 16 x 64 block of M per workgroup
constexpr uint32_t kTiledUpdateColumns = 64;
// *_coopmat.comp: 4 warps of 32 lanes; the read takes 64 tokens per workgroup, the update a
// 32 x 64 block of M; specialization constants: workgroup size, D, Dv.
constexpr uint32_t kMatrixWorkgroup = 128, kMatrixReadTokens = 64, kMatrixUpdateRows = 32, kMatrixUpdateColumns = 64;
constexpr uint32_t kSmallPiece = 2;  // pieces of at most this many tokens read with the Tiled kernel

constexpr uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

vk::BufferRange whole(const vk::Buffer& b) { return vk::BufferRange::whole(b); }

}  // namespace

const char* memory_kernel_name(MemoryKernel kernel) {
  switch (kernel) {
    case MemoryKernel::Tiled: return "tiled";
    case MemoryKernel::Rows: return "rows";
    case MemoryKernel::Matrix: return "coopmat";
    case MemoryKernel::MatrixEmulated: return "coopmat-emulated";
  }
  return "?";
}

MemoryConventions memory_conventions(const InfiniOptions& o) {
  // The bits of shaders/common/activations.glsl.
  constexpr uint32_t kGateLocal = 1, kHeadModulo = 2, kEpsAdd = 4;
  MemoryConventions c;
  if (o.gate_sign == GateSign::Local) c.flags |= kGateLocal;
  if (o.memory_head_map == MemoryHeadMap::Modulo) c.flags |= kHeadModulo;
  if (o.memory_eps_mode == EpsMode::Add) c.flags |= kEpsAdd;
  c.eps = o.memory_eps;
  return c;
}

std::string matrix_memory_misfit(const AttentionShape& s, const vk::Capabilities& caps) {
  // Every variant declares the same shared arrays; the read's grow with D.
  return matrix_head_dims_misfit(s.head_dim, s.value_dim, kMatrixWorkgroup,
                                 {spirv::memory_read_coopmat_gate_f32_emulated, spirv::memory_update_coopmat_k32_w32_emulated},
                                 caps);
}

MemoryKernels::MemoryKernels(vk::Device& device, const AttentionShape& shape, bool f16, UpdateRule update,
                             MemoryKernel kernel, uint32_t lanes)
    : kernel_(kernel), shape_(shape) {
  auto& pipelines = device.pipelines();
  const bool matrix = kernel == MemoryKernel::Matrix || kernel == MemoryKernel::MatrixEmulated;
  if (matrix && !matrix_memory_misfit(shape, device.caps()).empty()) kernel_ = MemoryKernel::Tiled;
  if (kernel_ == MemoryKernel::Rows && (lanes == 0 || shape.head_dim % 4 || shape.value_dim % 4))
    throw Error("infini memory: the rows kernels need a workgroup size and D, Dv multiples of 4");
  // The update reads W = V (linear, input type) or the f32 delta residual.
  const bool w16 = f16 && update == UpdateRule::Linear;

  using Source = vk::KernelSource;
  const Read tiled{
      &pipelines.get(f16 ? Source{"memory_read_gate_f16", spirv::memory_read_gate_f16, 5, kReadPush}
                         : Source{"memory_read_gate_f32", spirv::memory_read_gate_f32, 5, kReadPush}),
      &pipelines.get(f16 ? Source{"memory_read_delta_f16", spirv::memory_read_delta_f16, 5, kReadPush}
                         : Source{"memory_read_delta_f32", spirv::memory_read_delta_f32, 5, kReadPush}),
      kTiledReadTokens};
  const uint32_t d = uint32_t(shape.head_dim), dv = uint32_t(shape.value_dim), hkv = uint32_t(shape.heads_kv);
  switch (kernel_) {
    case MemoryKernel::Tiled:
      read_ = tiled;
      update_grid_ = {ceil_div(dv, kTiledUpdateColumns), ceil_div(d, kTiledUpdateRows), hkv};
      update_ = &pipelines.get(
          !f16  ? Source{"memory_update_k32_w32", spirv::memory_update_k32_w32, 4, kUpdatePush}
          : w16 ? Source{"memory_update_k16_w16", spirv::memory_update_k16_w16, 4, kUpdatePush}
                : Source{"memory_update_k16_w32", spirv::memory_update_k16_w32, 4, kUpdatePush});
      break;
    case MemoryKernel::Rows: {
      const uint32_t spec[] = {lanes};
      read_ = {&pipelines.get(f16 ? Source{"memory_read_rows_gate_f16", spirv::memory_read_rows_gate_f16, 5, kReadPush}
                                  : Source{"memory_read_rows_gate_f32", spirv::memory_read_rows_gate_f32, 5, kReadPush},
                              spec),
               &pipelines.get(f16 ? Source{"memory_read_rows_delta_f16", spirv::memory_read_rows_delta_f16, 5, kReadPush}
                                  : Source{"memory_read_rows_delta_f32", spirv::memory_read_rows_delta_f32, 5, kReadPush},
                              spec),
               lanes, dv / 4};
      update_grid_ = {ceil_div(d, lanes), dv / 4, hkv};
      update_ = &pipelines.get(
          !f16  ? Source{"memory_update_rows_k32_w32", spirv::memory_update_rows_k32_w32, 4, kUpdatePush}
          : w16 ? Source{"memory_update_rows_k16_w16", spirv::memory_update_rows_k16_w16, 4, kUpdatePush}
                : Source{"memory_update_rows_k16_w32", spirv::memory_update_rows_k16_w32, 4, kUpdatePush},
          spec);
      break;
    }
    case MemoryKernel::Matrix:
    case MemoryKernel::MatrixEmulated: {
      const bool emu = kernel_ == MemoryKernel::MatrixEmulated;
      const uint32_t spec[] = {kMatrixWorkgroup, uint32_t(shape.head_dim), uint32_t(shape.value_dim)};
      auto pick = [&](const Source& hardware, const Source& emulated) { return &pipelines.get(emu ? emulated : hardware, spec); };
      // clang-format off
      read_ = f16 ? Read{pick({"memory_read_coopmat_gate_f16", spirv::memory_read_coopmat_gate_f16, 5, kReadPush},
                              {"memory_read_coopmat_gate_f16_emulated", spirv::memory_read_coopmat_gate_f16_emulated, 5, kReadPush}),
                         pick({"memory_read_coopmat_delta_f16", spirv::memory_read_coopmat_delta_f16, 5, kReadPush},
                              {"memory_read_coopmat_delta_f16_emulated", spirv::memory_read_coopmat_delta_f16_emulated, 5, kReadPush}),
                         kMatrixReadTokens}
                  : Read{pick({"memory_read_coopmat_gate_f32", spirv::memory_read_coopmat_gate_f32, 5, kReadPush},
                              {"memory_read_coopmat_gate_f32_emulated", spirv::memory_read_coopmat_gate_f32_emulated, 5, kReadPush}),
                         pick({"memory_read_coopmat_delta_f32", spirv::memory_read_coopmat_delta_f32, 5, kReadPush},
                              {"memory_read_coopmat_delta_f32_emulated", spirv::memory_read_coopmat_delta_f32_emulated, 5, kReadPush}),
                         kMatrixReadTokens};
      update_ = !f16 ? pick({"memory_update_coopmat_k32_w32", spirv::memory_update_coopmat_k32_w32, 4, kUpdatePush},
                            {"memory_update_coopmat_k32_w32_emulated", spirv::memory_update_coopmat_k32_w32_emulated, 4, kUpdatePush})
              : w16  ? pick({"memory_update_coopmat_k16_w16", spirv::memory_update_coopmat_k16_w16, 4, kUpdatePush},
                            {"memory_update_coopmat_k16_w16_emulated", spirv::memory_update_coopmat_k16_w16_emulated, 4, kUpdatePush})
                     : pick({"memory_update_coopmat_k16_w32", spirv::memory_update_coopmat_k16_w32, 4, kUpdatePush},
                            {"memory_update_coopmat_k16_w32_emulated", spirv::memory_update_coopmat_k16_w32_emulated, 4, kUpdatePush});
      // clang-format on
      small_read_ = tiled;
      update_grid_ = {ceil_div(dv, kMatrixUpdateColumns), ceil_div(d, kMatrixUpdateRows), hkv};
      break;
    }
  }
}

const MemoryKernels::Read& MemoryKernels::reads_for(uint32_t tokens) const {
  return tokens <= kSmallPiece && small_read_.gate ? small_read_ : read_;
}

std::array<uint32_t, 3> MemoryKernels::read_grid(const Read& reads, uint32_t tokens, uint32_t heads) {
  return {ceil_div(tokens, reads.tokens_per_workgroup), heads, reads.column_groups};
}

void MemoryKernels::record_gate(vk::CommandStream& stream, const vk::Buffer& q, uint32_t q_token0, const vk::Buffer& m,
                                const vk::Buffer& z, const vk::Buffer& beta, const vk::Buffer& out, uint32_t tokens,
                                MemoryConventions c) const {
  const AttentionShape& s = shape_;
  const ReadPush push{tokens, uint32_t(s.heads_q), uint32_t(s.heads_kv), uint32_t(s.head_dim), uint32_t(s.value_dim),
                      q_token0, c.flags, c.eps};
  const Read& reads = reads_for(tokens);
  stream.dispatch(*reads.gate,
                  {{whole(q), vk::Access::Read}, {whole(m), vk::Access::Read}, {whole(z), vk::Access::Read},
                   {whole(beta), vk::Access::Read}, {whole(out), vk::Access::ReadWrite}},
                  push, read_grid(reads, tokens, uint32_t(s.heads_q)));
}

void MemoryKernels::record_delta(vk::CommandStream& stream, const vk::Buffer& k, const vk::Buffer& v,
                                 const vk::Buffer& m, const vk::Buffer& z, const vk::Buffer& w, uint32_t tokens,
                                 MemoryConventions c) const {
  const AttentionShape& s = shape_;
  const uint32_t hkv = uint32_t(s.heads_kv);
  const ReadPush push{tokens, hkv, hkv, uint32_t(s.head_dim), uint32_t(s.value_dim), 0, c.flags, c.eps};
  const Read& reads = reads_for(tokens);
  stream.dispatch(*reads.delta,
                  {{whole(k), vk::Access::Read}, {whole(m), vk::Access::Read}, {whole(z), vk::Access::Read},
                   {whole(v), vk::Access::Read}, {whole(w), vk::Access::Write}},
                  push, read_grid(reads, tokens, hkv));
}

void MemoryKernels::record_update(vk::CommandStream& stream, const vk::Buffer& k, const vk::Buffer& w,
                                  const vk::Buffer& m, const vk::Buffer& z, uint32_t tokens) const {
  const uint32_t hkv = uint32_t(shape_.heads_kv), d = uint32_t(shape_.head_dim), dv = uint32_t(shape_.value_dim);
  const UpdatePush push{tokens, hkv, d, dv};
  stream.dispatch(*update_,
                  {{whole(k), vk::Access::Read}, {whole(w), vk::Access::Read}, {whole(m), vk::Access::ReadWrite},
                   {whole(z), vk::Access::ReadWrite}},
                  push, update_grid_);
}

}  // namespace infini::ops
