#pragma once
// Moving bytes between host memory and buffers. Mapped buffers are plain copies; others go
// through a staging buffer and a copy command, and the call returns when the data has arrived.
#include <cstdint>
#include <span>

#include "vk/buffer.hpp"

namespace infini::vk {

void upload(const Buffer& dst, uint64_t offset, const void* data, uint64_t bytes);
void download(const Buffer& src, uint64_t offset, void* data, uint64_t bytes);

template <typename T>
void upload(const Buffer& dst, std::span<const T> data, uint64_t offset = 0) {
  upload(dst, offset, data.data(), data.size_bytes());
}
template <typename T>
void download(const Buffer& src, std::span<T> data, uint64_t offset = 0) {
  download(src, offset, data.data(), data.size_bytes());
}

}  // namespace infini::vk
