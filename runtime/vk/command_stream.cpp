#include "vk/command_stream.hpp"

#include <algorithm>

#include "vk/check.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::vk {
namespace {

constexpr uint32_t kSetsPerPool = 128;
constexpr uint32_t kDescriptorsPerPool = kSetsPerPool * 8;
constexpr VkPipelineStageFlags kWorkStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kWorkAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

}  // namespace

CommandStream::CommandStream(Device& device, uint32_t timestamp_capacity) : device_(device) {
  VkDevice dev = device.handle();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = device.queue_family();
  VkCommandPool pool = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreateCommandPool(dev, &pool_info, nullptr, &pool));
  pool_ = Owned<VkCommandPool>(dev, pool, vkDestroyCommandPool);

  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  INFINI_VK_CHECK(vkAllocateCommandBuffers(dev, &alloc, &cmd_));  // freed with the pool

  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreateFence(dev, &fence_info, nullptr, &fence));
  fence_ = Owned<VkFence>(dev, fence, vkDestroyFence);

  if (timestamp_capacity > 0 && device.caps().timestamps) {
    VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = timestamp_capacity;
    INFINI_VK_CHECK(vkCreateQueryPool(dev, &query_info, nullptr, &query_pool_));
    query_pool_owned_ = Owned<VkQueryPool>(dev, query_pool_, vkDestroyQueryPool);
    timestamp_capacity_ = timestamp_capacity;
    ++object_census().query_pools;
  }
  ++object_census().command_streams;
  ++object_census().command_streams_made;
}

CommandStream::~CommandStream() {
  try {
    wait();
  } catch (...) {  // a lost device: nothing left to wait for
  }
  ObjectCensus& census = object_census();
  --census.command_streams;
  census.descriptor_pools -= int64_t(descriptor_pools_.size());
  if (query_pool_) --census.query_pools;
}

VkCommandBuffer CommandStream::cmd() const {
  if (!recording_) throw Error("command stream: record between begin() and end()");
  return cmd_;
}

void CommandStream::begin() {
  if (submitted_) wait();
  INFINI_VK_CHECK(vkResetCommandBuffer(cmd_, 0));
  for (auto& pool : descriptor_pools_) INFINI_VK_CHECK(vkResetDescriptorPool(device_.handle(), pool.get(), 0));
  current_descriptor_pool_ = 0;
  pending_.clear();
  pending_stages_ = 0;
  pending_write_access_ = 0;
  barriers_ = dispatches_ = 0;
  bound_pipeline_ = VK_NULL_HANDLE;
  timestamp_labels_.clear();

  VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  INFINI_VK_CHECK(vkBeginCommandBuffer(cmd_, &info));
  recording_ = true;
  // Order this submission after everything submitted before it (earlier streams and host
  // writes), so streams are self-contained and need no cross-submission bookkeeping.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = kWorkAccess | VK_ACCESS_HOST_WRITE_BIT;
  barrier.dstAccessMask = kWorkAccess;
  vkCmdPipelineBarrier(cmd_, kWorkStages | VK_PIPELINE_STAGE_HOST_BIT, kWorkStages, 0, 1, &barrier, 0, nullptr, 0,
                       nullptr);
  if (query_pool_) vkCmdResetQueryPool(cmd_, query_pool_, 0, timestamp_capacity_);
}

void CommandStream::order_after_pending(std::span<const PendingAccess> next, VkPipelineStageFlags next_stage) {
  bool hazard = false;
  for (const PendingAccess& n : next) {
    for (const PendingAccess& p : pending_) {
      if (p.buffer != n.buffer || p.end <= n.begin || n.end <= p.begin) continue;
      if (p.write || n.write) hazard = true;
    }
  }
  if (hazard) {
    // One memory barrier orders all pending work before everything that follows, so the
    // pending set can be forgotten.
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = pending_write_access_;
    barrier.dstAccessMask = kWorkAccess;
    vkCmdPipelineBarrier(cmd(), pending_stages_, kWorkStages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    ++barriers_;
    pending_.clear();
    pending_stages_ = 0;
    pending_write_access_ = 0;
  }
  // Only the write access types of the stages that wrote may be made available.
  const VkAccessFlags write_access =
      next_stage == VK_PIPELINE_STAGE_TRANSFER_BIT ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_SHADER_WRITE_BIT;
  for (const PendingAccess& n : next) {
    pending_.push_back(n);
    if (n.write) pending_write_access_ |= write_access;
  }
  pending_stages_ |= next_stage;
}

VkDescriptorSet CommandStream::allocate_set(VkDescriptorSetLayout layout) {
  for (;; ++current_descriptor_pool_) {
    if (current_descriptor_pool_ == descriptor_pools_.size()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorsPerPool};
      VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      info.maxSets = kSetsPerPool;
      info.poolSizeCount = 1;
      info.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      INFINI_VK_CHECK(vkCreateDescriptorPool(device_.handle(), &info, nullptr, &pool));
      descriptor_pools_.emplace_back(device_.handle(), pool, vkDestroyDescriptorPool);
      ++object_census().descriptor_pools;
    }
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = descriptor_pools_[current_descriptor_pool_].get();
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    const VkResult r = vkAllocateDescriptorSets(device_.handle(), &alloc, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) INFINI_VK_CHECK(r);
  }
}

