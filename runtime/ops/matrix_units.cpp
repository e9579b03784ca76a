#include "ops/matrix_units.hpp"

#include <cstdlib>

#include "infini/error.hpp"
#include "vk/spirv_requirements.hpp"
#include "util/environment.hpp"

namespace infini::ops {

std::string missing_matrix_units(const vk::Capabilities& caps) {
  if (!caps.matrix_units_api()) return std::string("cooperative matrices (") + vk::matrix_units_extension() + ")";
  if (!caps.fragment_shape().m)
    return vk::matrix_units_on_khr() ? "cooperative matrices of f16 with f32 sums in 8s or 16s"
                                     : "cooperative matrices of 16x16x16 f16 with f32 sums";
  if (!caps.vulkan_memory_model) return "vulkanMemoryModel";
  if (!caps.shader_float16) return "f16 arithmetic (shaderFloat16)";
  if (!(caps.subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT) || !caps.fragment_lanes())
    return vk::matrix_units_on_khr() ? "subgroups of sizes dividing 32 (or 32 asked for) in compute shaders"
                                     : "subgroups of exactly 32 lanes in compute shaders";
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
  const std::string mode = env::value(env::Variable::MatrixUnits).value_or("");
  if (!mode.empty() && mode != "off" && mode != "emulate")
    throw Error("INFINI_MATRIX_UNITS takes 'off' or 'emulate', not '" + mode + "'");
  if (mode == "off") return MatrixUnits::None;
  // A CPU driver's matrix units (lavapipe's KHR ones) are lanes in a loop: its tuned kernels are
  // faster there, so they are taken only when asked for (emulate runs what a GPU runs).
  if (supports_matrix_units(caps) && (!caps.is_software() || mode == "emulate")) return MatrixUnits::Hardware;
  return mode == "emulate" && caps.shader_float16 ? MatrixUnits::Emulated : MatrixUnits::None;
}

}  // namespace infini::ops
