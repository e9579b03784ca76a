#include "vk/shared_buffer.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "infini/error.hpp"
#include "vk/check.hpp"
#include "vk/external_handles.hpp"
#include "vk/device.hpp"


namespace infini::vk {
namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// A buffer that may be bound to memory of `type`, with its memory requirements.
Owned<VkBuffer> external_buffer(const Device& d, uint64_t bytes, VkExternalMemoryHandleTypeFlagBits type,
                                VkMemoryRequirements& req) {
  VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  external.handleTypes = type;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.pNext = &external;
  info.size = bytes;
  info.usage = kBufferUsage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer raw = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreateBuffer(d.handle(), &info, nullptr, &raw));
  vkGetBufferMemoryRequirements(d.handle(), raw, &req);
  return Owned<VkBuffer>(d.handle(), raw, vkDestroyBuffer);
}

Owned<VkDeviceMemory> allocate(const Device& d, const VkMemoryAllocateInfo& info, const std::string& what) {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const VkResult result = vkAllocateMemory(d.handle(), &info, nullptr, &memory);
  if (result != VK_SUCCESS)
    throw Error("shared memory: " + what + " of " + std::to_string(info.allocationSize) + " bytes failed on '" +
                d.caps().name + "' (" + vulkan_result_name(result) + ")");
  ++object_census().memory_allocations_made;
  return Owned<VkDeviceMemory>(d.handle(), memory, vkFreeMemory);
}

}  // namespace

const char* sharing_kind_name(SharingKind kind) noexcept {
  return kind == SharingKind::HostMemory ? "host-memory" : "device-memory";
}

bool can_share(SharingKind kind, const Device& producer, const Device& consumer, std::string* why) {
  const Capabilities &p = producer.caps(), &c = consumer.caps();
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (kind == SharingKind::HostMemory) {
    for (const Capabilities* d : {&p, &c})
      if (!d->external_memory_host) return no("'" + d->name + "' cannot import host memory (VK_EXT_external_memory_host)");
    return true;
  }
  if (!INFINI_HAS_FDS) return no("memory is shared through file descriptors, which this system does not have");
  for (const Capabilities* d : {&p, &c})
    if (!d->external_memory_fd)
      return no("'" + d->name + "' cannot export and import buffer memory as fds (VK_KHR_external_memory_fd)");
  if (!same_physical_device(p, c))
    return no("'" + p.name + "' and '" + c.name + "' are not one physical device (device or driver UUIDs differ)");
  return true;
}

