// The transformer-block kernels (embedding, RMSNorm, residual add, SwiGLU) against float64 loops,
// with odd sizes and guard words after every output that must come back untouched.
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "gpu_fixture.hpp"
#include "ops/elementwise.hpp"
#include "ops/embedding.hpp"
#include "ops/host_tensor.hpp"
#include "ops/rms_norm.hpp"
#include "util/nmse.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {

constexpr size_t kGuard = 64;
constexpr float kSentinel = -12345.0f;

// A device buffer holding `values` followed by kGuard sentinel words.
vk::Buffer guarded(vk::Device& d, const std::vector<float>& values) {
  std::vector<float> all(values);
  all.insert(all.end(), kGuard, kSentinel);
  return ops::upload_tensor(d, all, ElementType::F32, "guarded");
}

bool guard_intact(const vk::Buffer& b, size_t count) {
  for (float v : ops::download_floats(b, kGuard, count))
    if (v != kSentinel) return false;
  return true;
}

double err(const std::vector<float>& got, const std::vector<double>& want) {
  return nmse(std::span<const float>(got), std::span<const double>(want));
}

void run(vk::Device& d, const std::function<void(vk::CommandStream&)>& record) {
  vk::CommandStream s(d);
  s.begin();
  record(s);
  s.end();
  s.submit_and_wait();
}

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
  run(dev(), [&](vk::CommandStream& s) {
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

TEST_CASE_METHOD(GpuTest, "residual add and SwiGLU match float64", "[gpu][ops]") {
  const uint32_t count = GENERATE(1u, 255u, 257u, 70001u);
  const auto a = random_floats(count, count, -8.0f, 8.0f);
  const auto b = random_floats(count, count + 7);
  for (ops::ElementwiseOp op : {ops::ElementwiseOp::Add, ops::ElementwiseOp::SwiGlu}) {
    vk::Buffer da = guarded(dev(), a);
    vk::Buffer db = ops::upload_tensor(dev(), b, ElementType::F32, "b");
    ops::Elementwise kernel(dev(), op);
    run(dev(), [&](vk::CommandStream& s) { kernel.record(s, vk::BufferRange::whole(da), vk::BufferRange::whole(db), count); });
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
  run(dev(), [&](vk::CommandStream& s) {
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

TEST_CASE_METHOD(GpuTest, "embedding gathers f32 and f16 rows exactly", "[gpu][ops]") {
  const ElementType type = GENERATE(ElementType::F32, ElementType::F16);
  const uint32_t vocab = 37, dim = 13;  // odd dim: f16 rows start mid-word
  const auto table = random_floats(size_t(vocab) * dim, 3);
  const std::vector<uint32_t> ids = {0, 36, 5, 5, 17, 1, 35};
  vk::Buffer dt = ops::upload_tensor(dev(), table, type, "table");
  vk::Buffer di(dev(), ids.size() * 4, vk::MemoryUse::DeviceLocal, "ids");
  vk::upload(di, std::span<const uint32_t>(ids));
  vk::Buffer dout = guarded(dev(), std::vector<float>(ids.size() * dim, 0.0f));
  ops::Embedding embed(dev(), type);
  run(dev(), [&](vk::CommandStream& s) {
    embed.record(s, vk::BufferRange::whole(di), vk::BufferRange::whole(dt), vk::BufferRange::whole(dout),
                 uint32_t(ids.size()), dim);
  });
  const std::vector<double> stored = ops::as_stored(table, type);
  std::vector<double> want;
  for (uint32_t id : ids) want.insert(want.end(), stored.begin() + id * dim, stored.begin() + (id + 1) * dim);
  CHECK(err(ops::download_floats(dout, want.size()), want) == 0.0);
  CHECK(guard_intact(dout, want.size()));
}

}  // namespace
}  // namespace infini::test
