#pragma once
// Workgroup counts for a 1-D problem: x is capped at the device's limit (65535 on many GPUs)
// and the rest spills into y. Kernels rebuild the index as x + y * gridX * workgroup size.
#include <algorithm>
#include <array>
#include <cstdint>

#include "vk/capabilities.hpp"

namespace infini::ops {

// The workgroup size of the kernels that take one element per invocation (elementwise, embed,
// rope, cache_append): 128 is the most invocations Vulkan guarantees every device runs at once.
constexpr uint32_t kFlatWorkgroup = 128;

inline std::array<uint32_t, 3> grid_1d(uint64_t items, uint32_t workgroup_size, const vk::Capabilities& caps) {
  const uint64_t groups = std::max<uint64_t>(1, (items + workgroup_size - 1) / workgroup_size);
  const uint64_t gx = std::min<uint64_t>(groups, caps.max_workgroup_count[0]);
  return {uint32_t(gx), uint32_t((groups + gx - 1) / gx), 1};
}

}  // namespace infini::ops
