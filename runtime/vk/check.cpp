#include "vk/check.hpp"

#include <string>

namespace infini {

const char* vulkan_result_name(int result) noexcept {
  switch (static_cast<VkResult>(result)) {
#define NAME(r) \
  case r:       \
    return #r;
    NAME(VK_SUCCESS)
    NAME(VK_NOT_READY)
    NAME(VK_TIMEOUT)
    NAME(VK_EVENT_SET)
    NAME(VK_EVENT_RESET)
    NAME(VK_INCOMPLETE)
    NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    NAME(VK_ERROR_INITIALIZATION_FAILED)
    NAME(VK_ERROR_DEVICE_LOST)
    NAME(VK_ERROR_MEMORY_MAP_FAILED)
    NAME(VK_ERROR_LAYER_NOT_PRESENT)
    NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    NAME(VK_ERROR_TOO_MANY_OBJECTS)
    NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    NAME(VK_ERROR_FRAGMENTED_POOL)
    NAME(VK_ERROR_UNKNOWN)
    NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    NAME(VK_ERROR_FRAGMENTATION)
    NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    NAME(VK_PIPELINE_COMPILE_REQUIRED)
    NAME(VK_ERROR_VALIDATION_FAILED_EXT)
    NAME(VK_ERROR_INVALID_SHADER_NV)
    NAME(VK_ERROR_NOT_PERMITTED_KHR)
#undef NAME
    default:
      return "VK_RESULT_UNKNOWN";
  }
}

VulkanError::VulkanError(int result, const std::string& call, const std::string& where)
    : Error(call + " failed with " + vulkan_result_name(result) + " (" + std::to_string(result) +
            ") at " + where +
            (result == VK_ERROR_DEVICE_LOST ? ": the device was lost" : "")),
      result_(result),
      call_(call),
      where_(where) {}

namespace vk {

void throw_vulkan_error(VkResult result, const char* call, const char* file, int line) {
  std::string where = std::string(file) + ":" + std::to_string(line);
  // Strip the argument list: "vkQueueSubmit(queue, 1, &info, fence)" -> "vkQueueSubmit".
  std::string name(call);
  if (auto paren = name.find('('); paren != std::string::npos) name.resize(paren);
  if (auto slash = where.find("runtime/"); slash != std::string::npos) where.erase(0, slash);
  if (result == VK_ERROR_DEVICE_LOST) throw DeviceLostError(result, name, where);
  throw VulkanError(result, name, where);
}

}  // namespace vk
}  // namespace infini
