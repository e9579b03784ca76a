#pragma once
// Errors thrown by the infini library. Every message is one line that names what went wrong.
#include <stdexcept>
#include <string>

namespace infini {

// Any failure the library reports: bad input, a device limit, a Vulkan error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A Vulkan call failed. Carries the VkResult (as int, so this header needs no Vulkan headers)
// and where it happened.
class VulkanError : public Error {
 public:
  VulkanError(int result, const std::string& call, const std::string& where);
  int result() const noexcept { return result_; }
  const std::string& call() const noexcept { return call_; }
  const std::string& where() const noexcept { return where_; }

 private:
  int result_;
  std::string call_;
  std::string where_;
};

// The device was lost (driver reset, GPU hang, hot-unplug). The device and everything created
// on it are unusable; a new context must be created.
class DeviceLostError : public VulkanError {
 public:
  using VulkanError::VulkanError;
};

// Name of a VkResult value, e.g. "VK_ERROR_OUT_OF_DEVICE_MEMORY".
const char* vulkan_result_name(int result) noexcept;

}  // namespace infini
