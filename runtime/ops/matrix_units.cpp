#include "ops/matrix_units.hpp"

#include <cstdlib>

#include "infini/error.hpp"
#include "vk/spirv_requirements.hpp"

namespace infini::ops {

std::string missing_matrix_units(const vk::Capabilities& caps) {
  constexpr uint32_t kLanes = 32;  // FRAG_LANES in common/fragments.glsl
  if (!caps.cooperative_matrix_nv) return "cooperative matrices (VK_NV_cooperative_matrix)";
  if (!caps.has_matrix_shape({16, 16, 16, "f16", "f16", "f32", "f32"}))
    return "cooperative matrices of 16x16x16 f16 with f32 sums";
  if (!caps.vulkan_memory_model) return "vulkanMemoryModel";
  if (!caps.shader_float16) return "f16 arithmetic (shaderFloat16)";
  if (!caps.subgroups_in_compute || !(caps.subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT) ||
      caps.min_subgroup_size != kLanes || caps.max_subgroup_size != kLanes)
    return "subgroups of exactly 32 lanes in compute shaders";
  if (!caps.compute_full_subgroups) return "full subgroups (computeFullSubgroups)";
  return {};
}

bool supports_matrix_units(const vk::Capabilities& caps) { return missing_matrix_units(caps).empty(); }

std::string matrix_head_dims_misfit(int head_dim, int value_dim, uint32_t workgroup,
                                    std::initializer_list<std::span<const uint32_t>> kernels,
                                    const vk::Capabilities& caps) {
  if (head_dim % 16 || value_dim % 32)
    return "needs D a multiple of 16 and Dv of 32, got D = " + std::to_string(head_dim) + ", Dv = " +
           std::to_string(value_dim);
  const uint32_t spec[] = {workgroup, uint32_t(head_dim), uint32_t(value_dim)};
  for (const std::span<const uint32_t> spirv : kernels)
    if (const uint64_t bytes = vk::spirv_requirements(spirv, spec).shared_bytes; bytes > caps.max_shared_memory_bytes)
      return "needs " + std::to_string(bytes) + " bytes of shared memory at D = " + std::to_string(head_dim) +
             "; the device allows maxComputeSharedMemorySize " + std::to_string(caps.max_shared_memory_bytes);
  return {};
}

MatrixUnits matrix_units_for_auto(const vk::Capabilities& caps) {
  const char* env = std::getenv("INFINI_MATRIX_UNITS");
  const std::string mode = env ? env : "";
  if (!mode.empty() && mode != "off" && mode != "emulate")
    throw Error("INFINI_MATRIX_UNITS takes 'off' or 'emulate', not '" + mode + "'");
  if (mode == "off") return MatrixUnits::None;
  if (supports_matrix_units(caps)) return MatrixUnits::Hardware;
  return mode == "emulate" && caps.shader_float16 ? MatrixUnits::Emulated : MatrixUnits::None;
}

}  // namespace infini::ops
