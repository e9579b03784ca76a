#pragma once
// Element-wise f32 steps of a transformer block (shaders/elementwise.comp):
//   Add:    a += b          (residual)
//   SwiGlu: a = silu(a) * b (a: gate projection, b: up projection)
#include <cstdint>

#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

enum class ElementwiseOp { Add, SwiGlu };

class Elementwise {
 public:
  Elementwise(vk::Device& device, ElementwiseOp op);
  void record(vk::CommandStream& stream, const vk::BufferRange& a, const vk::BufferRange& b, uint32_t count) const;

 private:
  vk::Device& device_;
  const vk::Pipeline* pipeline_;
};

}  // namespace infini::ops
