#pragma once
// One piece of memory that two devices both bind as a buffer: what the producing device writes, the
// consuming one reads once the host has seen the producer's work complete, and the host copies
// nothing. This is how hidden states move between the stages of a layer pipeline without passing
// through the host's own copies. Two kinds:
//  - HostMemory: a page-aligned host allocation imported into both devices
//    (VK_EXT_external_memory_host). Any two devices that have the extension, of any vendors.
//  - DeviceMemory: device memory of the producer exported as an opaque fd and imported into the
//    consumer (VK_KHR_external_memory_fd). Only between logical devices of one physical device (the
//    same device and driver UUIDs); the data then never leaves the GPU.
// Ownership moves between the devices as Vulkan asks for external memory: the producer records
// CommandStream::release_external after its last write, the consumer acquire_external before its
// first read.
#include <cstdint>
#include <memory>
#include <string>

#include "vk/buffer.hpp"

namespace infini::vk {

class Device;

enum class SharingKind { HostMemory, DeviceMemory };
const char* sharing_kind_name(SharingKind kind) noexcept;  // "host-memory", "device-memory"

// Whether memory of this kind can be shared from `producer` to `consumer`; when not, why (one
// phrase naming the missing extension or the mismatch).
bool can_share(SharingKind kind, const Device& producer, const Device& consumer, std::string* why = nullptr);

class SharedBuffer {
 public:
  // Throws infini::Error when can_share is false or an allocation or import fails.
  SharedBuffer(Device& producer, Device& consumer, uint64_t bytes, SharingKind kind, const std::string& label);
  ~SharedBuffer();
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  const Buffer& producer_side() const noexcept { return *producer_; }
  const Buffer& consumer_side() const noexcept { return *consumer_; }

 private:
  std::unique_ptr<void, void (*)(void*)> host_;  // HostMemory: outlives both buffers
  std::unique_ptr<Buffer> producer_, consumer_;
};

}  // namespace infini::vk
