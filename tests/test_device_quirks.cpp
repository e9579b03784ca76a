// The known-driver-bug table: which devices an entry matches, what applying it changes, and that
// every entry says where the bug is documented.
#include <catch2/catch.hpp>

#include "infini/error.hpp"
#include "vk/capabilities.hpp"
#include "vk/device_quirks.hpp"

namespace infini::test {
namespace {

vk::Capabilities device_of(uint32_t vendor, uint32_t driver_id, uint32_t driver_version = 0) {
  vk::Capabilities c;
  c.vendor_id = vendor;
  c.driver_id = driver_id;
  c.driver_version = driver_version;
  c.api_version = VK_API_VERSION_1_1;
  c.subgroup_size = 64;
  c.subgroups_in_compute = true;
  c.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                          VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
  c.timeline_semaphore = c.shader_float16 = c.storage_buffer_16bit = true;
  return c;
}

TEST_CASE("every quirk names what it avoids and where the bug is documented", "[quirks]") {
  for (const vk::DeviceQuirk& q : vk::device_quirks()) {
    INFO(q.name);
    CHECK(!q.name.empty());
    CHECK(!q.symptom.empty());
    CHECK(q.source.find("http") != std::string_view::npos);
    CHECK(q.avoid != 0);
    const bool matches_something = q.vendor_id || q.driver_id || q.api_below || q.driver_version_below || q.also;
    CHECK(matches_something);  // no entry applies to every device
  }
}

TEST_CASE("quirks apply to the drivers they name and to no other", "[quirks]") {
  vk::Capabilities adreno = device_of(0x5143, VK_DRIVER_ID_QUALCOMM_PROPRIETARY);
  vk::apply_device_quirks(adreno);
  CHECK_FALSE(adreno.timeline_semaphore);
  CHECK(adreno.quirks == std::vector<std::string>{"qualcomm-timeline"});

  vk::Capabilities old_adreno = device_of(0x5143, VK_DRIVER_ID_QUALCOMM_PROPRIETARY);
  old_adreno.storage_buffer_16bit = false;
  vk::apply_device_quirks(old_adreno);
  CHECK_FALSE(old_adreno.shader_float16);
  CHECK(old_adreno.quirks.size() == 2);

  vk::Capabilities amd_mac = device_of(0x1002, VK_DRIVER_ID_MOLTENVK);
  vk::apply_device_quirks(amd_mac);
  CHECK((amd_mac.subgroup_operations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) == 0);
  CHECK((amd_mac.subgroup_operations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) == 0);
  CHECK((amd_mac.subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0);

  vk::Capabilities nvidia_mac = device_of(0x10DE, VK_DRIVER_ID_MOLTENVK);
  const vk::Capabilities before = nvidia_mac;
  vk::apply_device_quirks(nvidia_mac);
  CHECK(nvidia_mac.quirks.empty());
  CHECK(nvidia_mac.subgroup_operations == before.subgroup_operations);
  CHECK(nvidia_mac.timeline_semaphore);

  vk::Capabilities zero = device_of(0x13B5, VK_DRIVER_ID_ARM_PROPRIETARY);
  zero.subgroup_size = 0;
  vk::apply_device_quirks(zero);
  CHECK_FALSE(zero.subgroups_in_compute);
  CHECK(zero.subgroup_operations == 0);

  vk::Capabilities pvr = device_of(0x1010, VK_DRIVER_ID_IMAGINATION_PROPRIETARY);
  vk::apply_device_quirks(pvr);
  CHECK_FALSE(pvr.pipeline_cache);
}

TEST_CASE("driver version ranges include their start and exclude their end", "[quirks]") {
  const vk::DeviceQuirk table[] = {{.name = "test-range",
                                    .symptom = "s",
                                    .source = "https://example.invalid",
                                    .avoid = vk::kAvoidFloat16Arithmetic,
                                    .vendor_id = 0x8086,
                                    .driver_version_from = 100,
                                    .driver_version_below = 200}};
  for (const auto& [version, hit] : {std::pair{99u, false}, {100u, true}, {199u, true}, {200u, false}}) {
    INFO(version);
    vk::Capabilities c = device_of(0x8086, VK_DRIVER_ID_INTEL_PROPRIETARY_WINDOWS, version);
    vk::apply_device_quirks(c, table);
    CHECK(c.shader_float16 == !hit);
  }
  vk::Capabilities other_vendor = device_of(0x1002, VK_DRIVER_ID_AMD_PROPRIETARY, 150);
  vk::apply_device_quirks(other_vendor, table);
  CHECK(other_vendor.shader_float16);
}

TEST_CASE("quirks can be forced by name, and an unknown name is refused", "[quirks]") {
  vk::Capabilities c = device_of(0x10DE, VK_DRIVER_ID_NVIDIA_PROPRIETARY);
  const std::vector<std::string> forced = {"moltenvk-amd-subgroups"};
  vk::apply_device_quirks(c, vk::device_quirks(), forced);
  CHECK(c.quirks == forced);
  CHECK((c.subgroup_operations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) == 0);
  const std::vector<std::string> bogus = {"no-such-quirk"};
  CHECK_THROWS_WITH(vk::apply_device_quirks(c, vk::device_quirks(), bogus),
                    Catch::Contains("unknown quirk 'no-such-quirk'") && Catch::Contains("qualcomm-timeline"));
}

}  // namespace
}  // namespace infini::test
