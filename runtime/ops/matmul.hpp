#pragma once
// C = A * B^T on the device: A is [m][k], B is [n][k] (both k-contiguous, f32 or f16),
// C is [m][n] f32. fp32 accumulation. Tile sizes are specialization constants.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "infini/element_type.hpp"
#include "vk/capabilities.hpp"
#include "vk/command_stream.hpp"
#include "vk/kernel.hpp"
#include "ops/matmul_choice.hpp"
#include "ops/matmul_shapes.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

// Tiles that suit the device (from its limits; kept in one place so tuning is easy to find).
MatmulTiles default_matmul_tiles(const vk::Capabilities& caps);
// Why the tiled kernel (f16 arithmetic: `half`) cannot take tiles `t` on this device; empty when it can.
std::string tiles_misfit(const vk::Capabilities& caps, const MatmulTiles& t, bool half);

// Whether the device can run MatmulKernel::Lanes.
bool supports_lanes_matmul(const vk::Capabilities& caps);
// Whether MatmulKernel::Matrix has a variant for A and B (the device: ops/matrix_units.hpp).
bool matrix_matmul_types(ElementType a, ElementType b);

struct MatmulArgs {
  uint32_t m = 0, n = 0, k = 0;
  vk::BufferRange a, b, c;
  // Row strides in elements (0 = packed: k, k, n) and element offsets of the first rows.
  uint32_t lda = 0, ldb = 0, ldc = 0;
  uint32_t a_offset = 0, b_offset = 0, c_offset = 0;
  // C += A B^T instead of C = A B^T: a residual added in the same pass (every kernel).
  bool accumulate = false;
  // Steps of a transformer block done in the same pass as the product, by the vector kernel
  // only (Matmul::does_fused_steps says whether a call runs it), so that decode on a GPU pays no
  // launch and no barrier for them:
  // A's rows RMS-normalised on the way in: A[m][k] * a_norm[k] / sqrt(mean_k A[m][k]^2 + norm_eps)
  // (a_norm: k f32 weights).
  vk::BufferRange a_norm;
  float norm_eps = 0;
  // C = silu(A B^T) * (A U^T), U = glu_up in B's type and layout (b_offset, ldb): a gated FFN's
  // gate and up projections and its SwiGLU.
  vk::BufferRange glu_up;
  // C = A B^T + bias[bias_offset + j] for column j (f32): a projection's bias. Not with glu_up.
  vk::BufferRange bias;
  uint32_t bias_offset = 0;
  // Room for a split-K call's partial products (Matmul::split_scratch_floats); a call on a split
  // kernel without it, or with too little, sums all of k in one pass.
  vk::BufferRange split_scratch;
  bool has_fused_steps() const noexcept { return a_norm.buffer || glu_up.buffer || bias.buffer; }
};

// Calls of at least this many rows are a prefill piece's: what Matmul's piece kernel runs.
inline constexpr uint32_t kPieceMinRows = 64;

class Matmul {
 public:
  // Throws infini::Error when the tiles are inconsistent or exceed the device's limits.
  // matrix_tiles: the tiling of the Matrix and MatrixEmulated kernels (kAutoMatrixTiles: adapting to small grids).
  // vector_tiles: the shape of the Vector and VectorShared kernels (a workgroup of a power of two
  // from 16 invocations, 1 to 4 columns, 1 to 8 words).
  // piece: calls of at least kPieceMinRows rows run that choice instead (the autotuner's for this
  // weight's prefill pieces, graph/kernel_tuning.hpp); fewer rows keep `kernel`. A choice the
  // device cannot take is ignored (the tuning cache is never trusted).
  Matmul(vk::Device& device, ElementType a, ElementType b, MatmulTiles tiles = {}, MatmulKernel kernel = MatmulKernel::Auto,
         MatrixTiles matrix_tiles = kAutoMatrixTiles, VectorTiles vector_tiles = {},
         std::optional<MatmulChoice> piece = std::nullopt);
  // The kernel, tiling and split-K of `choice` for every call (what the tuner measures).
  Matmul(vk::Device& device, ElementType a, ElementType b, const MatmulChoice& choice);

