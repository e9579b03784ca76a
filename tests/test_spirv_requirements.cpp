// What kernels ask of a device, read from their SPIR-V, and the one-line refusals when a device
// (or a device profile) has less.
#include <catch2/catch.hpp>

#include "infini/error.hpp"
#include "spirv/attention_segment_v32.h"
#include "spirv/matmul_a32_b32.h"
#include "spirv/matvec_a32_b32.h"
#include "spirv/matvec_a32_b32_shared.h"
#include "spirv/rms_norm.h"
#include "vk/capabilities.hpp"
#include "vk/spirv_requirements.hpp"

namespace infini::test {
namespace {

using vk::spirv_requirements;

vk::Capabilities roomy_device() {
  vk::Capabilities c;
  c.max_shared_memory_bytes = 65536;
  c.max_workgroup_invocations = 1024;
  c.max_workgroup_size = {1024, 1024, 64};
  c.subgroups_in_compute = true;
  c.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  return c;
}

TEST_CASE("shared memory and workgroup size follow the specialization constants", "[spirv]") {
  // matmul.comp: tile_a[BK * BM] and tile_b[BK * BN] floats; constants WG, BM, BN, BK, TM, TN.
  const uint32_t big[] = {256, 64, 64, 16, 4, 4};
  const auto a = spirv_requirements(infini::spirv::matmul_a32_b32, big);
  CHECK(a.shared_bytes == 4u * 16 * (64 + 64));
  CHECK(a.local_size == std::array<uint32_t, 3>{256, 1, 1});
  const uint32_t small[] = {64, 32, 16, 8, 2, 4};
  const auto b = spirv_requirements(infini::spirv::matmul_a32_b32, small);
  CHECK(b.shared_bytes == 4u * 8 * (32 + 16));
  CHECK(b.local_size[0] == 64);
  // Constants not given keep their defaults (those in the shader: 64x64x16 tiles).
  const uint32_t only_wg[] = {128};
  CHECK(spirv_requirements(infini::spirv::matmul_a32_b32, only_wg).shared_bytes == 4u * 16 * (64 + 64));
}

TEST_CASE("shared arrays sized by expressions of constants are evaluated", "[spirv]") {
  // attention_segment.comp: BR*(DK+1) + BC*(DK+1) + BR*(BC+1) + BC*DVC + 2*(WG/BR)*BR floats.
  const uint32_t WG = 128, BR = 32, BC = 16, DK = 32, DVC = 64;
  const uint32_t spec[] = {WG, BR, BC, DK, DVC, 16};
  const auto r = spirv_requirements(infini::spirv::attention_segment_v32, spec);
  CHECK(r.shared_bytes == 4u * (BR * (DK + 1) + BC * (DK + 1) + BR * (BC + 1) + BC * DVC + 2 * (WG / BR) * BR));
  // rms_norm.comp: partial[gl_WorkGroupSize.x] with local_size_x = 64.
  const auto n = spirv_requirements(infini::spirv::rms_norm, {});
  CHECK(n.local_size[0] == 64);
  CHECK(n.shared_bytes == 64u * 4);
}

TEST_CASE("subgroup operations are read from the capabilities a kernel declares", "[spirv]") {
  const uint32_t spec[] = {128, 1, 2};
  const auto with = spirv_requirements(infini::spirv::matvec_a32_b32, spec);
  CHECK((with.subgroup_operations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0);
  CHECK((with.subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0);
  const auto without = spirv_requirements(infini::spirv::matvec_a32_b32_shared, spec);
  CHECK(without.subgroup_operations == 0);
  CHECK_FALSE(without.float16);
  CHECK_FALSE(without.storage_16bit);  // f16 weights are read as packed words everywhere
}

TEST_CASE("a device with less than a kernel needs gets one line naming kernel and limit", "[spirv]") {
  const uint32_t spec[] = {256, 64, 64, 16, 4, 4};
  const auto needs = spirv_requirements(infini::spirv::matmul_a32_b32, spec);
  vk::Capabilities c = roomy_device();
  CHECK(vk::unmet_requirement("matmul_a32_b32", needs, c).empty());
  c.max_shared_memory_bytes = 8000;
  CHECK(vk::unmet_requirement("matmul_a32_b32", needs, c) ==
        "kernel matmul_a32_b32 needs 8192 bytes of shared memory; the device allows maxComputeSharedMemorySize 8000");
  c = roomy_device();
  c.max_workgroup_invocations = 128;
  CHECK_THAT(vk::unmet_requirement("m", needs, c), Catch::Contains("256 invocations") && Catch::Contains("128"));
  c = roomy_device();
  c.max_workgroup_size[0] = 200;
  CHECK_THAT(vk::unmet_requirement("m", needs, c), Catch::Contains("maxComputeWorkGroupSize 200"));

  const uint32_t mv[] = {128, 1, 2};
  const auto subgroup = spirv_requirements(infini::spirv::matvec_a32_b32, mv);
  c = roomy_device();
  CHECK(vk::unmet_requirement("mv", subgroup, c).empty());
  c.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT;
  CHECK_THAT(vk::unmet_requirement("mv", subgroup, c), Catch::Contains("[arithmetic]"));
  c = roomy_device();
  c.subgroups_in_compute = false;
  CHECK_THAT(vk::unmet_requirement("mv", subgroup, c), Catch::Contains("subgroup operations"));

  vk::SpirvRequirements f16;
  f16.float16 = true;
  c = roomy_device();
  CHECK_THAT(vk::unmet_requirement("h", f16, c), Catch::Contains("shaderFloat16"));
  c.shader_float16 = true;
  CHECK(vk::unmet_requirement("h", f16, c).empty());
}

TEST_CASE("SPIR-V that cannot be read is refused", "[spirv]") {
  const uint32_t not_spirv[] = {1, 2, 3, 4, 5, 6};
  CHECK_THROWS_WITH(spirv_requirements(not_spirv, {}), Catch::Contains("bad magic"));
  std::vector<uint32_t> truncated(std::begin(infini::spirv::matmul_a32_b32), std::begin(infini::spirv::matmul_a32_b32) + 5);
  truncated.push_back(0x00ff0011);  // an OpCapability claiming 255 words
  CHECK_THROWS_WITH(spirv_requirements(truncated, {}), Catch::Contains("truncated"));
}

}  // namespace
}  // namespace infini::test
