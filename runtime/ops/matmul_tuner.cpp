#include "ops/matmul_tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <random>

#include "infini/error.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matrix_units.hpp"
#include "util/nmse.hpp"
#include "vk/command_stream.hpp"
#include "vk/device.hpp"

namespace infini::ops {
namespace {

// The tilings tried besides a family's default: taller, wider and larger tiles (more reuse per
// load, fewer workgroups), smaller ones (more workgroups for small products) and a deeper k step.
constexpr MatmulTiles kTiledVariants[] = {
    {128, 64, 16, 8, 4}, {64, 128, 16, 4, 8}, {128, 128, 16, 8, 8}, {32, 32, 16, 4, 4}, {64, 64, 32, 4, 4}};
// For the matrix units: two tile buffers, 8 warps in either direction (128 x 256 and 256 x 128 of
// C per workgroup, as public kernels that do well use), the small tiles for every call, a deeper
// k step.
constexpr MatrixTiles kMatrixVariants[] = {
    {2, 2, 4, 4, 32, false, 2}, {2, 4, 4, 4, 32}, {4, 2, 4, 4, 32}, kSmallMatrixTiles, {2, 2, 4, 4, 64}};
constexpr uint32_t kSplits[] = {2, 4, 8};
constexpr uint32_t kMinSliceK = 256;

uint64_t grid(uint32_t rows, uint32_t n, uint32_t bm, uint32_t bn) {
  return uint64_t((n + bn - 1) / bn) * ((rows + bm - 1) / bm);
}

}  // namespace

std::vector<MatmulChoice> piece_candidates(const vk::Capabilities& caps, ElementType b) {
  std::vector<MatmulChoice> out{{MatmulKernel::Auto}, {MatmulKernel::Tiled}, {MatmulKernel::Registers}};
  if (supports_lanes_matmul(caps)) out.push_back({MatmulKernel::Lanes});
  if (b == ElementType::F16 && caps.shader_float16) out.push_back({MatmulKernel::TiledHalf});
  if (missing_matrix_units(caps).empty() && matrix_matmul_types(ElementType::F32, b)) out.push_back({MatmulKernel::Matrix});
  return out;
}

std::vector<MatmulChoice> tiling_variants(const vk::Capabilities& caps, MatmulKernel family, uint32_t n, uint32_t k,
                                          uint32_t rows) {
  std::vector<MatmulChoice> out;
  uint64_t tiles = 0;  // of the default tiling, for this product
  if (family == MatmulKernel::Tiled || family == MatmulKernel::TiledHalf) {
    for (const MatmulTiles& t : kTiledVariants)
      if (t != default_matmul_tiles(caps) && tiles_misfit(caps, t, family == MatmulKernel::TiledHalf).empty())
        out.push_back({family, t});
    const MatmulTiles d = default_matmul_tiles(caps);
    tiles = grid(rows, n, d.bm, d.bn);
  } else if (family == MatmulKernel::Matrix || family == MatmulKernel::MatrixEmulated) {
    for (const MatrixTiles& t : kMatrixVariants)
      if (t.workgroup_size() <= caps.max_workgroup_invocations) out.push_back({family, {}, t});
    // The default adapts: a grid too small for its tiles runs the small ones.
    const MatrixTiles& d = kAutoMatrixTiles;
    tiles = grid(rows, n, d.bm(), d.bn());
    if (tiles < kMatrixFillWorkgroups) tiles = grid(rows, n, kSmallMatrixTiles.bm(), kSmallMatrixTiles.bn());
  } else {
    return out;
  }
  if (tiles < kMatrixFillWorkgroups)
    for (const uint32_t s : kSplits)
      if (k / s >= kMinSliceK) out.push_back({family, {}, kAutoMatrixTiles, s});
  return out;
}

double candidate_tolerance(MatmulKernel kernel) {
  switch (kernel) {
    case MatmulKernel::TiledHalf:
    case MatmulKernel::Matrix:
    case MatmulKernel::MatrixEmulated: return 1e-4;
    default: return 1e-9;
  }
}

MatmulChoice choose_kernel(std::span<const CandidateTiming> timings) {
  const CandidateTiming *best = nullptr, *rule = nullptr;
  for (const CandidateTiming& t : timings) {
    if (t.correct && (!best || t.seconds < best->seconds)) best = &t;
    if (t.correct && t.choice == MatmulChoice{}) rule = &t;
  }
  if (!best || (rule && best->seconds * (1 + kRuleMargin) > rule->seconds)) return MatmulChoice{};
  return best->choice;
}

std::vector<CandidateTiming> time_piece_candidates(vk::Device& device, ElementType b, const vk::BufferRange& weight,
                                                   uint32_t n, uint32_t k, uint32_t rows, int repeats) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(size_t(rows) * k);
  for (float& x : a) x = uniform(rng);
  const vk::Buffer a_buf = upload_tensor(device, a, ElementType::F32, "tuning A");
  vk::Buffer c_buf(device, uint64_t(rows) * n * 4, vk::MemoryUse::DeviceLocal, "tuning C");
  MatmulArgs args{rows, n, k, vk::BufferRange::whole(a_buf), weight, vk::BufferRange::whole(c_buf)};
  std::unique_ptr<vk::Buffer> scratch;  // for split candidates, made on the first
  vk::CommandStream stream(device);
  auto run = [&](const Matmul& mm) {
    stream.begin();
    mm.record(stream, args);
    stream.end();
    const auto t0 = std::chrono::steady_clock::now();
    stream.submit_and_wait();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const Matmul reference(device, ElementType::F32, b, {}, MatmulKernel::Tiled);
  const double reference_s = run(reference);
  const std::vector<float> want = download_floats(c_buf, size_t(rows) * n);

  std::vector<CandidateTiming> out;
  double best = INFINITY;  // the fastest correct median so far
  auto measure = [&](const MatmulChoice& choice) {
    CandidateTiming t{choice, INFINITY, INFINITY, false};
    try {
      const bool is_reference = choice == MatmulChoice{MatmulKernel::Tiled};  // its first run was the reference's
      std::optional<Matmul> made;
      if (!is_reference) made.emplace(device, ElementType::F32, b, choice);
      const Matmul& mm = is_reference ? reference : *made;
      if (const uint64_t floats = mm.split_scratch_floats(rows, n); floats > 0) {
        if (!scratch || scratch->size() < floats * 4)
          scratch = std::make_unique<vk::Buffer>(device, floats * 4, vk::MemoryUse::DeviceLocal, "tuning split");
        args.split_scratch = vk::BufferRange::whole(*scratch);
      }
      if (is_reference) {
        t.seconds = reference_s;
        t.nmse = 0;
      } else {
        stream.begin();
        stream.fill(vk::BufferRange::whole(c_buf), 0x7fc00000u);  // NaN: a kernel that writes nothing fails
        stream.end();
        stream.submit_and_wait();
        t.seconds = run(mm);  // the first run: its output, and a first time
        const std::vector<float> got = download_floats(c_buf, size_t(rows) * n);
        t.nmse = nmse(std::span<const float>(got), std::span<const float>(want));
      }
      t.correct = t.nmse <= candidate_tolerance(choice.kernel);
      // Repeats only for a correct candidate that might win: one three times slower than the best
      // so far cannot (on lavapipe the tiled kernel takes seconds on a vocabulary's head).
      if (t.correct && t.seconds < 3 * best) {
        std::vector<double> times;
        for (int r = 0; r < std::max(1, repeats); ++r) times.push_back(run(mm));
        std::nth_element(times.begin(), times.begin() + ptrdiff_t(times.size() / 2), times.end());
        t.seconds = times[times.size() / 2];
      }
    } catch (const Error&) {  // a kernel this shape or device cannot take is not a candidate
      t.correct = false;
    }
    args.split_scratch = {};
    if (t.correct) best = std::min(best, t.seconds);
    out.push_back(t);
  };

  // What the rule (Auto) runs for many rows is measured once, as Auto.
  const MatmulKernel rule = Matmul(device, ElementType::F32, b).kernel();
  for (const MatmulChoice& choice : piece_candidates(device.caps(), b))
    if (choice.kernel == MatmulKernel::Auto || choice.kernel != rule) measure(choice);
  // The families within reach of the fastest, in their other tilings and split over k.
  const std::vector<CandidateTiming> defaults = out;
  for (const CandidateTiming& d : defaults) {
    if (!d.correct || d.seconds > kExploreRatio * best) continue;
    const MatmulKernel family = d.choice.kernel == MatmulKernel::Auto ? rule : d.choice.kernel;
    for (const MatmulChoice& v : tiling_variants(device.caps(), family, n, k, rows)) measure(v);
  }
  return out;
}

}  // namespace infini::ops
