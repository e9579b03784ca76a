// The driver's statistics of a kernel's compiled code (VK_KHR_pipeline_executable_properties):
// captured where the device offers them and they were asked for, nothing otherwise. The figures
// themselves are the driver's (register counts, spills, ...), so only their presence is checked.
#include <memory>

#include "support/gpu_fixture.hpp"
#include "ops/matmul.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_statistics.hpp"

namespace infini::test {
namespace {

TEST_CASE_METHOD(GpuTest, "pipeline statistics: a kernel's compiled code described where asked and offered", "[gpu]") {
  vk::DeviceOptions asked;
  asked.capture_statistics = true;
  const std::unique_ptr<vk::Device> device = open_second_device(asked);
  const ops::Matmul matmul(*device, ElementType::F32, ElementType::F16);
  const std::vector<vk::PipelineStatistic> stats =
      vk::pipeline_statistics(*device, matmul.pipeline_for_call({1, 64, 64}));
  vk::DeviceOptions not_asked;
  not_asked.capture_statistics = false;
  const std::unique_ptr<vk::Device> plain = open_second_device(not_asked);
  const ops::Matmul plain_matmul(*plain, ElementType::F32, ElementType::F16);
  CHECK_FALSE(plain->captures_statistics());
  CHECK(vk::pipeline_statistics(*plain, plain_matmul.pipeline_for_call({1, 64, 64})).empty());
  if (!device->caps().pipeline_statistics) {
    CHECK_FALSE(device->captures_statistics());
    CHECK(stats.empty());
    WARN("skipped: " << device->caps().name << " has no VK_KHR_pipeline_executable_properties");  // not a pass
    return;
  }
  CHECK(device->captures_statistics());
  REQUIRE_FALSE(stats.empty());
  for (const vk::PipelineStatistic& s : stats) {
    INFO(s.executable << ": " << s.name << " = " << s.value);
    CHECK_FALSE(s.name.empty());
  }
}

}  // namespace
}  // namespace infini::test
