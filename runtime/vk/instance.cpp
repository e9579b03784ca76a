#include "vk/instance.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "vk/check.hpp"
#include "util/environment.hpp"

namespace infini::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool has_layer(const char* name) {
  uint32_t count = 0;
  INFINI_VK_CHECK(vkEnumerateInstanceLayerProperties(&count, nullptr));
  std::vector<VkLayerProperties> layers(count);
  INFINI_VK_CHECK(vkEnumerateInstanceLayerProperties(&count, layers.data()));
  for (const auto& layer : layers)
    if (std::strcmp(layer.layerName, name) == 0) return true;
  return false;
}

std::vector<VkExtensionProperties> instance_extensions(const char* layer) {
  uint32_t count = 0;
  INFINI_VK_CHECK(vkEnumerateInstanceExtensionProperties(layer, &count, nullptr));
  std::vector<VkExtensionProperties> extensions(count);
  INFINI_VK_CHECK(vkEnumerateInstanceExtensionProperties(layer, &count, extensions.data()));
  return extensions;
}

bool contains(const std::vector<VkExtensionProperties>& list, const char* name) {
  for (const auto& e : list)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

}  // namespace

bool validation_layer_installed() { return has_layer(kValidationLayer); }

InstanceOptions instance_options_from_environment() {
  InstanceOptions options;
  if (const std::optional<std::string> value = env::value(env::Variable::Validation)) {
    if (value == "1" || value == "on") options.validation = Validation::IfAvailable;
    if (value == "required") options.validation = Validation::Required;
  }
  return options;
}

std::shared_ptr<Instance> Instance::create(const InstanceOptions& options) {
  std::shared_ptr<Instance> self(new Instance());
  self->print_messages_ = options.print_messages;

  uint32_t loader_version = VK_API_VERSION_1_0;
  INFINI_VK_CHECK(vkEnumerateInstanceVersion(&loader_version));
  if (loader_version < VK_API_VERSION_1_1)
    throw Error("the Vulkan loader supports API " + std::to_string(VK_API_VERSION_MAJOR(loader_version)) +
                "." + std::to_string(VK_API_VERSION_MINOR(loader_version)) + "; infini needs 1.1 or newer");
  self->api_version_ = loader_version >= VK_API_VERSION_1_3   ? VK_API_VERSION_1_3
                       : loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2
                                                              : VK_API_VERSION_1_1;
  if (options.max_api_version) self->api_version_ = std::min(self->api_version_, options.max_api_version);

  bool validate = false;
  if (options.validation != Validation::Off) {
    validate = has_layer(kValidationLayer);
    if (!validate && options.validation == Validation::Required)
      throw Error("validation was required but VK_LAYER_KHRONOS_validation is not installed "
                  "(Debian/Ubuntu: apt-get install vulkan-validationlayers)");
  }

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  const auto available = instance_extensions(nullptr);
  VkInstanceCreateFlags flags = 0;
  // Portability drivers (MoltenVK and friends) are only listed when asked for.
  if (contains(available, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  if (validate) {
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "infini";
  app.pEngineName = "infini";
  app.apiVersion = self->api_version_;

  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = &Instance::on_message;
  messenger_info.pUserData = self.get();

  const VkValidationFeatureEnableEXT sync_validation = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync_validation;
  if (options.synchronization_validation) messenger_info.pNext = &features;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  // Chaining the messenger info also reports problems during vkCreateInstance itself.
  if (validate) info.pNext = &messenger_info;
  INFINI_VK_CHECK(vkCreateInstance(&info, nullptr, &self->instance_));

  if (validate) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(self->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create) throw Error("vkCreateDebugUtilsMessengerEXT is missing although the validation layer is on");
    messenger_info.pNext = nullptr;
    INFINI_VK_CHECK(create(self->instance_, &messenger_info, nullptr, &self->messenger_));
  }
  return self;
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

std::vector<std::string> Instance::validation_messages() const {
  std::lock_guard lock(messages_mutex_);
  return messages_;
}

VkBool32 Instance::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                              VkDebugUtilsMessageTypeFlagsEXT, const VkDebugUtilsMessengerCallbackDataEXT* data,
                              void* user) {
  auto* self = static_cast<Instance*>(user);
  // The loader's own messages are about the machine's installed drivers (an ICD of another
  // architecture that does not load, say), not about what infini asks of Vulkan.
  if (data && data->pMessageIdName && std::string_view(data->pMessageIdName) == "Loader Message") return VK_FALSE;
  const char* level = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning";
  std::string text = std::string("validation ") + level + ": " + (data && data->pMessage ? data->pMessage : "");
  self->message_count_.fetch_add(1);
  {
    std::lock_guard lock(self->messages_mutex_);
    if (self->messages_.size() < 256) self->messages_.push_back(text);
  }
  if (self->print_messages_) std::fprintf(stderr, "infini: %s\n", text.c_str());
  return VK_FALSE;
}

}  // namespace infini::vk
