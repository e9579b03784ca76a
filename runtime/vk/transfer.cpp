#include "vk/transfer.hpp"

#include <cstring>

#include "infini/error.hpp"
#include "vk/command_stream.hpp"
#include "vk/device.hpp"

namespace infini::vk {
void upload(const Buffer& dst, uint64_t offset, const void* data, uint64_t bytes) {
  check_range(dst, offset, bytes, "upload");
  if (bytes == 0) return;
  if (void* mapped = dst.mapped()) {
    std::memcpy(static_cast<char*>(mapped) + offset, data, bytes);
    dst.flush(offset, bytes);
    return;
  }
  Device& device = dst.device();
  Buffer staging(device, bytes, MemoryUse::Upload, "upload staging");
  std::memcpy(staging.mapped(), data, bytes);
  staging.flush(0, bytes);
  CommandStream stream(device);
  stream.begin();
  stream.copy({&staging, 0, bytes}, {&dst, offset, bytes});
  stream.end();
  stream.submit_and_wait();
}

void download(const Buffer& src, uint64_t offset, void* data, uint64_t bytes) {
  check_range(src, offset, bytes, "download");
  if (bytes == 0) return;
  if (const void* mapped = src.mapped()) {
    src.invalidate(offset, bytes);
    std::memcpy(data, static_cast<const char*>(mapped) + offset, bytes);
    return;
  }
  Device& device = src.device();
  Buffer staging(device, bytes, MemoryUse::Readback, "download staging");
  CommandStream stream(device);
  stream.begin();
  stream.copy({&src, offset, bytes}, {&staging, 0, bytes});
  stream.end();
  stream.submit_and_wait();
  staging.invalidate(0, bytes);
  std::memcpy(data, staging.mapped(), bytes);
}

}  // namespace infini::vk
