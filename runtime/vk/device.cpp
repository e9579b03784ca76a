#include "vk/device.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "infini/error.hpp"
#include "vk/check.hpp"
#include "vk/cooperative_matrix_khr.hpp"
#include "vk/device_profile.hpp"
#include "vk/host_wait.hpp"
#include "vk/instance.hpp"
#include "vk/pipeline_cache.hpp"
#include "vk/pipeline_statistics.hpp"

namespace infini::vk {

Device::Device(std::shared_ptr<Instance> instance, const PhysicalDevice& physical, const DeviceOptions& options)
    : instance_(std::move(instance)), physical_(physical.handle), caps_(physical.caps) {
  if (!caps_.usable) throw Error("device '" + caps_.name + "' cannot be used: " + caps_.unusable_reason);
  wait_spin_ = options.wait_spin ? *options.wait_spin : wait_spin_for(caps_);  // the device's own type, not a profile's
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
  if (options.max_buffer_bytes) {
    auto clamp = [&](uint64_t& limit) { limit = limit ? std::min(limit, options.max_buffer_bytes) : options.max_buffer_bytes; };
    clamp(caps_.max_storage_buffer_range);
    clamp(caps_.max_memory_allocation_size);
  }
  if (options.max_heap_bytes) {
    caps_.largest_device_local_heap = std::min(caps_.largest_device_local_heap, options.max_heap_bytes);
    caps_.device_local_bytes = std::min(caps_.device_local_bytes, options.max_heap_bytes);
  }
  if (options.max_storage_buffers)
    caps_.max_storage_buffers_per_stage = std::min(caps_.max_storage_buffers_per_stage, options.max_storage_buffers);
  if (options.discrete_memory) caps_.unified_memory = false;
  if (options.profile) apply_device_profile(caps_, *options.profile);
  // The Vulkan memory model only for the kernels that need it (the matrix-unit ones): with it on,
  // a kernel's device-scope barriers also need vulkanMemoryModelDeviceScope, which some drivers
  // (lavapipe among them) lack, and the GLSL kernels' barriers and atomics are device-scope.
  caps_.vulkan_memory_model = caps_.vulkan_memory_model && caps_.matrix_units_api();
  caps_.vulkan_memory_model_device_scope = caps_.vulkan_memory_model && caps_.vulkan_memory_model_device_scope;

  // Enable only what caps_ says (the device's features, lowered by a profile); the pipeline cache
  // refuses kernels that need more. Below Vulkan 1.2 the features come through the extensions
  // that 1.2 made core, which the device must then list.
  std::vector<const char*> extensions;
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeatures storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features float16_int8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures size_control{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  storage16.storageBuffer16BitAccess = caps_.storage_buffer_16bit;
  void** tail = &storage16.pNext;
  auto chain = [&](auto& next) {
    *tail = &next;
    tail = &next.pNext;
  };
  if (caps_.api_version >= VK_API_VERSION_1_2) {
    f12.storageBuffer8BitAccess = caps_.storage_buffer_8bit;
    f12.shaderFloat16 = caps_.shader_float16;
    f12.shaderInt8 = caps_.shader_int8;
    f12.timelineSemaphore = caps_.timeline_semaphore;
    f12.vulkanMemoryModel = caps_.vulkan_memory_model;
    f12.vulkanMemoryModelDeviceScope = caps_.vulkan_memory_model_device_scope;
    chain(f12);
  } else {
    if (caps_.storage_buffer_8bit) {
      storage8.storageBuffer8BitAccess = VK_TRUE;
      chain(storage8);
      extensions.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
    }
    if (caps_.shader_float16 || caps_.shader_int8) {
      float16_int8.shaderFloat16 = caps_.shader_float16;
      float16_int8.shaderInt8 = caps_.shader_int8;
      chain(float16_int8);
      extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    }
  }
  if (caps_.subgroup_size_control || caps_.compute_full_subgroups) {
    size_control.subgroupSizeControl = caps_.subgroup_size_control;
    size_control.computeFullSubgroups = caps_.compute_full_subgroups;
    chain(size_control);
    if (caps_.api_version < VK_API_VERSION_1_3) extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  }
  // The cooperative-matrix extension of this build's kernels, where the device has it.
  VkPhysicalDeviceCooperativeMatrixFeaturesNV matrix_nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR matrix_khr{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  if (caps_.matrix_units_api() && matrix_units_on_khr()) {
    matrix_khr.cooperativeMatrix = VK_TRUE;
    chain(matrix_khr);
    extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  } else if (caps_.matrix_units_api()) {
    matrix_nv.cooperativeMatrix = VK_TRUE;
    chain(matrix_nv);
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  if (caps_.memory_budget) extensions.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  // Kernel statistics only when asked for: capturing them can cost compile time and caching.
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executables{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  const bool statistics_requested = pipeline_statistics_requested();  // checks the variable everywhere
  captures_statistics_ = caps_.pipeline_statistics && options.capture_statistics.value_or(statistics_requested);
  if (captures_statistics_) {
    executables.pipelineExecutableInfo = VK_TRUE;
    chain(executables);
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  }
  if (caps_.external_memory_host) extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  if (caps_.external_memory_fd) extensions.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  if (caps_.timeline_semaphore_fd || caps_.sync_file_export || caps_.sync_file_import)
    extensions.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = caps_.compute_queue_family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &storage16;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  INFINI_VK_CHECK(vkCreateDevice(physical_, &info, nullptr, &device_));
  vkGetDeviceQueue(device_, caps_.compute_queue_family, 0, &queue_);

  try {
    if (caps_.timeline_semaphore) {
      VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
      type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
      type.initialValue = 0;
      VkSemaphoreCreateInfo sem{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
      sem.pNext = &type;
      INFINI_VK_CHECK(vkCreateSemaphore(device_, &sem, nullptr, &timeline_));
    }
    pipelines_ = std::make_unique<PipelineCache>(*this, options.disk_pipeline_cache);
  } catch (...) {
    if (timeline_) vkDestroySemaphore(device_, timeline_, nullptr);
    vkDestroyDevice(device_, nullptr);
    throw;
  }
}

Device::~Device() {
  if (device_ == VK_NULL_HANDLE) return;
  vkDeviceWaitIdle(device_);
  if (timeline_) vkDestroySemaphore(device_, timeline_, nullptr);
  pipelines_.reset();  // saves the pipeline cache and destroys pipelines before the device
  vkDestroyDevice(device_, nullptr);
}

uint32_t Device::find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                                  VkMemoryPropertyFlags preferred) const {
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback == UINT32_MAX) fallback = i;
  }
  if (fallback == UINT32_MAX)
    throw Error("device '" + caps_.name + "' has no memory type with the required properties");
  return fallback;
}

void Device::submit(const VkSubmitInfo& info, VkFence fence) {
  std::lock_guard lock(queue_mutex_);
  INFINI_VK_CHECK(vkQueueSubmit(queue_, 1, &info, fence));
}

uint64_t Device::submit_signalling(const VkSubmitInfo& info, std::span<const SemaphoreValue> waits,
                                   std::span<const SemaphoreValue> signals) {
  // Fixed arrays: this runs for every piece and decode token, where heap work is not wanted.
  constexpr size_t kMaxShared = 4;
  if (waits.size() > kMaxShared || signals.size() > kMaxShared)
    throw Error("submit: at most " + std::to_string(kMaxShared) + " semaphores to wait for and to signal");
  std::array<VkSemaphore, kMaxShared> wait_semaphores{};
  std::array<VkSemaphore, kMaxShared + 1> signal_semaphores{timeline_};
  std::array<uint64_t, kMaxShared> wait_values{};
  std::array<uint64_t, kMaxShared + 1> signal_values{};
  // Another device's hidden states are read by copies and kernels alike.
  std::array<VkPipelineStageFlags, kMaxShared> wait_stages{};
  for (size_t i = 0; i < waits.size(); ++i) {
    wait_semaphores[i] = waits[i].semaphore;
    wait_values[i] = waits[i].value;
    wait_stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  }
  for (size_t i = 0; i < signals.size(); ++i) {
    signal_semaphores[i + 1] = signals[i].semaphore;
    signal_values[i + 1] = signals[i].value;
  }
  std::lock_guard lock(queue_mutex_);
  const uint64_t value = timeline_value_ + 1;
  signal_values[0] = value;
  VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  values.waitSemaphoreValueCount = uint32_t(waits.size());
  values.pWaitSemaphoreValues = wait_values.data();
  values.signalSemaphoreValueCount = uint32_t(signals.size() + 1);
  values.pSignalSemaphoreValues = signal_values.data();
  VkSubmitInfo signalling = info;
  values.pNext = signalling.pNext;
  signalling.pNext = &values;
  signalling.waitSemaphoreCount = uint32_t(waits.size());
  signalling.pWaitSemaphores = wait_semaphores.data();
  signalling.pWaitDstStageMask = wait_stages.data();
  signalling.signalSemaphoreCount = uint32_t(signals.size() + 1);
  signalling.pSignalSemaphores = signal_semaphores.data();
  INFINI_VK_CHECK(vkQueueSubmit(queue_, 1, &signalling, VK_NULL_HANDLE));
  timeline_value_ = value;
  return value;
}

void Device::wait_timeline(uint64_t value) const {
  const auto reached = [&] {
    uint64_t now = 0;
    INFINI_VK_CHECK(vkGetSemaphoreCounterValue(device_, timeline_, &now));
    return now >= value;
  };
  if (spin_until(reached, wait_spin_)) return;
  VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wait.semaphoreCount = 1;
  wait.pSemaphores = &timeline_;
  wait.pValues = &value;
  INFINI_VK_CHECK(vkWaitSemaphores(device_, &wait, UINT64_MAX));
}

void Device::wait_fence(VkFence fence) const {
  const auto signalled = [&] {
    const VkResult r = vkGetFenceStatus(device_, fence);
    if (r != VK_NOT_READY) INFINI_VK_CHECK(r);
    return r == VK_SUCCESS;
  };
  if (spin_until(signalled, wait_spin_)) return;
  INFINI_VK_CHECK(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX));
}

uint64_t Device::free_device_local_bytes() const {
  if (caps_.memory_budget) {
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    props.pNext = &budget;
    vkGetPhysicalDeviceMemoryProperties2(physical_, &props);
    uint64_t free = 0;
    for (uint32_t h = 0; h < props.memoryProperties.memoryHeapCount; ++h)
      if (props.memoryProperties.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
        free += budget.heapBudget[h] > budget.heapUsage[h] ? budget.heapBudget[h] - budget.heapUsage[h] : 0;
    return free;
  }
  const uint64_t used = allocated_bytes();
  return caps_.device_local_bytes > used ? caps_.device_local_bytes - used : 0;
}

ObjectCensus& object_census() noexcept {
  static ObjectCensus census;
  return census;
}

uint64_t allocated_bytes(std::span<Device* const> devices) noexcept {
  uint64_t sum = 0;
  for (const Device* d : devices) sum += d->allocated_bytes();
  return sum;
}

uint64_t peak_allocated_bytes(std::span<Device* const> devices) noexcept {
  uint64_t sum = 0;
  for (const Device* d : devices) sum += d->peak_allocated_bytes();
  return sum;
}

void reset_peaks(std::span<Device* const> devices) noexcept {
  for (Device* d : devices) d->reset_peak();
}

void Device::wait_idle() {
  std::lock_guard lock(queue_mutex_);
  INFINI_VK_CHECK(vkDeviceWaitIdle(device_));
}

void Device::note_allocation(int64_t delta) noexcept {
  const uint64_t now = allocated_.fetch_add(static_cast<uint64_t>(delta)) + static_cast<uint64_t>(delta);
  uint64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace infini::vk
