// The peak-FMA probe computes what its recurrence says (so the compiler cannot have removed the
// work being timed).
#include <cmath>

#include "support/gpu_fixture.hpp"
#include "ops/host_tensor.hpp"
#include "ops/peak_fma.hpp"

namespace infini::test {
namespace {

// The shader's eight vec4 chains c <- c * 0.999999 + 1e-6, summed, in double.
double peak_fma_reference(uint32_t invocation, uint32_t iterations) {
  const double seed = double(float(invocation) * 1e-7f);
  double total = 0;
  for (int chain = 0; chain < 8; ++chain) {
    double c = double(float(seed) + float(0.1 * chain));
    for (uint32_t i = 0; i < iterations; ++i) c = c * double(0.999999f) + double(1e-6f);
    total += 4 * c;
  }
  return total;
}

TEST_CASE_METHOD(GpuTest, "peak FMA probe computes its recurrence", "[gpu][peak]") {
  vk::Device& dev = device();
  ops::PeakFma probe(dev, 64);
  const uint32_t groups = 3, iterations = 1000;
  vk::Buffer out(dev, groups * probe.workgroup_size() * 4, vk::MemoryUse::DeviceLocal, "out");
  vk::CommandStream stream(dev);
  stream.begin();
  probe.record(stream, vk::BufferRange::whole(out), groups, iterations);
  stream.end();
  stream.submit_and_wait();
  const auto got = ops::download_floats(out, groups * probe.workgroup_size());
  for (uint32_t i = 0; i < got.size(); i += 37) {
    const double want = peak_fma_reference(i, iterations);
    INFO("invocation " << i);
    CHECK(std::abs(got[i] - want) <= 1e-4 * std::abs(want));
  }
  CHECK(probe.flops(groups, iterations) == 64.0 * probe.workgroup_size() * groups * iterations);
}

}  // namespace
}  // namespace infini::test
