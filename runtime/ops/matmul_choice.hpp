#pragma once
// What a weight's prefill pieces run, as the autotuner chooses it (ops/matmul_tuner.hpp): a kernel,
// its tiling, and how many slices of k it sums in parallel (split-K). Named for the bench, the
// tuning cache and `infini devices`: "lanes", "tiled:128x64x16x8x4", "coopmat:2x2x4x4x32x2",
// "tiled:64x64x16x4x4/split4".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ops/matmul_shapes.hpp"

namespace infini::ops {

// The most slices of k a call may be split into.
inline constexpr uint32_t kMaxSplitK = 16;

struct MatmulChoice {
  MatmulKernel kernel = MatmulKernel::Auto;
  // Tiled and TiledHalf: the workgroup's tile (zeros: the device's default, default_matmul_tiles).
  MatmulTiles tiles{};
  // Matrix and MatrixEmulated: the fragments' tiling.
  MatrixTiles matrix = kAutoMatrixTiles;
  // Tiled, TiledHalf, Matrix and MatrixEmulated: slices of k summed by separate workgroups into
  // partial products that a second pass adds up in order (deterministic), for products whose
  // grid of tiles is too small to fill a GPU (a K/V projection of a few hundred rows). 1: none.
  uint32_t split_k = 1;

  // Whether the kernel takes a tiling (tiles or matrix) and split-K at all.
  bool tiled_family() const noexcept { return kernel == MatmulKernel::Tiled || kernel == MatmulKernel::TiledHalf; }
  bool matrix_family() const noexcept { return kernel == MatmulKernel::Matrix || kernel == MatmulKernel::MatrixEmulated; }
  std::string name() const;
  bool operator==(const MatmulChoice&) const = default;
};

// Parses what MatmulChoice::name writes; nullopt for anything else (a tiling or split on a kernel
// that takes none, a split of 0 or above kMaxSplitK).
std::optional<MatmulChoice> matmul_choice_named(std::string_view name);

}  // namespace infini::ops
