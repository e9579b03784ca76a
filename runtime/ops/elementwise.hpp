#pragma once
// Element-wise f32 steps of a transformer block (shaders/layer/elementwise.comp):
//   Add:     a += b          (residual)
//   AddRows: a[t][j] += b[j] (a projection's bias on every row; b holds `width` values)
//   SwiGlu:  a = silu(a) * b (a: gate projection, b: up projection)
//   GeGlu:   a = gelu(a) * b (GELU's tanh approximation; gemma's feed-forward)
#include <cstdint>

#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

enum class ElementwiseOp { Add, AddRows, SwiGlu, GeGlu };

class Elementwise {
 public:
  Elementwise(vk::Device& device, ElementwiseOp op);
  // `width`: AddRows' row length (count a multiple of it); the others ignore it.
  void record(vk::CommandStream& stream, const vk::BufferRange& a, const vk::BufferRange& b, uint32_t count,
              uint32_t width = 0) const;

 private:
  vk::Device& device_;
  ElementwiseOp op_;
  const vk::Pipeline* pipeline_;
};

}  // namespace infini::ops
