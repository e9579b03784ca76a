#include "support/matmul_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "support/gpu_fixture.hpp"
#include "ops/host_tensor.hpp"
#include "reference/matmul_reference.hpp"
#include "util/half.hpp"
#include "util/nmse.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {
constexpr uint32_t kSentinel = 0x7fc0dead;  // a NaN no kernel computes

std::vector<double> rounded_to_f16(std::vector<double> values) {
  for (double& v : values) v = half_to_float(float_to_half(static_cast<float>(v)));
  return values;
}
}  // namespace

MatmulResult run_matmul(uint32_t m, uint32_t n, uint32_t k, ElementType ta, ElementType tb, ops::MatmulTiles tiles,
                        uint32_t seed, ops::MatmulKernel kernel, const MatmulLayout& layout,
                        ops::MatrixTiles matrix_tiles, ops::VectorTiles vector_tiles) {
  vk::Device& dev = device();
  const auto a = random_floats(size_t(m) * k, seed);
  const auto b = random_floats(size_t(n) * k, seed + 1);
  vk::Buffer da = ops::upload_tensor(dev, a, ta, "A");
  vk::Buffer db = ops::upload_tensor(dev, b, tb, "B");

  const uint32_t ldc = n + layout.row_gap, guard = layout.guard;
  const size_t c_elems = guard + size_t(m) * ldc + guard;
  std::vector<uint32_t> init(c_elems, kSentinel);
  const auto c0 = random_floats(size_t(m) * n, seed + 2);  // C's values before an accumulating call
  if (layout.accumulate)
    for (size_t r = 0; r < m; ++r)
      for (size_t c = 0; c < n; ++c) std::memcpy(&init[guard + r * ldc + c], &c0[r * n + c], 4);
  vk::Buffer dc(dev, c_elems * 4, vk::MemoryUse::DeviceLocal, "C");
  vk::upload(dc, std::span<const uint32_t>(init));

  // The fused steps' operands (unused ones stay small and unbound).
  const auto norm_w = random_floats(k, seed + 3, 0.5f, 1.5f);
  const auto u = random_floats(layout.glu ? size_t(n) * k : 1, seed + 4);
  const auto bias = random_floats(layout.bias_offset + n, seed + 5);
  vk::Buffer dnorm = ops::upload_tensor(dev, norm_w, ElementType::F32, "norm weights");
  vk::Buffer du = ops::upload_tensor(dev, u, layout.glu ? tb : ElementType::F32, "U");
  vk::Buffer dbias = ops::upload_tensor(dev, bias, ElementType::F32, "bias");

  const ops::Matmul matmul = layout.split_k > 1
                                 ? ops::Matmul(dev, ta, tb, ops::MatmulChoice{kernel, tiles, matrix_tiles, layout.split_k})
                                 : ops::Matmul(dev, ta, tb, tiles, kernel, matrix_tiles, vector_tiles);
  const uint64_t split_floats = matmul.split_scratch_floats(m, n);
  vk::Buffer dsplit(dev, std::max<uint64_t>(split_floats, 1) * 4, vk::MemoryUse::DeviceLocal, "split-k partials");
  vk::upload(dsplit, std::span<const uint32_t>(std::vector<uint32_t>(std::max<uint64_t>(split_floats, 1), kSentinel)));
  vk::CommandStream stream(dev);
  stream.begin();
  ops::MatmulArgs args{m, n, k, vk::BufferRange::whole(da), vk::BufferRange::whole(db), vk::BufferRange::whole(dc)};
  args.ldc = ldc;
  args.c_offset = guard;
  args.accumulate = layout.accumulate;
  if (split_floats > 0) args.split_scratch = vk::BufferRange::whole(dsplit);
  if (layout.norm_eps > 0) {
    args.a_norm = vk::BufferRange::whole(dnorm);
    args.norm_eps = layout.norm_eps;
  }
  if (layout.glu) args.glu_up = vk::BufferRange::whole(du);
  if (layout.bias) {
    args.bias = vk::BufferRange::whole(dbias);
    args.bias_offset = layout.bias_offset;
  }
  matmul.record(stream, args);
  stream.end();
  stream.submit_and_wait();

  std::vector<uint32_t> raw(c_elems);
  vk::download(dc, std::span<uint32_t>(raw));
  std::vector<float> got;
  size_t violations = 0;
  for (size_t i = 0; i < c_elems; ++i) {
    const bool inside = i >= guard && i < guard + size_t(m) * ldc && (i - guard) % ldc < n;
    if (inside) {
      float f;
      std::memcpy(&f, &raw[i], 4);
      got.push_back(f);
    } else if (raw[i] != kSentinel) {
      ++violations;
    }
  }
  std::vector<double> sa = ops::as_stored(a, ta), sb = ops::as_stored(b, tb);
  if (layout.f16_operands) {
    sa = rounded_to_f16(std::move(sa));
    sb = rounded_to_f16(std::move(sb));
  }
  if (layout.norm_eps > 0)
    for (size_t r = 0; r < m; ++r) {
      double squares = 0;
      for (size_t i = 0; i < k; ++i) squares += sa[r * k + i] * sa[r * k + i];
      const double scale = 1.0 / std::sqrt(squares / k + double(layout.norm_eps));
      for (size_t i = 0; i < k; ++i) sa[r * k + i] *= scale * double(norm_w[i]);
    }
  auto want = ops::matmul_reference(sa, sb, m, n, k);
  if (layout.bias)
    for (size_t r = 0; r < m; ++r)
      for (size_t c = 0; c < n; ++c) want[r * n + c] += bias[layout.bias_offset + c];
  if (layout.glu) {
    const auto up = ops::matmul_reference(sa, ops::as_stored(u, tb), m, n, k);
    for (size_t i = 0; i < want.size(); ++i) want[i] = want[i] / (1.0 + std::exp(-want[i])) * up[i];
  }
  if (layout.accumulate)
    for (size_t i = 0; i < want.size(); ++i) want[i] += c0[i];
  std::vector<uint32_t> partials(std::max<uint64_t>(split_floats, 1));
  vk::download(dsplit, std::span<uint32_t>(partials));
  const bool split_ran = split_floats > 0 && partials.front() != kSentinel;
  return {nmse(std::span<const float>(got), std::span<const double>(want)), violations, split_ran};
}

}  // namespace infini::test
