// The element-wise steps (residual add, SwiGLU, a bias per row) against float64 loops, at odd
// sizes, with guard words after the output.
#include <cmath>
#include <vector>

#include "support/gpu_fixture.hpp"
#include "support/guarded_output.hpp"
#include "ops/elementwise.hpp"
#include "ops/host_tensor.hpp"

namespace infini::test {
namespace {

TEST_CASE_METHOD(GpuTest, "residual add and SwiGLU match float64", "[gpu][ops]") {
  const uint32_t count = GENERATE(1u, 255u, 257u, 70001u);
  const auto a = random_floats(count, count, -8.0f, 8.0f);
  const auto b = random_floats(count, count + 7);
  for (ops::ElementwiseOp op : {ops::ElementwiseOp::Add, ops::ElementwiseOp::SwiGlu}) {
    vk::Buffer da = guarded(dev(), a);
    vk::Buffer db = ops::upload_tensor(dev(), b, ElementType::F32, "b");
    ops::Elementwise kernel(dev(), op);
    run_once(dev(), [&](vk::CommandStream& s) { kernel.record(s, vk::BufferRange::whole(da), vk::BufferRange::whole(db), count); });
    std::vector<double> want(count);
    for (uint32_t i = 0; i < count; ++i) {
      const double g = a[i];
      want[i] = op == ops::ElementwiseOp::Add ? g + b[i] : g / (1.0 + std::exp(-g)) * b[i];
    }
    INFO("count " << count << (op == ops::ElementwiseOp::Add ? " add" : " swiglu"));
    CHECK(err(ops::download_floats(da, count), want) <= 1e-12);
    CHECK(guard_intact(da, count));
  }
}

TEST_CASE_METHOD(GpuTest, "a bias added to every row matches float64", "[gpu][ops]") {
  const uint32_t width = GENERATE(1u, 7u, 256u), rows = GENERATE(1u, 3u, 301u);
  const uint32_t count = width * rows;
  const auto a = random_floats(count, count, -8.0f, 8.0f);
  const auto b = random_floats(width, width + 5);
  vk::Buffer da = guarded(dev(), a);
  vk::Buffer db = ops::upload_tensor(dev(), b, ElementType::F32, "bias");
  ops::Elementwise kernel(dev(), ops::ElementwiseOp::AddRows);
  run_once(dev(), [&](vk::CommandStream& s) {
    kernel.record(s, vk::BufferRange::whole(da), vk::BufferRange::whole(db), count, width);
  });
  std::vector<double> want(count);
  for (uint32_t i = 0; i < count; ++i) want[i] = double(a[i]) + b[i % width];
  INFO(rows << " rows of " << width);
  CHECK(err(ops::download_floats(da, count), want) <= 1e-12);
  CHECK(guard_intact(da, count));
  vk::CommandStream stream(dev());
  stream.begin();
  CHECK_THROWS_WITH(kernel.record(stream, vk::BufferRange::whole(da), vk::BufferRange::whole(db), 7, 2),
                    Catch::Contains("not whole rows"));
  stream.end();
}


}  // namespace
}  // namespace infini::test