  // Records one dispatch; checks that every operand fits its range.
  void record(vk::CommandStream& stream, const MatmulArgs& args) const;
  // The kernel a call runs: the one asked for, or what it falls back to for this shape and alignment.
  MatmulKernel kernel_for_call(const MatmulArgs& args) const;
  // The pipeline it dispatches (for its compiled code's statistics, vk/pipeline_statistics.hpp).
  const vk::Pipeline& pipeline_for_call(const MatmulArgs& args) const {
    const Matmul& m = for_call(args);
    return *m.plan(args).pipeline;
  }
  // Slices of k a call of `m` rows is split into (1: none) when it has room for them, and the
  // floats of room that takes (MatmulArgs::split_scratch; 0 when unsplit).
  uint32_t split_k_for_rows(uint32_t m) const noexcept { return m >= kPieceMinRows && piece_ ? piece_->split_k_ : split_k_; }
  uint64_t split_scratch_floats(uint32_t m, uint32_t n) const noexcept {
    const uint32_t s = split_k_for_rows(m);
    return s > 1 ? uint64_t(s) * m * n : 0;
  }
  // Whether the call runs the vector kernel, which alone does MatmulArgs' fused steps (a_norm,
  // glu_up, bias); record() refuses them elsewhere.
  bool does_fused_steps(const MatmulArgs& args) const;

  const MatmulTiles& tiles() const noexcept { return tiles_; }
  const MatrixTiles& matrix_tiles() const noexcept { return matrix_tiles_; }
  // The tiling a call on the matrix kernel runs (matrix_tiles(), or kSmallMatrixTiles for a small
  // grid when they adapt).
  MatrixTiles matrix_tiles_for_call(const MatmulArgs& args) const;
  const VectorTiles& vector_tiles() const noexcept { return vector_tiles_; }  // resolved (no zeros) where used
  MatmulKernel kernel() const noexcept { return kernel_; }
  // Whether calls of more than kMaxVectorRows rows (aligned as Matrix needs) run on matrix units.
  bool uses_matrix_units() const noexcept { return matrix_ && kernel_ != MatmulKernel::MatrixEmulated; }
  static double flops(uint32_t m, uint32_t n, uint32_t k) { return 2.0 * m * n * k; }

 private:
  struct Plan {
    const vk::Pipeline* pipeline;
    std::array<uint32_t, 3> groups;
    MatmulKernel kernel;
  };
  Plan plan(const MatmulArgs& args) const;
  // The Matmul a call runs on: this one, or the piece kernel's for a call of many rows.
  const Matmul& for_call(const MatmulArgs& args) const {
    return piece_ && args.m >= kPieceMinRows ? *piece_ : *this;
  }
  // matmul_regs.comp with `rows` x `cols` outputs per invocation.
  const vk::Pipeline& regs_pipeline(uint32_t rows, uint32_t cols) const;
  // matvec.comp for `rows` rows with the fused steps `steps` asks for.
  const vk::Pipeline& vector_pipeline(uint32_t rows, const MatmulArgs& steps) const;
  // matmul_coopmat.comp (or its emulation) in tiling `t`.
  const vk::Pipeline& matrix_pipeline(const MatrixTiles& t) const;

  // Split-K's two passes when this Matmul splits and the call has room; false when it runs whole.
  bool record_split(vk::CommandStream& stream, const MatmulArgs& args) const;

  ElementType a_, b_;
  MatmulTiles tiles_;
  MatrixTiles matrix_tiles_;
  MatmulKernel kernel_;
  const vk::Pipeline* pipeline_;
  const vk::Pipeline* regs_block_ = nullptr;  // Registers: kRegsRows x kRegsCols per invocation
  const vk::Pipeline* regs_row_ = nullptr;    // Registers for one row (decode)
  std::optional<vk::KernelSource> regs_source_;  // for its few-row shapes (batched decode; made on first use)
  const vk::Pipeline* lanes_ = nullptr;       // Lanes: kLanesRows x 8 * kLanesCols per workgroup
  bool vector_ = false;  // matvec.comp takes calls of 1..kMaxVectorRows rows
  vk::Device* device_;                    // for the vector kernel's fused variants, made on first use
  std::optional<vk::KernelSource> vector_source_;
  VectorTiles vector_tiles_;
  const vk::Pipeline* matrix_ = nullptr;      // matmul_coopmat.comp (or its emulation), when used
  std::optional<vk::KernelSource> matrix_source_;  // its source, for the small tiling (made on first use)
  uint32_t matrix_min_rows_ = 1;              // for calls of at least this many rows
  std::shared_ptr<const Matmul> piece_;       // the piece kernel's, when it is another one
  uint32_t split_k_ = 1;                      // slices of k (MatmulChoice::split_k)
  const vk::Pipeline* split_sum_ = nullptr;   // matmul_split_sum.comp, when split_k_ > 1
};

// A digest of every matmul kernel's SPIR-V this build holds: a tuning measured with other kernels
// is stale (graph/kernel_tuning.hpp).
uint64_t matmul_kernels_digest();

}  // namespace infini::ops
