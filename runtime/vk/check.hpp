#pragma once
// INFINI_VK_CHECK(call): throws infini::VulkanError (or DeviceLostError) naming the call, its
// VkResult and the source location when a Vulkan call does not return VK_SUCCESS.
#include <vulkan/vulkan.h>

#include "infini/error.hpp"

namespace infini::vk {

[[noreturn]] void throw_vulkan_error(VkResult result, const char* call, const char* file, int line);

inline VkResult check(VkResult result, const char* call, const char* file, int line) {
  if (result < 0) throw_vulkan_error(result, call, file, line);
  return result;
}

}  // namespace infini::vk

#define INFINI_VK_CHECK(call) ::infini::vk::check((call), #call, __FILE__, __LINE__)