void CommandStream::dispatch(const Pipeline& pipeline, std::span<const Binding> bindings, const void* push,
                             uint32_t push_bytes, std::array<uint32_t, 3> groups) {
  VkCommandBuffer c = cmd();
  const Capabilities& caps = device_.caps();
  if (bindings.size() != pipeline.storage_buffers)
    throw Error("kernel " + pipeline.name + " takes " + std::to_string(pipeline.storage_buffers) + " buffers, got " +
                std::to_string(bindings.size()));
  if (push_bytes != pipeline.push_constant_bytes)
    throw Error("kernel " + pipeline.name + " takes " + std::to_string(pipeline.push_constant_bytes) +
                " bytes of push constants, got " + std::to_string(push_bytes));
  for (int i = 0; i < 3; ++i)
    if (groups[i] > caps.max_workgroup_count[i])
      throw Error("kernel " + pipeline.name + ": " + std::to_string(groups[i]) + " workgroups in dimension " +
                  std::to_string(i) + " exceed maxComputeWorkGroupCount of " +
                  std::to_string(caps.max_workgroup_count[i]));
  if (groups[0] == 0 || groups[1] == 0 || groups[2] == 0) return;  // nothing to do

  std::vector<VkDescriptorBufferInfo> infos(bindings.size());
  std::vector<PendingAccess> accesses(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    const BufferRange& r = bindings[i].range;
    if (!r.buffer) throw Error("kernel " + pipeline.name + ": binding " + std::to_string(i) + " has no buffer");
    if (r.offset + r.size > r.buffer->size())
      throw Error("kernel " + pipeline.name + ": binding " + std::to_string(i) + " reaches past the end of " +
                  r.buffer->label());
    if (r.size > caps.max_storage_buffer_range)
      throw Error("kernel " + pipeline.name + ": binding of " + std::to_string(r.size) +
                  " bytes exceeds maxStorageBufferRange of " + std::to_string(caps.max_storage_buffer_range));
    if (caps.min_storage_buffer_offset_alignment && r.offset % caps.min_storage_buffer_offset_alignment)
      throw Error("kernel " + pipeline.name + ": binding offset " + std::to_string(r.offset) +
                  " is not a multiple of minStorageBufferOffsetAlignment " +
                  std::to_string(caps.min_storage_buffer_offset_alignment));
    // A zero-sized range binds a minimal valid range: the kernel must not touch it.
    const uint64_t bound = r.size ? r.size : std::min<uint64_t>(4, r.buffer->size() - r.offset);
    infos[i] = {r.buffer->handle(), r.offset, bound};
    accesses[i] = {r.buffer->handle(), r.offset, r.offset + bound, bindings[i].access != Access::Read};
  }
  order_after_pending(accesses, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);

  const VkDescriptorSet set = allocate_set(pipeline.set_layout.get());
  std::vector<VkWriteDescriptorSet> writes(bindings.size());
  for (uint32_t i = 0; i < writes.size(); ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device_.handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);

  if (bound_pipeline_ != pipeline.pipeline.get()) {
    vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline.get());
    bound_pipeline_ = pipeline.pipeline.get();
  }
  vkCmdBindDescriptorSets(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout.get(), 0, 1, &set, 0, nullptr);
  if (push_bytes) vkCmdPushConstants(c, pipeline.layout.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdDispatch(c, groups[0], groups[1], groups[2]);
  ++dispatches_;
  if (time_dispatches_ && query_pool_) {
    // The next command starts only when this dispatch is done, so the time up to its timestamp is
    // this kernel's alone.
    vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, kWorkStages, 0, 0, nullptr, 0, nullptr, 0, nullptr);
    timestamp(std::string(kDispatchLabel) + pipeline.name + " " + std::to_string(groups[0]) + "x" +
              std::to_string(groups[1]) + "x" + std::to_string(groups[2]));
  }
}

void CommandStream::copy(const BufferRange& src, const BufferRange& dst) {
  VkCommandBuffer c = cmd();
  if (src.size != dst.size) throw Error("copy: source and destination sizes differ");
  if (src.offset + src.size > src.buffer->size() || dst.offset + dst.size > dst.buffer->size())
    throw Error("copy: range reaches past the end of a buffer");
  if (src.size == 0) return;
  const PendingAccess accesses[] = {{src.buffer->handle(), src.offset, src.offset + src.size, false},
                                    {dst.buffer->handle(), dst.offset, dst.offset + dst.size, true}};
  order_after_pending(accesses, VK_PIPELINE_STAGE_TRANSFER_BIT);
  const VkBufferCopy region{src.offset, dst.offset, src.size};
  vkCmdCopyBuffer(c, src.buffer->handle(), dst.buffer->handle(), 1, &region);
}

