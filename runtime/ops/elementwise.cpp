#include "ops/elementwise.hpp"

#include "infini/error.hpp"
#include "ops/dispatch_grid.hpp"
#include "spirv/elementwise_add.h"
#include "spirv/elementwise_swiglu.h"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {
namespace {
struct Push {
  uint32_t count;
};
}  // namespace

Elementwise::Elementwise(vk::Device& device, ElementwiseOp op)
    : device_(device),
      pipeline_(&device.pipelines().get(
          op == ElementwiseOp::Add
              ? vk::KernelSource{"elementwise_add", spirv::elementwise_add, 2, sizeof(Push)}
              : vk::KernelSource{"elementwise_swiglu", spirv::elementwise_swiglu, 2, sizeof(Push)})) {}

void Elementwise::record(vk::CommandStream& stream, const vk::BufferRange& a, const vk::BufferRange& b,
                         uint32_t count) const {
  if (count == 0) return;
  if (a.size < uint64_t(count) * 4 || b.size < uint64_t(count) * 4)
    throw Error("elementwise: a range is smaller than " + std::to_string(count) + " floats");
  stream.dispatch(*pipeline_, {{a, vk::Access::ReadWrite}, {b, vk::Access::Read}}, Push{count},
                  grid_1d(count, 256, device_.caps()));
}

}  // namespace infini::ops
