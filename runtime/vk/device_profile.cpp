#include "vk/device_profile.hpp"

#include <algorithm>
#include <cstdlib>

#include "infini/error.hpp"
#include "vk/capabilities.hpp"
#include "util/environment.hpp"

namespace infini::vk {

const DeviceProfile& find_device_profile(std::string_view name) {
  for (const DeviceProfile& p : device_profiles())
    if (p.name == name) return p;
  std::string known;
  for (const DeviceProfile& p : device_profiles()) known += (known.empty() ? "" : ", ") + std::string(p.name);
  throw Error("unknown device profile '" + std::string(name) + "' (known: " + known + ")");
}

const DeviceProfile* device_profile_from_environment() {
  const std::optional<std::string> name = env::value(env::Variable::DeviceProfile);
  return name ? &find_device_profile(*name) : nullptr;
}

void apply_device_profile(Capabilities& c, const DeviceProfile& p) {
  const std::string suffix = " [profile " + std::string(p.name) + "]";
  if (c.name.size() < suffix.size() || c.name.compare(c.name.size() - suffix.size(), suffix.size(), suffix) != 0)
    c.name += suffix;
  c.api_version = std::min(c.api_version, p.api_version);
  c.type = DeviceType::Integrated;  // phone and board GPUs: the GPU kernel family is chosen
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = p.subgroup_size;
  c.subgroup_size_control = false;  // a required size would be the profile's, which the driver may not run
  c.subgroup_operations &= p.subgroup_operations;
  c.storage_buffer_16bit = c.storage_buffer_16bit && p.storage_buffer_16bit;
  c.storage_buffer_8bit = c.storage_buffer_8bit && p.storage_buffer_8bit;
  c.shader_float16 = c.shader_float16 && p.shader_float16;
  c.shader_int8 = c.shader_int8 && p.shader_int8;
  // Timeline semaphores are core in 1.2 only; the 1.1 path here does not use the extension.
  c.timeline_semaphore = c.timeline_semaphore && p.timeline_semaphore && c.api_version >= VK_API_VERSION_1_2;
  c.integer_dot_product = c.integer_dot_product && c.api_version >= VK_API_VERSION_1_3;
  c.cooperative_matrix_khr = c.cooperative_matrix_nv = false;  // no profiled GPU has matrix units
  c.matrix_shapes.clear();
  c.compute_full_subgroups = false;  // only the matrix-unit kernels ask for it
  c.max_shared_memory_bytes = std::min(c.max_shared_memory_bytes, p.max_shared_memory_bytes);
  c.max_workgroup_invocations = std::min(c.max_workgroup_invocations, p.max_workgroup_invocations);
  for (int i = 0; i < 3; ++i) c.max_workgroup_size[i] = std::min(c.max_workgroup_size[i], p.max_workgroup_size[i]);
  auto lower = [](uint64_t& limit, uint64_t cap) { limit = limit ? std::min(limit, cap) : cap; };
  lower(c.max_storage_buffer_range, p.max_storage_buffer_range);
  lower(c.max_memory_allocation_size, p.max_memory_allocation_size);
  c.max_push_constants_bytes = std::min(c.max_push_constants_bytes, p.max_push_constants_bytes);
  c.min_storage_buffer_offset_alignment = std::max(c.min_storage_buffer_offset_alignment, p.min_storage_buffer_offset_alignment);
}

}  // namespace infini::vk
