#include "ops/matmul_shapes.hpp"

#include <utility>

namespace infini::ops {

namespace {
constexpr std::pair<MatmulKernel, std::string_view> kKernelNames[] = {
    {MatmulKernel::Auto, "auto"}, {MatmulKernel::Tiled, "tiled"}, {MatmulKernel::TiledHalf, "tiled-half"},
    {MatmulKernel::Registers, "registers"},
    {MatmulKernel::Lanes, "lanes"}, {MatmulKernel::Vector, "vector"}, {MatmulKernel::VectorShared, "vector-shared"},
    {MatmulKernel::Matrix, "coopmat"}, {MatmulKernel::MatrixEmulated, "coopmat-emulated"}};
}  // namespace

std::string_view matmul_kernel_name(MatmulKernel kernel) {
  for (const auto& [k, name] : kKernelNames)
    if (k == kernel) return name;
  return "?";
}

std::string MatrixTiles::name() const {
  if (*this == kAutoMatrixTiles) return "auto";
  std::string name = std::to_string(warps_m) + "x" + std::to_string(warps_n) + "x" + std::to_string(frags_m) + "x" +
                     std::to_string(frags_n) + "x" + std::to_string(bk);
  if (stages > 1) {
    name += 'x';
    name += std::to_string(stages);
  }
  return name;
}

namespace {
// N positive numbers of at most 4 digits separated by 'x' ("2x2x4x4x32"), or nullopt.
template <size_t N>
std::optional<std::array<uint32_t, N>> numbers_by_x(std::string_view name) {
  std::array<uint32_t, N> v{};
  size_t at = 0;
  for (size_t i = 0; i < N; ++i) {
    const size_t end = i + 1 < N ? name.find('x', at) : name.size();
    if (end == std::string_view::npos || end == at || end - at > 4) return std::nullopt;
    uint32_t x = 0;
    for (char c : name.substr(at, end - at)) {
      if (c < '0' || c > '9') return std::nullopt;
      x = x * 10 + uint32_t(c - '0');
    }
    if (x == 0) return std::nullopt;
    v[i] = x;
    at = end + 1;
  }
  return v;
}

}  // namespace

// What no device takes for the vector kernel: a workgroup that is not a power of two from 16 (its
// shared-memory tree), more than 4 columns (8 rows x 4 columns x 2 + 8 sums per 4 invocations stay
// within 32 KiB at 256 invocations), more than 8 words in flight (registers: a block format's
// chunks hold 9 words each).
bool vector_shape_possible(const VectorTiles& t) {
  return t.workgroup >= 16 && (t.workgroup & (t.workgroup - 1)) == 0 && t.cols >= 1 && t.cols <= 4 && t.words <= 8;
}

std::string MatmulTiles::name() const {
  if (*this == MatmulTiles{}) return "default";
  return std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) + "x" + std::to_string(tm) + "x" +
         std::to_string(tn);
}

std::optional<MatmulTiles> matmul_tiles_named(std::string_view name) {
  if (name == "default") return MatmulTiles{};
  if (const auto v = numbers_by_x<5>(name)) return MatmulTiles{(*v)[0], (*v)[1], (*v)[2], (*v)[3], (*v)[4]};
  return std::nullopt;
}

std::optional<MatrixTiles> matrix_tiles_named(std::string_view name) {
  if (name == "auto") return kAutoMatrixTiles;
  if (const auto v = numbers_by_x<5>(name)) return MatrixTiles{(*v)[0], (*v)[1], (*v)[2], (*v)[3], (*v)[4]};
  // One buffer is named without the sixth number, so names round-trip.
  if (const auto v = numbers_by_x<6>(name); v && (*v)[5] == 2)
    return MatrixTiles{(*v)[0], (*v)[1], (*v)[2], (*v)[3], (*v)[4], false, 2};
  return std::nullopt;
}

std::string VectorTiles::name() const {
  if (workgroup == 0 && cols == 0 && words == 0) return "auto";
  std::string name = std::to_string(workgroup) + "x" + std::to_string(cols);
  if (words > 1) name += 'x' + std::to_string(words);
  return name;
}

std::optional<VectorTiles> vector_tiles_named(std::string_view name) {
  if (name == "auto") return VectorTiles{};
  VectorTiles t;
  if (const auto two = numbers_by_x<2>(name)) t = {(*two)[0], (*two)[1], 1};
  else if (const auto three = numbers_by_x<3>(name); three && (*three)[2] > 1) t = {(*three)[0], (*three)[1], (*three)[2]};
  else return std::nullopt;  // one word is named without it ("128x2", not "128x2x1"), so names round-trip
  if (!vector_shape_possible(t)) return std::nullopt;
  return t;
}

std::optional<MatmulKernel> matmul_kernel_named(std::string_view name) {
  for (const auto& [k, n] : kKernelNames)
    if (n == name) return k;
  return std::nullopt;
}

}  // namespace infini::ops
