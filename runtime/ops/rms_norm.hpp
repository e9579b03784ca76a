#pragma once
// RMSNorm of f32 rows on the device: y = x / sqrt(mean(x^2) + eps) * w.
#include <cstdint>

#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

class RmsNorm {
 public:
  explicit RmsNorm(vk::Device& device);
  // x and y are [rows][dim] f32 (they may not alias), w is [dim] f32.
  void record(vk::CommandStream& stream, const vk::BufferRange& x, const vk::BufferRange& w,
              const vk::BufferRange& y, uint32_t rows, uint32_t dim, float eps) const;

 private:
  vk::Device& device_;
  const vk::Pipeline* pipeline_;
};

}  // namespace infini::ops