void CommandStream::fill(const BufferRange& dst, uint32_t value) {
  VkCommandBuffer c = cmd();
  if (dst.offset % 4 || dst.size % 4) throw Error("fill: offset and size must be multiples of 4");
  if (dst.offset + dst.size > dst.buffer->size()) throw Error("fill: range reaches past the end of a buffer");
  if (dst.size == 0) return;
  const PendingAccess access{dst.buffer->handle(), dst.offset, dst.offset + dst.size, true};
  order_after_pending({&access, 1}, VK_PIPELINE_STAGE_TRANSFER_BIT);
  vkCmdFillBuffer(c, dst.buffer->handle(), dst.offset, dst.size, value);
}

// A queue family ownership transfer to or from VK_QUEUE_FAMILY_EXTERNAL, as Vulkan asks of memory
// that another device also uses.
void CommandStream::release_external(const BufferRange& range) {
  VkBufferMemoryBarrier b{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.srcQueueFamilyIndex = device_.queue_family();
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
  b.buffer = range.buffer->handle();
  b.offset = range.offset;
  b.size = range.size;
  vkCmdPipelineBarrier(cmd(), kWorkStages, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 1, &b, 0, nullptr);
  ++barriers_;
}

void CommandStream::acquire_external(const BufferRange& range) {
  VkBufferMemoryBarrier b{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
  b.dstAccessMask = kWorkAccess;
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
  b.dstQueueFamilyIndex = device_.queue_family();
  b.buffer = range.buffer->handle();
  b.offset = range.offset;
  b.size = range.size;
  vkCmdPipelineBarrier(cmd(), VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, kWorkStages, 0, 0, nullptr, 1, &b, 0, nullptr);
  ++barriers_;
}

void CommandStream::timestamp(std::string label) {
  VkCommandBuffer c = cmd();
  if (!query_pool_) return;
  if (timestamp_labels_.size() >= timestamp_capacity_)
    throw Error("command stream: more than " + std::to_string(timestamp_capacity_) + " timestamps");
  vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_,
                      static_cast<uint32_t>(timestamp_labels_.size()));
  timestamp_labels_.push_back(std::move(label));
}

void CommandStream::end() {
  VkCommandBuffer c = cmd();
  // Make the results visible to the host once the fence signals.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(c, kWorkStages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  INFINI_VK_CHECK(vkEndCommandBuffer(c));
  recording_ = false;
}

void CommandStream::submit(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals) {
  if (recording_) throw Error("command stream: submit() before end()");
  if ((!waits.empty() || !signals.empty()) && !device_.has_timeline())
    throw Error("command stream: '" + device_.caps().name + "' has no timeline semaphores to wait for or signal");
  if (submitted_) wait();
  VkSubmitInfo info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  info.commandBufferCount = 1;
  info.pCommandBuffers = &cmd_;
  // Completion is a value of the device's timeline semaphore where there is one (what the layer
  // pipeline orders its stages by), else this stream's fence.
  if (device_.has_timeline()) {
    signalled_ = device_.submit_signalling(info, waits, signals);
  } else {
    INFINI_VK_CHECK(vkResetFences(device_.handle(), 1, &fence_.get_ref()));
    device_.submit(info, fence_.get());
  }
  submitted_ = true;
}

void CommandStream::wait() {
  if (!submitted_) return;
  submitted_ = false;
  if (device_.has_timeline()) device_.wait_timeline(signalled_);
  else device_.wait_fence(fence_.get());
}

std::vector<TimestampSample> CommandStream::timestamps() const {
  std::vector<TimestampSample> out;
  if (!query_pool_ || timestamp_labels_.empty()) return out;
  std::vector<uint64_t> ticks(timestamp_labels_.size());
  INFINI_VK_CHECK(vkGetQueryPoolResults(device_.handle(), query_pool_, 0, static_cast<uint32_t>(ticks.size()),
                                        ticks.size() * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
                                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  const Capabilities& caps = device_.caps();
  const uint64_t mask = caps.timestamp_valid_bits >= 64 ? ~0ull : ((1ull << caps.timestamp_valid_bits) - 1);
  for (size_t i = 0; i < ticks.size(); ++i) {
    const uint64_t delta = (ticks[i] - ticks[0]) & mask;  // wraps correctly within valid bits
    out.push_back({timestamp_labels_[i], static_cast<double>(delta) * caps.timestamp_period_ns});
  }
  return out;
}

}  // namespace infini::vk
