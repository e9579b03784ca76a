// Device profiles: every shipped profile is a device Vulkan allows, applying one only ever lowers
// a device, and a device opened under a profile reports and enforces the profile's limits.
#include <catch2/catch.hpp>
#include <set>

#include "support/gpu_fixture.hpp"
#include "infini/context.hpp"
#include "infini/error.hpp"
#include "ops/matmul.hpp"
#include "vk/device_profile.hpp"

namespace infini::test {
namespace {

bool power_of_two(uint64_t v) { return v && (v & (v - 1)) == 0; }

// A device with more of everything than any profile.
vk::Capabilities rich_device() {
  vk::Capabilities c;
  c.name = "big GPU";
  c.type = vk::DeviceType::Discrete;
  c.api_version = VK_MAKE_API_VERSION(0, 1, 3, 250);
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = 32;
  c.subgroup_size_control = true;
  c.subgroups_in_compute = true;
  c.subgroup_operations = 0xff;
  c.shader_float16 = c.shader_int8 = c.storage_buffer_16bit = c.storage_buffer_8bit = true;
  c.timeline_semaphore = c.integer_dot_product = c.cooperative_matrix_khr = true;
  c.max_shared_memory_bytes = 100 * 1024;
  c.max_workgroup_invocations = 1024;
  c.max_workgroup_size = {1024, 1024, 1024};
  c.max_storage_buffer_range = uint64_t(1) << 40;
  c.max_memory_allocation_size = uint64_t(1) << 40;
  c.max_push_constants_bytes = 256;
  c.min_storage_buffer_offset_alignment = 1;
  c.usable = true;
  return c;
}

TEST_CASE("every shipped profile is a device that Vulkan 1.1 allows", "[profile]") {
  std::set<std::string_view> names;
  for (const vk::DeviceProfile& p : vk::device_profiles()) {
    INFO(p.name);
    CHECK(names.insert(p.name).second);
    CHECK(!p.description.empty());
    CHECK(p.api_version >= VK_API_VERSION_1_1);
    CHECK(power_of_two(p.subgroup_size));
    CHECK((p.subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0);
    // The specification's required limits (a profile may not be below them).
    CHECK(p.max_shared_memory_bytes >= 16384);
    CHECK(p.max_workgroup_invocations >= 128);
    CHECK(p.max_workgroup_size[0] >= 128);
    CHECK(p.max_storage_buffer_range >= (uint64_t(1) << 27));
    CHECK(p.max_memory_allocation_size >= (uint64_t(1) << 30));
    CHECK(p.max_push_constants_bytes >= 128);
    CHECK(power_of_two(p.min_storage_buffer_offset_alignment));
    CHECK(p.min_storage_buffer_offset_alignment <= 256);
  }
  CHECK(names.count("vulkan-1.1-minimum") == 1);
  CHECK(device_profiles().size() == vk::device_profiles().size());
}

TEST_CASE("a profile lowers a richer device to its own numbers and never raises a poorer one", "[profile]") {
  const vk::DeviceProfile& pi4 = vk::find_device_profile("v3d-pi4");
  vk::Capabilities c = rich_device();
  vk::apply_device_profile(c, pi4);
  CHECK(c.name == "big GPU [profile v3d-pi4]");
  CHECK(c.type == vk::DeviceType::Integrated);
  CHECK(c.api_version == VK_API_VERSION_1_1);
  CHECK(c.subgroup_size == 16);
  CHECK(c.subgroup_operations == VK_SUBGROUP_FEATURE_BASIC_BIT);
  CHECK_FALSE(c.subgroup_size_control);
  CHECK_FALSE(c.shader_float16);
  CHECK(c.storage_buffer_16bit);
  CHECK_FALSE(c.timeline_semaphore);  // not in 1.1
  CHECK_FALSE(c.cooperative_matrix_khr);
  CHECK(c.max_shared_memory_bytes == 16384);
  CHECK(c.max_workgroup_invocations == 256);
  CHECK(c.max_storage_buffer_range == (uint64_t(1) << 27));
  CHECK(c.max_memory_allocation_size == (uint64_t(1) << 30));
  CHECK(c.max_push_constants_bytes == 128);
  CHECK(c.min_storage_buffer_offset_alignment == 32);
  // Applying twice changes nothing more.
  vk::Capabilities twice = c;
  vk::apply_device_profile(twice, pi4);
  CHECK(twice.name == c.name);
  CHECK(twice.max_shared_memory_bytes == c.max_shared_memory_bytes);

  vk::Capabilities poor = rich_device();
  poor.shader_float16 = false;
  poor.max_shared_memory_bytes = 8192;
  poor.max_storage_buffer_range = 1000;
  poor.min_storage_buffer_offset_alignment = 512;
  vk::apply_device_profile(poor, vk::find_device_profile("adreno-740"));
  CHECK_FALSE(poor.shader_float16);
  CHECK(poor.max_shared_memory_bytes == 8192);
  CHECK(poor.max_storage_buffer_range == 1000);
  CHECK(poor.min_storage_buffer_offset_alignment == 512);
}

TEST_CASE("an unknown profile name is one line listing the known ones", "[profile]") {
  CHECK_THROWS_WITH(vk::find_device_profile("mali-t400"),
                    Catch::Contains("unknown device profile 'mali-t400'") && Catch::Contains("adreno-650"));
  ContextOptions o;
  o.device_profile = "nope";
  CHECK_THROWS_WITH(Context(o), Catch::Contains("unknown device profile 'nope'"));
}

TEST_CASE_METHOD(GpuTest, "a device opened under a profile reports and enforces its limits", "[gpu][profile]") {
  vk::DeviceOptions options;
  options.profile = &vk::find_device_profile("vulkan-1.1-minimum");
  const std::unique_ptr<vk::Device> small = open_second_device(options);
  CHECK(small->caps().max_workgroup_invocations == 128);
  CHECK(small->caps().max_shared_memory_bytes == 16384);
  CHECK(small->caps().api_version < VK_API_VERSION_1_2);
  CHECK_FALSE(small->has_timeline());
  // A tile of 256 invocations is refused by name; the default tiles fit.
  CHECK_THROWS_WITH(ops::Matmul(*small, ElementType::F32, ElementType::F32, {128, 64, 16, 8, 4}),
                    Catch::Contains("maxComputeWorkGroupInvocations 128"));
  ops::Matmul fits(*small, ElementType::F32, ElementType::F32);
  CHECK(fits.tiles().workgroup_size() <= 128);
}

}  // namespace
}  // namespace infini::test
