#pragma once
// The process's Vulkan instance, optionally with the Khronos validation layer whose messages
// are counted so tests can require zero.
#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace infini::vk {

enum class Validation {
  Off,
  IfAvailable,  // enable VK_LAYER_KHRONOS_validation when it is installed
  Required,     // fail when it is not installed
};

struct InstanceOptions {
  Validation validation = Validation::Off;
  bool synchronization_validation = true;  // only when validation is on
  bool print_messages = true;              // echo validation messages to stderr
  // When non-zero, the instance asks for at most this API version (a device profile of Vulkan 1.1
  // makes the validation layer hold infini to what 1.1 has).
  uint32_t max_api_version = 0;
};

// Whether VK_LAYER_KHRONOS_validation is installed.
bool validation_layer_installed();

// Reads INFINI_VALIDATION (0/off, 1/on, required) for callers that let the user choose.
InstanceOptions instance_options_from_environment();

class Instance {
 public:
  static std::shared_ptr<Instance> create(const InstanceOptions& options = {});
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const noexcept { return instance_; }
  uint32_t api_version() const noexcept { return api_version_; }
  bool validation_enabled() const noexcept { return messenger_ != VK_NULL_HANDLE; }

  // Validation errors and warnings seen so far (info and verbose messages are not counted).
  uint64_t validation_message_count() const noexcept { return message_count_.load(); }
  std::vector<std::string> validation_messages() const;

 private:
  Instance() = default;
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* user);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t api_version_ = 0;
  bool print_messages_ = true;
  std::atomic<uint64_t> message_count_{0};
  mutable std::mutex messages_mutex_;
  std::vector<std::string> messages_;
};

}  // namespace infini::vk
