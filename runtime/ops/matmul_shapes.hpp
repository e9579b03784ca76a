#pragma once
// The matmul's kernels and tilings as values: what they are, what they are named on the command
// line and in the bench's records, and which names no device takes. The op itself: ops/matmul.hpp.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace infini::ops {

struct MatmulTiles {
  uint32_t bm = 0, bn = 0, bk = 0;  // workgroup tile
  uint32_t tm = 0, tn = 0;          // per-invocation micro-tile
  uint32_t workgroup_size() const noexcept { return tn && tm ? (bm / tm) * (bn / tn) : 0; }
  std::string name() const;  // "64x64x16x4x4" (BM x BN x BK x TM x TN), "default" for zeros
  bool operator==(const MatmulTiles&) const = default;
};
// Parses a name as MatmulTiles::name writes it (five positive numbers); nullopt for anything else.
// Whether a device takes the tiles is checked where the kernel is made (ops::Matmul).
std::optional<MatmulTiles> matmul_tiles_named(std::string_view name);

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

// What no device takes for the vector kernel (vector_tiles_named refuses these names).
bool vector_shape_possible(const VectorTiles& t);

}  // namespace infini::ops
