#include "vk/staged_buffer.hpp"

#include <cstring>

#include "infini/error.hpp"
#include "vk/command_stream.hpp"

namespace infini::vk {
StagedBuffer::StagedBuffer(Device& device, uint64_t bytes, StagingDirection direction, const std::string& label)
    : device_(device, bytes, MemoryUse::DeviceLocal, label) {
  if (!device_.mapped() && direction != StagingDirection::None)
    twin_ = std::make_unique<Buffer>(
        // Readback memory is host-cached where the device has it: the host reads it fast.
        device, bytes, direction == StagingDirection::ToDevice ? MemoryUse::Upload : MemoryUse::Readback,
        label + " (host side)");
}

void StagedBuffer::write(uint64_t offset, const void* data, uint64_t bytes) const {
  const Buffer& b = host_side();
  if (!b.mapped()) throw Error("write: buffer '" + b.label() + "' is not for the host");
  check_range(b, offset, bytes, "write");
  if (bytes == 0) return;
  std::memcpy(static_cast<char*>(b.mapped()) + offset, data, bytes);
  b.flush(offset, bytes);
}

void StagedBuffer::read(uint64_t offset, void* data, uint64_t bytes) const {
  const Buffer& b = host_side();
  if (!b.mapped()) throw Error("read: buffer '" + b.label() + "' is not for the host");
  check_range(b, offset, bytes, "read");
  if (bytes == 0) return;
  b.invalidate(offset, bytes);
  std::memcpy(data, static_cast<const char*>(b.mapped()) + offset, bytes);
}

void StagedBuffer::record_upload(CommandStream& stream, uint64_t bytes, uint64_t offset) const {
  if (twin_ && bytes) stream.copy({twin_.get(), offset, bytes}, {&device_, offset, bytes});
}

void StagedBuffer::record_download(CommandStream& stream, uint64_t bytes, uint64_t offset) const {
  if (twin_ && bytes) stream.copy({&device_, offset, bytes}, {twin_.get(), offset, bytes});
}

}  // namespace infini::vk
