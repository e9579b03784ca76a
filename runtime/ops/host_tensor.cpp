#include "ops/host_tensor.hpp"

#include "util/block_codec.hpp"
#include "vk/transfer.hpp"

namespace infini::ops {

vk::Buffer upload_tensor(vk::Device& device, std::span<const float> values, ElementType type, std::string label) {
  const std::vector<std::byte> bytes = encode_blocks(type, values);
  // Rounded up to whole 32-bit words: kernels read f16 and block data as words.
  vk::Buffer buffer(device, (bytes.size() + 3) / 4 * 4, vk::MemoryUse::DeviceLocal, std::move(label));
  vk::upload(buffer, 0, bytes.data(), bytes.size());
  return buffer;
}

std::vector<double> as_stored(std::span<const float> values, ElementType type) {
  const std::vector<std::byte> bytes = encode_blocks(type, values);
  std::vector<double> out(values.size());
  decode_blocks(type, bytes, 0, values.size(), out.data());
  return out;
}

std::vector<float> download_floats(const vk::Buffer& buffer, size_t count, size_t offset) {
  std::vector<float> out(count);
  vk::download(buffer, offset * sizeof(float), out.data(), count * sizeof(float));
  return out;
}

}  // namespace infini::ops
