#include "ops/host_tensor.hpp"

#include "util/half.hpp"
#include "vk/transfer.hpp"
#include "util/scalar_bytes.hpp"

namespace infini::ops {

vk::Buffer upload_tensor(vk::Device& device, std::span<const float> values, ElementType type, std::string label) {
  // Rounded up to whole 32-bit words: kernels read f16 data two elements at a time.
  const uint64_t bytes = (values.size() * scalar_bytes(type) + 3) / 4 * 4;
  vk::Buffer buffer(device, bytes, vk::MemoryUse::DeviceLocal, std::move(label));
  if (type == ElementType::F32) {
    vk::upload(buffer, values);
  } else {
    std::vector<uint16_t> halves(values.size());
    for (size_t i = 0; i < values.size(); ++i) halves[i] = float_to_half(values[i]);
    vk::upload(buffer, std::span<const uint16_t>(halves));
  }
  return buffer;
}

std::vector<double> as_stored(std::span<const float> values, ElementType type) {
  std::vector<double> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = type == ElementType::F16 ? half_to_float(float_to_half(values[i])) : values[i];
  return out;
}

std::vector<float> download_floats(const vk::Buffer& buffer, size_t count, size_t offset) {
  std::vector<float> out(count);
  vk::download(buffer, offset * sizeof(float), out.data(), count * sizeof(float));
  return out;
}

}  // namespace infini::ops
