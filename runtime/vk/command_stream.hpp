#pragma once
// Records dispatches and copies into one command buffer, submits it, and waits.
//
// Barriers: the stream remembers which buffer ranges recorded work reads and writes since the
// last barrier, and inserts a barrier only before a command that reads what earlier work wrote,
// or writes what earlier work read or wrote. Independent dispatches run back to back.
// A recorded stream can be submitted again and again (record once per shape, replay per segment).
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "vk/buffer.hpp"
#include "vk/owned.hpp"

namespace infini::vk {

class Device;
struct Pipeline;
struct SemaphoreValue;

enum class Access { Read, Write, ReadWrite };

struct Binding {
  BufferRange range;
  Access access = Access::Read;
};

struct TimestampSample {
  std::string label;
  double ns = 0;  // since the stream's first timestamp
};

class CommandStream {
 public:
  explicit CommandStream(Device& device, uint32_t timestamp_capacity = 0);
  ~CommandStream();
  CommandStream(const CommandStream&) = delete;
  CommandStream& operator=(const CommandStream&) = delete;

  // Starts a new recording; waits for a previous submission and drops its contents.
  void begin();
  // Binds `bindings` to 0..n-1 in order. Throws infini::Error when a range breaks a device limit.
  void dispatch(const Pipeline& pipeline, std::span<const Binding> bindings, const void* push,
                uint32_t push_bytes, std::array<uint32_t, 3> groups);
  template <typename Push>
  void dispatch(const Pipeline& pipeline, std::initializer_list<Binding> bindings, const Push& push,
                std::array<uint32_t, 3> groups) {
    dispatch(pipeline, std::span<const Binding>(bindings.begin(), bindings.size()), &push,
             static_cast<uint32_t>(sizeof(Push)), groups);
  }
  void copy(const BufferRange& src, const BufferRange& dst);
  void fill(const BufferRange& dst, uint32_t value);
  // Memory shared with another device (vk/shared_buffer.hpp): hands `range` over to the other device
  // after all earlier writes to it, and takes it over from the other device before what follows.
  void release_external(const BufferRange& range);
  void acquire_external(const BufferRange& range);
  // Records when all earlier work has finished. Ignored on devices without timestamps.
  void timestamp(std::string label);
  // While on, each dispatch recorded is followed by an execution barrier and a timestamp labelled
  // kDispatchLabel + "<kernel> <groups>" ("dispatch matvec_a32_b16 16000x1x1"), so the time from
  // the timestamp before to its own is that kernel's alone (vk/dispatch_profile.hpp sums them).
  // The barriers serialise work that would otherwise overlap: a profile, not a throughput figure.
  // Needs timestamp capacity for them; ignored on devices without timestamps.
  void time_dispatches(bool on) noexcept { time_dispatches_ = on; }
  static constexpr const char* kDispatchLabel = "dispatch ";
  void end();

  // `waits` and `signals`: timeline semaphores shared with other devices that the work waits for
  // before it starts and signals when it is done (Device::submit_signalling); only on devices
  // with timeline semaphores.
  void submit(std::span<const SemaphoreValue> waits = {}, std::span<const SemaphoreValue> signals = {});
  void wait();
  void submit_and_wait() {
    submit();
    wait();
  }

  bool timestamps_supported() const noexcept { return query_pool_ != VK_NULL_HANDLE; }
  std::vector<TimestampSample> timestamps() const;  // after wait()
  uint32_t barrier_count() const noexcept { return barriers_; }  // dependency barriers recorded
  uint32_t dispatch_count() const noexcept { return dispatches_; }

 private:
  struct PendingAccess {
    VkBuffer buffer;
    uint64_t begin, end;
    bool write;
  };
  void order_after_pending(std::span<const PendingAccess> next, VkPipelineStageFlags next_stage);
  VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);
  VkCommandBuffer cmd() const;

  Device& device_;
  Owned<VkCommandPool> pool_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  Owned<VkFence> fence_;
  uint64_t signalled_ = 0;  // the timeline value the last submission signals
  std::vector<Owned<VkDescriptorPool>> descriptor_pools_;
  size_t current_descriptor_pool_ = 0;
  Owned<VkQueryPool> query_pool_owned_;
  VkQueryPool query_pool_ = VK_NULL_HANDLE;
  uint32_t timestamp_capacity_ = 0;
  std::vector<std::string> timestamp_labels_;

  std::vector<PendingAccess> pending_;
  VkPipelineStageFlags pending_stages_ = 0;
  VkAccessFlags pending_write_access_ = 0;
  bool recording_ = false;
  bool submitted_ = false;
  uint32_t barriers_ = 0;
  uint32_t dispatches_ = 0;
  bool time_dispatches_ = false;
  VkPipeline bound_pipeline_ = VK_NULL_HANDLE;
};

}  // namespace infini::vk
