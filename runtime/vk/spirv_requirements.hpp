#pragma once
// What a compute kernel asks of a device, read from its SPIR-V with its specialization constants
// applied: workgroup (shared) memory, workgroup size, and the optional features its capabilities
// need. The pipeline cache checks every kernel against the device's Capabilities before it builds
// it, so a kernel that a device (or a device profile) cannot run is refused with one line naming
// the kernel and the limit, instead of failing inside the driver or computing garbage.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace infini::vk {

struct Capabilities;

struct SpirvRequirements {
  uint64_t shared_bytes = 0;                // sum of the Workgroup-storage variables' sizes
  std::array<uint32_t, 3> local_size{1, 1, 1};
  bool float16 = false;                     // Float16 arithmetic (shaderFloat16)
  bool int8 = false;                        // Int8 arithmetic (shaderInt8)
  bool storage_16bit = false;               // StorageBuffer16BitAccess
  bool storage_8bit = false;                // StorageBuffer8BitAccess
  bool cooperative_matrix_nv = false;       // CooperativeMatrixNV (VK_NV_cooperative_matrix) or
  bool cooperative_matrix_khr = false;      // CooperativeMatrixKHR: the pipeline then requires full
                                            // subgroups of the fragments' lanes
  bool vulkan_memory_model = false;         // VulkanMemoryModel (vulkanMemoryModel)
  VkSubgroupFeatureFlags subgroup_operations = 0;  // GroupNonUniform* capabilities as Vulkan bits
};

// `spec_constants[i]` is the value of the constant with SpecId i (as the pipeline cache maps them);
// constants past the end keep their defaults. Throws infini::Error on SPIR-V it cannot size.
SpirvRequirements spirv_requirements(std::span<const uint32_t> spirv, std::span<const uint32_t> spec_constants);

// Empty when `caps` satisfies `needs`; otherwise one line naming `kernel` and what is missing.
std::string unmet_requirement(std::string_view kernel, const SpirvRequirements& needs, const Capabilities& caps);

}  // namespace infini::vk
