#pragma once
// A storage buffer with its own memory allocation.
//
// DeviceLocal buffers live where kernels read fastest; on unified-memory devices (integrated
// GPUs, lavapipe) that memory is also host-visible and the buffer is mapped, so uploads and
// downloads are plain copies with no staging. Upload and Readback buffers are host-visible
// staging memory (readback prefers host-cached memory).
#include <cstdint>
#include <string>

#include "vk/owned.hpp"

namespace infini::vk {

class Device;

enum class MemoryUse { DeviceLocal, Upload, Readback };

// What every infini buffer is for: kernels' storage, and the source and destination of copies.
inline constexpr VkBufferUsageFlags kBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
// The VkBuffer size that holds `bytes`: Vulkan forbids empty buffers; f16 kernels read whole 32-bit words.
uint64_t buffer_size_for(uint64_t bytes) noexcept;

class Buffer {
 public:
  // Throws infini::Error naming the device limit when `bytes` exceeds maxMemoryAllocationSize or
  // the heap, and the size asked for when the allocation fails.
  Buffer(Device& device, uint64_t bytes, MemoryUse use, std::string label = {});
  // Takes a buffer already bound to memory made elsewhere (memory shared with another device,
  // vk/shared_buffer.cpp); `accounted_bytes` of it count as this device's allocation.
  Buffer(Device& device, uint64_t bytes, Owned<VkBuffer> buffer, Owned<VkDeviceMemory> memory,
         uint64_t accounted_bytes, std::string label);
  ~Buffer();
  Buffer(Buffer&&) noexcept;
  Buffer& operator=(Buffer&&) = delete;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const noexcept { return buffer_.get(); }
  uint64_t size() const noexcept { return size_; }  // as requested
  const std::string& label() const noexcept { return label_; }
  Device& device() const noexcept { return *device_; }

  VkDeviceMemory memory() const noexcept { return memory_.get(); }
  // Host pointer when the memory is mapped, else nullptr.
  void* mapped() const noexcept { return mapped_; }
  // Make host writes visible to the device / device writes visible to the host. No-ops on
  // host-coherent memory.
  void flush(uint64_t offset, uint64_t bytes) const;
  void invalidate(uint64_t offset, uint64_t bytes) const;

 private:
  VkMappedMemoryRange atom_range(uint64_t offset, uint64_t bytes) const;

  Device* device_;
  std::string label_;
  uint64_t size_ = 0;
  uint64_t allocation_size_ = 0;
  Owned<VkBuffer> buffer_;
  Owned<VkDeviceMemory> memory_;
  void* mapped_ = nullptr;
  bool coherent_ = true;
};

// Throws infini::Error, naming `what` and the buffer, when [offset, offset + bytes) is not inside it.
void check_range(const Buffer& b, uint64_t offset, uint64_t bytes, const char* what);

// A byte range of a buffer, as bound to a kernel or used by a copy.
struct BufferRange {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;

  static BufferRange whole(const Buffer& b) { return {&b, 0, b.size()}; }
};

}  // namespace infini::vk
