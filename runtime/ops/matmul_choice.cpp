#include "ops/matmul_choice.hpp"

namespace infini::ops {

std::string MatmulChoice::name() const {
  std::string out(matmul_kernel_name(kernel));
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) about ":" + std::string.
  if (tiled_family() && tiles != MatmulTiles{}) out.append(":").append(tiles.name());
  if (matrix_family() && matrix != kAutoMatrixTiles) out.append(":").append(matrix.name());
  if (split_k > 1) out.append("/split").append(std::to_string(split_k));
  return out;
}

std::optional<MatmulChoice> matmul_choice_named(std::string_view name) {
  MatmulChoice c;
  if (const size_t slash = name.find("/split"); slash != std::string_view::npos) {
    const std::string_view digits = name.substr(slash + 6);
    if (digits.empty() || digits.size() > 2) return std::nullopt;
    uint32_t split = 0;
    for (char d : digits) {
      if (d < '0' || d > '9') return std::nullopt;
      split = split * 10 + uint32_t(d - '0');
    }
    // 1 is written without a suffix, so names round-trip.
    if (split < 2 || split > kMaxSplitK) return std::nullopt;
    c.split_k = split;
    name = name.substr(0, slash);
  }
  const size_t colon = name.find(':');
  const auto kernel = matmul_kernel_named(name.substr(0, colon));
  if (!kernel) return std::nullopt;
  c.kernel = *kernel;
  if (c.split_k > 1 && !c.tiled_family() && !c.matrix_family()) return std::nullopt;
  if (colon == std::string_view::npos) return c;
  const std::string_view tiling = name.substr(colon + 1);
  if (c.tiled_family()) {
    const auto t = matmul_tiles_named(tiling);
    if (!t || *t == MatmulTiles{}) return std::nullopt;  // the default is written without a tiling
    c.tiles = *t;
  } else if (c.matrix_family()) {
    const auto t = matrix_tiles_named(tiling);
    if (!t || *t == kAutoMatrixTiles) return std::nullopt;
    c.matrix = *t;
  } else {
    return std::nullopt;
  }
  return c;
}

}  // namespace infini::ops
