#include "vk/buffer.hpp"

#include <algorithm>

#include "vk/check.hpp"
#include "vk/device.hpp"

namespace infini::vk {
namespace {

std::string bytes_text(uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) + " MiB)";
}

uint64_t align_up(uint64_t v, uint64_t a) { return a ? (v + a - 1) / a * a : v; }

}  // namespace

uint64_t buffer_size_for(uint64_t bytes) noexcept { return std::max<uint64_t>(align_up(bytes, 4), 16); }

Buffer::Buffer(Device& device, uint64_t bytes, MemoryUse use, std::string label)
    : device_(&device), label_(std::move(label)), size_(bytes) {
  const Capabilities& caps = device.caps();
  const std::string what = label_.empty() ? "buffer" : "buffer '" + label_ + "'";
  const uint64_t buffer_size = buffer_size_for(bytes);
  if (caps.max_memory_allocation_size && buffer_size > caps.max_memory_allocation_size)
    throw Error(what + " of " + bytes_text(bytes) + " exceeds the device's maxMemoryAllocationSize of " +
                bytes_text(caps.max_memory_allocation_size) + " on '" + caps.name + "'");

  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = buffer_size;
  info.usage = kBufferUsage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer raw = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreateBuffer(device.handle(), &info, nullptr, &raw));
  buffer_ = Owned<VkBuffer>(device.handle(), raw, vkDestroyBuffer);

  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device.handle(), raw, &req);

  VkMemoryPropertyFlags required = 0, preferred = 0;
  switch (use) {
    case MemoryUse::DeviceLocal:
      preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      if (caps.unified_memory) preferred |= VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
    case MemoryUse::Upload:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
    case MemoryUse::Readback:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
  }
  const uint32_t type = device.find_memory_type(req.memoryTypeBits, required, preferred);
  const VkMemoryType& mem_type = device.memory_properties().memoryTypes[type];
  const uint64_t heap_size = device.memory_properties().memoryHeaps[mem_type.heapIndex].size;
  if (req.size > heap_size)
    throw Error(what + " of " + bytes_text(bytes) + " exceeds the memory heap size of " + bytes_text(heap_size) +
                " on '" + caps.name + "'");

  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const VkResult result = vkAllocateMemory(device.handle(), &alloc, nullptr, &memory);
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
    throw Error("out of memory allocating " + what + " of " + bytes_text(bytes) + " on '" + caps.name + "' (" +
                bytes_text(device.allocated_bytes()) + " already allocated by infini)");
  INFINI_VK_CHECK(result);
  ++object_census().memory_allocations_made;
  memory_ = Owned<VkDeviceMemory>(device.handle(), memory, vkFreeMemory);
  allocation_size_ = req.size;
  device.note_allocation(static_cast<int64_t>(allocation_size_));
  INFINI_VK_CHECK(vkBindBufferMemory(device.handle(), raw, memory, 0));

  // Device-local memory is mapped only where the host shares it (a discrete GPU's host-visible
  // device memory is a small window, slow for the host to read).
  const bool map = use != MemoryUse::DeviceLocal || caps.unified_memory;
  if (map && (mem_type.propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
    coherent_ = (mem_type.propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    INFINI_VK_CHECK(vkMapMemory(device.handle(), memory, 0, VK_WHOLE_SIZE, 0, &mapped_));
  }
}

Buffer::Buffer(Device& device, uint64_t bytes, Owned<VkBuffer> buffer, Owned<VkDeviceMemory> memory,
               uint64_t accounted_bytes, std::string label)
    : device_(&device),
      label_(std::move(label)),
      size_(bytes),
      allocation_size_(accounted_bytes),
      buffer_(std::move(buffer)),
      memory_(std::move(memory)) {
  if (allocation_size_) device.note_allocation(static_cast<int64_t>(allocation_size_));
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(other.device_),
      label_(std::move(other.label_)),
      size_(other.size_),
      allocation_size_(std::exchange(other.allocation_size_, 0)),
      buffer_(std::move(other.buffer_)),
      memory_(std::move(other.memory_)),
      mapped_(std::exchange(other.mapped_, nullptr)),
      coherent_(other.coherent_) {}

Buffer::~Buffer() {
  buffer_.reset();
  memory_.reset();  // vkFreeMemory unmaps implicitly
  if (allocation_size_) device_->note_allocation(-static_cast<int64_t>(allocation_size_));
}

VkMappedMemoryRange Buffer::atom_range(uint64_t offset, uint64_t bytes) const {
  // Non-coherent ranges must be aligned to nonCoherentAtomSize (or end at the allocation's end).
  const uint64_t atom = std::max<uint64_t>(device_->caps().non_coherent_atom_size, 1);
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = memory_.get();
  range.offset = offset / atom * atom;
  range.size = std::min(align_up(offset + bytes, atom), allocation_size_) - range.offset;
  return range;
}

void check_range(const Buffer& b, uint64_t offset, uint64_t bytes, const char* what) {
  if (offset > b.size() || bytes > b.size() - offset)
    throw Error(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                " does not fit buffer '" + b.label() + "' of " + std::to_string(b.size()) + " bytes");
}

void Buffer::flush(uint64_t offset, uint64_t bytes) const {
  if (coherent_ || !mapped_) return;
  const VkMappedMemoryRange range = atom_range(offset, bytes);
  INFINI_VK_CHECK(vkFlushMappedMemoryRanges(device_->handle(), 1, &range));
}

void Buffer::invalidate(uint64_t offset, uint64_t bytes) const {
  if (coherent_ || !mapped_) return;
  const VkMappedMemoryRange range = atom_range(offset, bytes);
  INFINI_VK_CHECK(vkInvalidateMappedMemoryRanges(device_->handle(), 1, &range));
}

}  // namespace infini::vk
