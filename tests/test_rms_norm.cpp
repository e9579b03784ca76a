// RMSNorm against a float64 loop, at odd row lengths, with guard words after the output.
#include <cmath>
#include <vector>

#include "support/gpu_fixture.hpp"
#include "support/guarded_output.hpp"
#include "ops/host_tensor.hpp"
#include "ops/rms_norm.hpp"

namespace infini::test {
namespace {

TEST_CASE_METHOD(GpuTest, "rms_norm matches float64 for odd row lengths", "[gpu][ops]") {
  const uint32_t dim = GENERATE(1u, 63u, 64u, 1000u);
  const uint32_t rows = 5;
  const auto x = random_floats(size_t(rows) * dim, dim, -3.0f, 3.0f);
  const auto w = random_floats(dim, dim + 1);
  const float eps = 1e-5f;
  vk::Buffer dx = ops::upload_tensor(dev(), x, ElementType::F32, "x");
  vk::Buffer dw = ops::upload_tensor(dev(), w, ElementType::F32, "w");
  vk::Buffer dy = guarded(dev(), std::vector<float>(x.size(), 0.0f));
  ops::RmsNorm norm(dev());
  run_once(dev(), [&](vk::CommandStream& s) {
    norm.record(s, vk::BufferRange::whole(dx), vk::BufferRange::whole(dw), vk::BufferRange::whole(dy), rows, dim, eps);
  });
  std::vector<double> want(x.size());
  for (uint32_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (uint32_t c = 0; c < dim; ++c) ss += double(x[r * dim + c]) * x[r * dim + c];
    const double inv = 1.0 / std::sqrt(ss / dim + double(eps));
    for (uint32_t c = 0; c < dim; ++c) want[r * dim + c] = x[r * dim + c] * inv * w[c];
  }
  INFO("dim " << dim);
  CHECK(err(ops::download_floats(dy, x.size()), want) <= 1e-12);
  CHECK(guard_intact(dy, x.size()));
}

}  // namespace
}  // namespace infini::test