SharedBuffer::SharedBuffer(Device& producer, Device& consumer, uint64_t bytes, SharingKind kind,
                           const std::string& label)
    : host_(nullptr, std::free) {
  if (std::string why; !can_share(kind, producer, consumer, &why))
    throw Error("shared memory (" + std::string(sharing_kind_name(kind)) + "): " + why);
  const uint64_t size = buffer_size_for(bytes);
  VkMemoryRequirements req_p{}, req_c{};

  if (kind == SharingKind::HostMemory) {
    const auto type = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    Owned<VkBuffer> buf_p = external_buffer(producer, size, type, req_p);
    Owned<VkBuffer> buf_c = external_buffer(consumer, size, type, req_c);
    // Both alignments are powers of two: the larger satisfies both.
    const uint64_t align = std::max({producer.caps().min_imported_host_pointer_alignment,
                                     consumer.caps().min_imported_host_pointer_alignment, req_p.alignment,
                                     req_c.alignment, uint64_t(64)});
    const uint64_t host_bytes = align_up(std::max({size, req_p.size, req_c.size}), align);
    host_.reset(std::aligned_alloc(align, host_bytes));
    if (!host_) throw Error("shared memory: out of host memory allocating " + std::to_string(host_bytes) + " bytes");
    std::memset(host_.get(), 0, host_bytes);
    auto import = [&](Device& d, Owned<VkBuffer> buffer, const VkMemoryRequirements& req, const char* side) {
      const auto properties = device_function<PFN_vkGetMemoryHostPointerPropertiesEXT>(
          d, "vkGetMemoryHostPointerPropertiesEXT", "shared memory");
      VkMemoryHostPointerPropertiesEXT pointer{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
      INFINI_VK_CHECK(properties(d.handle(), type, host_.get(), &pointer));
      VkImportMemoryHostPointerInfoEXT host_import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
      host_import.handleType = type;
      host_import.pHostPointer = host_.get();
      VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
      alloc.pNext = &host_import;
      alloc.allocationSize = host_bytes;
      alloc.memoryTypeIndex = d.find_memory_type(pointer.memoryTypeBits & req.memoryTypeBits, 0,
                                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
      Owned<VkDeviceMemory> memory = allocate(d, alloc, std::string("importing host memory (") + side + ")");
      INFINI_VK_CHECK(vkBindBufferMemory(d.handle(), buffer.get(), memory.get(), 0));
      // Host memory: no device heap is used, nothing to account.
      return std::make_unique<Buffer>(d, bytes, std::move(buffer), std::move(memory), 0, label + " (" + side + ")");
    };
    producer_ = import(producer, std::move(buf_p), req_p, "sender");
    consumer_ = import(consumer, std::move(buf_c), req_c, "receiver");
    return;
  }

#if INFINI_HAS_FDS
  const auto type = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  Owned<VkBuffer> buf_p = external_buffer(producer, size, type, req_p);
  Owned<VkBuffer> buf_c = external_buffer(consumer, size, type, req_c);
  const uint32_t memory_type = producer.find_memory_type(req_p.memoryTypeBits & req_c.memoryTypeBits, 0,
                                                         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  const uint64_t allocation = std::max(req_p.size, req_c.size);
  // Dedicated allocations on both sides: some drivers export buffer memory only so.
  VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dedicated.buffer = buf_p.get();
  VkExportMemoryAllocateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
  export_info.pNext = &dedicated;
  export_info.handleTypes = type;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.pNext = &export_info;
  alloc.allocationSize = allocation;
  alloc.memoryTypeIndex = memory_type;
  Owned<VkDeviceMemory> mem_p = allocate(producer, alloc, "allocating exportable device memory");
  INFINI_VK_CHECK(vkBindBufferMemory(producer.handle(), buf_p.get(), mem_p.get(), 0));

  VkMemoryGetFdInfoKHR get{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
  get.memory = mem_p.get();
  get.handleType = type;
  int fd = -1;
  const auto get_fd = device_function<PFN_vkGetMemoryFdKHR>(producer, "vkGetMemoryFdKHR", "shared memory");
  INFINI_VK_CHECK(get_fd(producer.handle(), &get, &fd));
  // The import takes the fd over when it succeeds; until then it is ours to close.
  VkMemoryDedicatedAllocateInfo dedicated_c{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dedicated_c.buffer = buf_c.get();
  VkImportMemoryFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
  import.pNext = &dedicated_c;
  import.handleType = type;
  import.fd = fd;
  alloc.pNext = &import;
  Owned<VkDeviceMemory> mem_c;
  try {
    mem_c = allocate(consumer, alloc, "importing device memory");
  } catch (...) {
    close(fd);
    throw;
  }
  INFINI_VK_CHECK(vkBindBufferMemory(consumer.handle(), buf_c.get(), mem_c.get(), 0));
  producer_ = std::make_unique<Buffer>(producer, bytes, std::move(buf_p), std::move(mem_p), allocation, label + " (sender)");
  consumer_ = std::make_unique<Buffer>(consumer, bytes, std::move(buf_c), std::move(mem_c), 0, label + " (receiver)");
#endif
}

SharedBuffer::~SharedBuffer() {
  consumer_.reset();  // the imports before what they import
  producer_.reset();
}

}  // namespace infini::vk
