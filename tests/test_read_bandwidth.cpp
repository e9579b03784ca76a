// The read-bandwidth probe reads every 16-byte word of its input exactly once, whatever the grid:
// the sums it writes add up to the input's exact sum (small integers, so float sums are exact).
#include <numeric>

#include "support/gpu_fixture.hpp"
#include "ops/host_tensor.hpp"
#include "ops/read_bandwidth.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {

TEST_CASE_METHOD(GpuTest, "read-bandwidth probe reads every word once", "[gpu][bandwidth]") {
  vk::Device& dev = device();
  const bool contiguous = GENERATE(false, true);
  ops::ReadBandwidth probe(dev, contiguous, 64);
  const uint32_t words = GENERATE(1u, 63u, 64u * 3 + 5, 10007u);
  const uint32_t workgroups = GENERATE(1u, 3u);
  INFO(words << " words, " << workgroups << " workgroups" << (contiguous ? ", contiguous" : ""));
  std::vector<float> in(size_t(words) * 4);
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(int(i % 7) - 3 + int(i % 2));
  vk::Buffer din = ops::upload_tensor(dev, in, ElementType::F32, "in");
  vk::Buffer dout(dev, uint64_t(workgroups) * probe.workgroup_size() * 4, vk::MemoryUse::DeviceLocal, "out");
  vk::CommandStream stream(dev);
  stream.begin();
  probe.record(stream, vk::BufferRange::whole(din), vk::BufferRange::whole(dout), workgroups);
  stream.end();
  stream.submit_and_wait();
  const std::vector<float> sums = ops::download_floats(dout, size_t(workgroups) * probe.workgroup_size());
  const double want = std::accumulate(in.begin(), in.end(), 0.0);
  const double got = std::accumulate(sums.begin(), sums.end(), 0.0);
  CHECK(got == want);
  vk::Buffer odd(dev, 20, vk::MemoryUse::DeviceLocal, "odd");
  stream.begin();
  CHECK_THROWS_WITH(probe.record(stream, vk::BufferRange::whole(odd), vk::BufferRange::whole(dout), workgroups),
                    Catch::Contains("multiple of 16"));
  stream.end();
}

}  // namespace
}  // namespace infini::test
