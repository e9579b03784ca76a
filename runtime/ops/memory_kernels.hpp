#pragma once
// The compressive memory's kernels for one layer shape (docs/design.md §4.3): the read fused with
// the gate (A = g A_mem + (1 - g) A_dot), the delta rule's retrieval (W = V - A_mem) and the write
// (M += sigma(K)^T W, z += sum sigma(K)). The layer owns M and z; this picks the kernels and
// records them.
//
// Families, following the attention kernel's:
//   Tiled   memory_read.comp / memory_update.comp: sigma(X) rows and token chunks in shared memory.
//   Rows    *_rows.comp: no shared memory, no barriers, for CPU drivers (lanes = workgroup size).
//   Matrix  *_coopmat.comp on matrix units: the reads as p M/z with p a row of weights in [0, 1]
//           (see memory_read_coopmat.comp), the write as a product of f16 fragments summed in f32.
//           Pieces of 1-2 tokens (decode) read with the Tiled kernel. Needs D a multiple of 16,
//           Dv of 32 and the tiles in shared memory; where they do not fit, Tiled runs instead.
//   MatrixEmulated  Matrix with emulated fragments (slow; tests on devices without matrix units).
// Matrix results match the others to f16 accuracy (p, M/z, sigma(K) and W are rounded to f16).
#include <array>
#include <cstdint>
#include <string>

#include "infini/attention_options.hpp"
#include "vk/buffer.hpp"
#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Capabilities;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

enum class MemoryKernel { Tiled, Rows, Matrix, MatrixEmulated };
const char* memory_kernel_name(MemoryKernel kernel);  // "tiled", "rows", "coopmat", "coopmat-emulated"

// The memory's conventions (docs/design.md §1.8) as the read kernels' push constants take them:
// the bits of shaders/common/activations.glsl (kGateLocal, kHeadModulo, kEpsAdd) and eps.
struct MemoryConventions {
  uint32_t flags = 0;
  float eps = kMemoryEps;
};
MemoryConventions memory_conventions(const InfiniOptions& options);

// Why the matrix memory kernels cannot take this shape on this device; empty when they can.
std::string matrix_memory_misfit(const AttentionShape& shape, const vk::Capabilities& caps);

class MemoryKernels {
 public:
  // `kernel` Matrix or MatrixEmulated falls back to Tiled where matrix_memory_misfit() says so;
  // Rows needs `lanes` (its workgroup size) and D, Dv multiples of 4.
  MemoryKernels(vk::Device& device, const AttentionShape& shape, bool f16_input, UpdateRule update, MemoryKernel kernel,
                uint32_t lanes = 0);

  // A [tokens][Hq][Dv] in `out` (holding A_dot) = g A_mem + (1 - g) A_dot, A_mem read for Q rows
  // q_token0.., g from beta [Hq][Dv], under the conventions `c`.
  void record_gate(vk::CommandStream& stream, const vk::Buffer& q, uint32_t q_token0, const vk::Buffer& m,
                   const vk::Buffer& z, const vk::Buffer& beta, const vk::Buffer& out, uint32_t tokens,
                   MemoryConventions c) const;
  // W [tokens][Hkv][Dv] f32 = V - A_mem, A_mem read for K rows 0..tokens-1 (c's eps rule).
  void record_delta(vk::CommandStream& stream, const vk::Buffer& k, const vk::Buffer& v, const vk::Buffer& m,
                    const vk::Buffer& z, const vk::Buffer& w, uint32_t tokens, MemoryConventions c) const;
  // M += sigma(K)^T W and z += sum sigma(K) over K rows 0..tokens-1; W is f32 (the delta
  // residual) under the delta rule, else V in the input type.
  void record_update(vk::CommandStream& stream, const vk::Buffer& k, const vk::Buffer& w, const vk::Buffer& m,
                     const vk::Buffer& z, uint32_t tokens) const;

  MemoryKernel kernel() const noexcept { return kernel_; }

 private:
  struct Read {
    const vk::Pipeline* gate = nullptr;
    const vk::Pipeline* delta = nullptr;
    uint32_t tokens_per_workgroup = 1;
    uint32_t column_groups = 1;  // workgroups along the value columns (grid z)
  };
  // The reads for a piece of `tokens`.
  const Read& reads_for(uint32_t tokens) const;
  static std::array<uint32_t, 3> read_grid(const Read& reads, uint32_t tokens, uint32_t heads);

  MemoryKernel kernel_;
  AttentionShape shape_;
  Read read_;        // the family's reads
  Read small_read_;  // Matrix: the Tiled reads, for pieces of 1-2 tokens
  const vk::Pipeline* update_ = nullptr;
  std::array<uint32_t, 3> update_grid_{};
};

}  // namespace infini::ops
