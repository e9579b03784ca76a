#pragma once
// A logical device on one physical device: its compute queue, memory types and accounting, and
// the pipelines built for it. Several Devices may be opened on one physical device; each has its
// own queue and memory (that is how multi-device code is tested on a single GPU).
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <span>

#include "vk/device_choice.hpp"

namespace infini::vk {

class Instance;
class PipelineCache;
struct DeviceProfile;

struct DeviceOptions {
  bool disk_pipeline_cache = true;  // load/save a VkPipelineCache under the user cache directory
  // When non-zero, this Device acts as if maxStorageBufferRange and maxMemoryAllocationSize were at
  // most this many bytes: tests use it to run the split-tensor paths of small devices anywhere.
  uint64_t max_buffer_bytes = 0;
  // Likewise for the size of the device-local memory heaps (checks made before allocating).
  uint64_t max_heap_bytes = 0;
  // Likewise for maxPerStageDescriptorStorageBuffers (how many buffers one kernel may bind).
  uint32_t max_storage_buffers = 0;
  // Acts as if no device-local memory were host-visible, as on a discrete GPU: tests use it to run
  // the staging paths (uploads, downloads, a piece's input and output copies) on any device.
  bool discrete_memory = false;
  // Acts as the GPU of this profile at most (vk/device_profile.hpp); nullptr: none.
  const DeviceProfile* profile = nullptr;
  // When set, the host polls this long before it sleeps in a wait, instead of what the device's
  // type asks (vk/host_wait.hpp): tests run the polling path on CPU devices with it.
  std::optional<std::chrono::microseconds> wait_spin;
  // Whether pipelines keep the driver's statistics of their code where the device offers them
  // (vk/pipeline_statistics.hpp); unset: INFINI_PIPELINE_STATISTICS says.
  std::optional<bool> capture_statistics;
};

// A semaphore and, for a timeline semaphore, a value of it (to wait for, or to signal).
struct SemaphoreValue {
  VkSemaphore semaphore = VK_NULL_HANDLE;
  uint64_t value = 0;
};

class Device {
 public:
  Device(std::shared_ptr<Instance> instance, const PhysicalDevice& physical, const DeviceOptions& options = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  VkDevice handle() const noexcept { return device_; }
  VkPhysicalDevice physical() const noexcept { return physical_; }
  VkQueue queue() const noexcept { return queue_; }
  uint32_t queue_family() const noexcept { return caps_.compute_queue_family; }
  const Capabilities& caps() const noexcept { return caps_; }
  Instance& instance() const noexcept { return *instance_; }
  PipelineCache& pipelines() const noexcept { return *pipelines_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const noexcept { return memory_; }

  // Index of a memory type allowed by `type_bits` that has every `required` flag, preferring
  // one that also has the `preferred` flags; throws when none has the required flags.
  uint32_t find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;

  // Submits to the queue (which Vulkan requires to be externally synchronised).
  void submit(const VkSubmitInfo& info, VkFence fence);
  // On devices with timeline semaphores: submits `info` (which must not wait for or signal
  // semaphores itself) so that it signals the device's timeline semaphore with the returned value
  // when done; wait_timeline(value) blocks the host until then. Values rise in submission order.
  // The work also waits for each of `waits` before it starts and signals each of `signals` when
  // done: semaphores shared with other devices (vk/shared_signal.hpp), timeline ones at their
  // value, binary ones (whose value is ignored).
  bool has_timeline() const noexcept { return timeline_ != VK_NULL_HANDLE; }
  uint64_t submit_signalling(const VkSubmitInfo& info, std::span<const SemaphoreValue> waits = {},
                             std::span<const SemaphoreValue> signals = {});
  void wait_timeline(uint64_t value) const;
  // Blocks the host until `fence` (of this device) is signalled.
  void wait_fence(VkFence fence) const;
  void wait_idle();
  // How long wait_timeline and wait_fence poll before they sleep (vk/host_wait.hpp).
  std::chrono::microseconds wait_spin() const noexcept { return wait_spin_; }
  // Whether its pipelines keep the driver's statistics of their code (vk/pipeline_statistics.hpp).
  bool captures_statistics() const noexcept { return captures_statistics_; }

  // Device memory allocated through this Device, now and at most so far.
  uint64_t allocated_bytes() const noexcept { return allocated_.load(); }
  uint64_t peak_allocated_bytes() const noexcept { return peak_.load(); }
  void reset_peak() noexcept { peak_.store(allocated_.load()); }
  // Device-local memory still free: the driver's budget less its usage where VK_EXT_memory_budget
  // exists (that counts other programs too), else the heap size less what this Device allocated.
  uint64_t free_device_local_bytes() const;
  void note_allocation(int64_t delta) noexcept;

 private:
  std::shared_ptr<Instance> instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  Capabilities caps_;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::mutex queue_mutex_;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t timeline_value_ = 0;  // last value submitted (under queue_mutex_)
  std::chrono::microseconds wait_spin_{0};
  bool captures_statistics_ = false;
  std::unique_ptr<PipelineCache> pipelines_;
  std::atomic<uint64_t> allocated_{0};
  std::atomic<uint64_t> peak_{0};
};

// Vulkan objects that infini creates as it runs, counted where they are made and destroyed, so
// that tests can prove a stream's bookkeeping does not grow with its length.
struct ObjectCensus {
  // Alive now.
  std::atomic<int64_t> command_streams{0};   // each with its command pool, buffer and fence
  std::atomic<int64_t> descriptor_pools{0};
  std::atomic<int64_t> query_pools{0};
  // Made so far: a steady stream must make none (creating these costs a driver call each, and on
  // some drivers host memory that is not all given back).
  std::atomic<int64_t> command_streams_made{0};
  std::atomic<int64_t> memory_allocations_made{0};  // vkAllocateMemory calls
};
ObjectCensus& object_census() noexcept;  // all devices of the process together

// Summed over several devices (a pipeline, a context).
uint64_t allocated_bytes(std::span<Device* const> devices) noexcept;
uint64_t peak_allocated_bytes(std::span<Device* const> devices) noexcept;
void reset_peaks(std::span<Device* const> devices) noexcept;

}  // namespace infini::vk
