#include "ops/matmul_tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>

#include "infini/error.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matrix_units.hpp"
#include "util/nmse.hpp"
#include "vk/command_stream.hpp"
#include "vk/device.hpp"

namespace infini::ops {

std::vector<MatmulKernel> piece_candidates(const vk::Capabilities& caps, ElementType b) {
  std::vector<MatmulKernel> out{MatmulKernel::Auto, MatmulKernel::Tiled, MatmulKernel::Registers};
  if (supports_lanes_matmul(caps)) out.push_back(MatmulKernel::Lanes);
  if (b == ElementType::F16 && caps.shader_float16) out.push_back(MatmulKernel::TiledHalf);
  if (missing_matrix_units(caps).empty() && matrix_matmul_types(ElementType::F32, b)) out.push_back(MatmulKernel::Matrix);
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

MatmulKernel choose_kernel(std::span<const CandidateTiming> timings) {
  const CandidateTiming* best = nullptr;
  for (const CandidateTiming& t : timings)
    if (t.correct && (!best || t.seconds < best->seconds)) best = &t;
  return best ? best->kernel : MatmulKernel::Auto;
}


std::vector<CandidateTiming> time_piece_candidates(vk::Device& device, ElementType b, const vk::BufferRange& weight,
                                                   uint32_t n, uint32_t k, uint32_t rows, int repeats) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(size_t(rows) * k);
  for (float& x : a) x = uniform(rng);
  const vk::Buffer a_buf = upload_tensor(device, a, ElementType::F32, "tuning A");
  vk::Buffer c_buf(device, uint64_t(rows) * n * 4, vk::MemoryUse::DeviceLocal, "tuning C");
  const MatmulArgs args{rows, n, k, vk::BufferRange::whole(a_buf), weight, vk::BufferRange::whole(c_buf)};
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

  // What the rule (Auto) runs for many rows is measured once, as Auto.
  const MatmulKernel rule = Matmul(device, ElementType::F32, b).kernel();
  std::vector<CandidateTiming> out;
  double best = INFINITY;  // the fastest correct median so far
  for (const MatmulKernel kernel : piece_candidates(device.caps(), b)) {
    if (kernel != MatmulKernel::Auto && kernel == rule) continue;
    CandidateTiming t{kernel, INFINITY, INFINITY, false};
    try {
      const bool is_reference = kernel == MatmulKernel::Tiled;  // its first run was the reference's
      std::optional<Matmul> made;
      if (!is_reference) made.emplace(device, ElementType::F32, b, MatmulTiles{}, kernel);
      const Matmul& mm = is_reference ? reference : *made;
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
      t.correct = t.nmse <= candidate_tolerance(kernel);
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
    if (t.correct) best = std::min(best, t.seconds);
    out.push_back(t);
  }
  return out;
}

}  // namespace infini::ops
