#pragma once
// C = A * B^T on the device: A is [m][k], B is [n][k] (both k-contiguous, f32 or f16),
// C is [m][n] f32. fp32 accumulation. Tile sizes are specialization constants.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "infini/element_type.hpp"
#include "vk/capabilities.hpp"
#include "vk/command_stream.hpp"
#include "vk/kernel.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

struct MatmulTiles {
  uint32_t bm = 0, bn = 0, bk = 0;  // workgroup tile
  uint32_t tm = 0, tn = 0;          // per-invocation micro-tile
  uint32_t workgroup_size() const noexcept { return tn && tm ? (bm / tm) * (bn / tn) : 0; }
};

// Tiles that suit the device (from its limits; kept in one place so tuning is easy to find).
MatmulTiles default_matmul_tiles(const vk::Capabilities& caps);

// The matrix-unit kernel's tiling (matmul_coopmat.comp): warps_m x warps_n warps of 32 lanes, each
// frags_m x frags_n fragments of 16 x 16, so bm() x bn() of C per workgroup; bk values of k per
// step (a multiple of 16). Named as "2x2x4x4x32" (warps_m x warps_n x frags_m x frags_n x bk).
// The default is a common starting point for 16x16x16 f16 fragments, not yet tuned on a GPU:
// `infini bench --workload matmul --matrix-tiles` times others in one run.
struct MatrixTiles {
  uint32_t warps_m = 2, warps_n = 2, frags_m = 4, frags_n = 4, bk = 32;
  // adapt: a call whose grid of these tiles has fewer than kMatrixFillWorkgroups workgroups runs
  // kSmallMatrixTiles instead (a prefill's projections of a few hundred rows: 512 x 2048 in
  // 128 x 128 tiles is 64 workgroups, too few to fill a GPU of 100 or more cores).
  bool adapt = false;
  // Tile buffers in shared memory: 1 stages a step's tiles between two barriers; 2 stores the
  // next step's while the matrix units work on this one's, one barrier per step (twice the
  // shared memory). Named as a sixth number, "2x2x4x4x32x2".
  uint32_t stages = 1;
  uint32_t bm() const noexcept { return warps_m * frags_m * 16; }
  uint32_t bn() const noexcept { return warps_n * frags_n * 16; }
  uint32_t workgroup_size() const noexcept { return warps_m * warps_n * 32; }
  std::string name() const;  // "auto" for kAutoMatrixTiles
  bool operator==(const MatrixTiles&) const = default;
};
// What the runtime uses: the default tiling, adapting to small grids.
inline constexpr MatrixTiles kAutoMatrixTiles{2, 2, 4, 4, 32, true};
inline constexpr MatrixTiles kSmallMatrixTiles{2, 2, 2, 2, 32};  // 64 x 64
inline constexpr uint32_t kMatrixFillWorkgroups = 128;
// Parses a name as MatrixTiles::name writes it ("auto", or five positive numbers for a tiling
// used for every call, and a sixth, 2, for double-buffered tiles); nullopt for anything else.
std::optional<MatrixTiles> matrix_tiles_named(std::string_view name);

// The matrix-vector kernel's shape (matvec.comp): invocations per workgroup, which split K, and
// columns of C per workgroup, and the loads of each column an invocation has in flight (words).
// 0 takes the default: 64 invocations for block-format weights (one 32-value chunk each at K
// 2048), 32 for Q6_K (half a super-block each), 128 for f16 and f32, 2 columns, 1 word;
// `infini bench --workload matmul --m 1 --vector-tiles` times others in one run. Named "WGxCOLS"
// ("128x2", one word) or "WGxCOLSxWORDS" ("128x2x4"), or "auto" for the defaults;
// vector_tiles_named refuses names no device takes (a workgroup that is not a power of two from
// 16, more than 4 columns, more than 8 words).
struct VectorTiles {
  uint32_t workgroup = 0, cols = 0, words = 0;
  std::string name() const;
  bool operator==(const VectorTiles&) const = default;
};
std::optional<VectorTiles> vector_tiles_named(std::string_view name);

