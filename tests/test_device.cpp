// The device layer: capability record, validation, memory accounting and limits, transfers, and
// the pipeline cache in memory and on disk.
#include <filesystem>

#include "support/gpu_fixture.hpp"
#include "spirv/peak_fma.h"
#include "vk/capabilities.hpp"
#include "vk/pipeline_cache.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {

TEST_CASE_METHOD(GpuTest, "capability record is probed and consistent", "[gpu][device]") {
  const vk::Capabilities& c = device().caps();
  CHECK(c.usable);
  CHECK(!c.name.empty());
  CHECK(c.api_version >= VK_API_VERSION_1_1);
  CHECK(c.subgroup_size >= 1);
  CHECK(c.min_subgroup_size <= c.subgroup_size);
  CHECK(c.subgroup_size <= c.max_subgroup_size);
  CHECK(c.max_shared_memory_bytes >= 16384);  // Vulkan's required minimum
  CHECK(c.max_workgroup_invocations >= 128);
  CHECK(c.max_storage_buffer_range >= (1u << 27));
  CHECK(c.max_memory_allocation_size > 0);
  CHECK(c.device_local_bytes > 0);
  CHECK(c.compute_queue_family != UINT32_MAX);
  CHECK(vk::format_api_version(VK_MAKE_API_VERSION(0, 1, 3, 239)) == "1.3.239");
}

TEST_CASE_METHOD(GpuTest, "validation layer is on in tests whenever it is installed", "[gpu][device]") {
  CHECK(instance().validation_enabled() == vk::validation_layer_installed());
}

TEST_CASE("validation messages are caught", "[gpu][device]") {
  if (!instance().validation_enabled()) return;  // nothing to catch without the layer
  // A buffer of size 0 is invalid usage; the messenger must count it.
  const uint64_t before = instance().validation_message_count();
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = 0;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer buffer = VK_NULL_HANDLE;
  if (vkCreateBuffer(device().handle(), &info, nullptr, &buffer) == VK_SUCCESS && buffer)
    vkDestroyBuffer(device().handle(), buffer, nullptr);
  CHECK(instance().validation_message_count() > before);
}

TEST_CASE_METHOD(GpuTest, "buffers are accounted, and limits are named when exceeded", "[gpu][device]") {
  vk::Device& dev = device();
  const uint64_t before = dev.allocated_bytes();
  {
    vk::Buffer b(dev, 1 << 20, vk::MemoryUse::DeviceLocal, "one MiB");
    CHECK(dev.allocated_bytes() >= before + (1 << 20));
    CHECK(dev.peak_allocated_bytes() >= dev.allocated_bytes());
  }
  CHECK(dev.allocated_bytes() == before);

  const uint64_t too_big = dev.caps().max_memory_allocation_size + 1;
  CHECK_THROWS_WITH(vk::Buffer(dev, too_big, vk::MemoryUse::DeviceLocal, "huge"),
                    Catch::Contains("maxMemoryAllocationSize") && Catch::Contains("huge"));
  CHECK(dev.allocated_bytes() == before);
}

TEST_CASE_METHOD(GpuTest, "upload and download round trip through every kind of memory", "[gpu][device]") {
  vk::Device& dev = device();
  const auto data = random_floats(1000, 17);
  for (auto use : {vk::MemoryUse::DeviceLocal, vk::MemoryUse::Upload, vk::MemoryUse::Readback}) {
    vk::Buffer b(dev, 4096 + 8, use, "roundtrip");
    vk::upload(b, std::span<const float>(data), 8);
    std::vector<float> back(data.size());
    vk::download(b, std::span<float>(back), 8);
    CHECK(back == data);
  }
}

TEST_CASE_METHOD(GpuTest, "pipelines are kept per kernel and specialization constants", "[gpu][device]") {
  vk::Device& dev = device();
  const vk::KernelSource kernel{"peak_fma", spirv::peak_fma, 1, 4};
  const uint32_t spec64[] = {64}, spec32[] = {32};
  const vk::Pipeline& a = dev.pipelines().get(kernel, spec64);
  const vk::Pipeline& b = dev.pipelines().get(kernel, spec64);
  const vk::Pipeline& c = dev.pipelines().get(kernel, spec32);
  CHECK(&a == &b);
  CHECK(&a != &c);
  CHECK(a.pipeline.get() != c.pipeline.get());
}

TEST_CASE_METHOD(GpuTest, "the pipeline cache is saved to disk and reused by a new device", "[gpu][device]") {
  {
    auto first = open_second_device();
    const vk::KernelSource kernel{"peak_fma", spirv::peak_fma, 1, 4};
    const uint32_t spec[] = {128};
    first->pipelines().get(kernel, spec);
    REQUIRE(!first->pipelines().file().empty());
  }  // saved here
  auto second = open_second_device();
  const std::filesystem::path file = second->pipelines().file();
  if (std::filesystem::file_size(file) < sizeof(VkPipelineCacheHeaderVersionOne))  // Mesa 26's lavapipe: 20 bytes
    WARN("skipped: " << second->caps().driver_info << " saved a pipeline cache without a header; it is not reused");
  else
    CHECK(second->pipelines().loaded_from_disk());
  auto no_disk = open_second_device({.disk_pipeline_cache = false});
  CHECK(!no_disk->pipelines().loaded_from_disk());
  CHECK(no_disk->pipelines().file().empty());
}

}  // namespace
}  // namespace infini::test