// Tiled: shared-memory tiles (matmul.comp), what GPUs want. Registers: blocks of C computed
// straight from device memory with vec4 loads (matmul_regs.comp), what CPU drivers want; it needs
// K, the strides and the offsets of A and B to be multiples of 4 and falls back to Tiled for a
// call where they are not. Lanes: like Registers, but the rows of A a workgroup needs are loaded
// once and passed between its lanes with subgroupShuffle (matmul_lanes.comp); it needs a subgroup
// of exactly 8 lanes with shuffle operations, and K, the strides and offsets of A and B to be
// multiples of 8, else the call falls back to Registers, as calls with few rows (decode) do.
// Vector: calls of at most kMaxVectorRows rows (decode) run matvec.comp, which streams B at memory
// bandwidth (K split over a workgroup, subgroup sums); other calls run Tiled. VectorShared: the
// same with the sums in shared memory only, what devices without subgroup arithmetic get.
// Auto: Lanes on CPU devices that support it, else Registers on CPU devices; elsewhere Vector for
// a few rows and Tiled for more.
// TiledHalf: the tiled kernel with f16 arithmetic (f32 sums) for f16 weights, on devices with
// shaderFloat16; chosen only when asked for until GPU measurements say where it wins.
// Matrix ("coopmat"): matrix units through cooperative matrices (matmul_coopmat.comp): f16 inputs,
// f32 sums, for f16 and block-format weights; K, the strides and offsets of A and B must be
// multiples of 8, else the call runs Tiled. Auto takes it on GPUs that support it
// (supports_matrix_units) for calls of more than kMaxVectorRows rows. MatrixEmulated
// ("coopmat-emulated"): the same kernel with the fragments emulated in plain arithmetic, slow, so
// that its tiling can be tested on any device with f16 arithmetic.
enum class MatmulKernel { Auto, Tiled, TiledHalf, Registers, Lanes, Vector, VectorShared, Matrix, MatrixEmulated };
inline constexpr uint32_t kMaxVectorRows = 8;

// "auto", "tiled", "tiled-half", "registers", "lanes", ... (what the bench prints and takes).
std::string_view matmul_kernel_name(MatmulKernel kernel);
std::optional<MatmulKernel> matmul_kernel_named(std::string_view name);

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
  bool has_fused_steps() const noexcept { return a_norm.buffer || glu_up.buffer || bias.buffer; }
};

class Matmul {
 public:
  // Throws infini::Error when the tiles are inconsistent or exceed the device's limits.
  // matrix_tiles: the tiling of the Matrix and MatrixEmulated kernels (kAutoMatrixTiles: adapting to small grids).
  // vector_tiles: the shape of the Vector and VectorShared kernels (a workgroup of a power of two
  // from 16 invocations, 1 to 4 columns, 1 to 8 words).
  Matmul(vk::Device& device, ElementType a, ElementType b, MatmulTiles tiles = {}, MatmulKernel kernel = MatmulKernel::Auto,
         MatrixTiles matrix_tiles = kAutoMatrixTiles, VectorTiles vector_tiles = {});

  // Records one dispatch; checks that every operand fits its range.
  void record(vk::CommandStream& stream, const MatmulArgs& args) const;
  // The kernel a call runs: the one asked for, or what it falls back to for this shape and alignment.
  MatmulKernel kernel_for_call(const MatmulArgs& args) const;
  // The pipeline it dispatches (for its compiled code's statistics, vk/pipeline_statistics.hpp).
  const vk::Pipeline& pipeline_for_call(const MatmulArgs& args) const { return *plan(args).pipeline; }
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
  // matvec.comp for `rows` rows with the fused steps `steps` asks for.
  const vk::Pipeline& vector_pipeline(uint32_t rows, const MatmulArgs& steps) const;
  // matmul_coopmat.comp (or its emulation) in tiling `t`.
  const vk::Pipeline& matrix_pipeline(const MatrixTiles& t) const;

  ElementType a_, b_;
  MatmulTiles tiles_;
  MatrixTiles matrix_tiles_;
  MatmulKernel kernel_;
  const vk::Pipeline* pipeline_;
  const vk::Pipeline* regs_block_ = nullptr;  // Registers: kRegsRows x kRegsCols per invocation
  const vk::Pipeline* regs_row_ = nullptr;    // Registers for one row (decode)
  const vk::Pipeline* lanes_ = nullptr;       // Lanes: kLanesRows x 8 * kLanesCols per workgroup
  bool vector_ = false;  // matvec.comp takes calls of 1..kMaxVectorRows rows
  vk::Device* device_;                    // for the vector kernel's fused variants, made on first use
  std::optional<vk::KernelSource> vector_source_;
  VectorTiles vector_tiles_;
  const vk::Pipeline* matrix_ = nullptr;      // matmul_coopmat.comp (or its emulation), when used
  std::optional<vk::KernelSource> matrix_source_;  // its source, for the small tiling (made on first use)
  uint32_t matrix_min_rows_ = 1;              // for calls of at least this many rows
};

}  // namespace infini::ops
