#include "ops/elementwise.hpp"

#include "infini/error.hpp"
#include "ops/dispatch_grid.hpp"
#include "spirv/elementwise_add.h"
#include "spirv/elementwise_add_rows.h"
#include "spirv/elementwise_geglu.h"
#include "spirv/elementwise_swiglu.h"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {
namespace {
struct Push {
  uint32_t count, width;
};

vk::KernelSource kernel_for(ElementwiseOp op) {
  switch (op) {
    case ElementwiseOp::Add: return {"elementwise_add", spirv::elementwise_add, 2, sizeof(Push)};
    case ElementwiseOp::AddRows: return {"elementwise_add_rows", spirv::elementwise_add_rows, 2, sizeof(Push)};
    case ElementwiseOp::SwiGlu: return {"elementwise_swiglu", spirv::elementwise_swiglu, 2, sizeof(Push)};
    case ElementwiseOp::GeGlu: return {"elementwise_geglu", spirv::elementwise_geglu, 2, sizeof(Push)};
  }
  throw Error("elementwise: unknown op");
}
}  // namespace

Elementwise::Elementwise(vk::Device& device, ElementwiseOp op)
    : device_(device), op_(op), pipeline_(&device.pipelines().get(kernel_for(op))) {}

void Elementwise::record(vk::CommandStream& stream, const vk::BufferRange& a, const vk::BufferRange& b,
                         uint32_t count, uint32_t width) const {
  if (count == 0) return;
  const bool rows = op_ == ElementwiseOp::AddRows;
  if (rows && (width == 0 || count % width != 0))
    throw Error("elementwise: " + std::to_string(count) + " values are not whole rows of " + std::to_string(width));
  const uint64_t b_count = rows ? width : count;
  if (a.size < uint64_t(count) * 4 || b.size < b_count * 4)
    throw Error("elementwise: a range is smaller than " + std::to_string(rows ? width : count) + " floats");
  stream.dispatch(*pipeline_, {{a, vk::Access::ReadWrite}, {b, vk::Access::Read}}, Push{count, width},
                  grid_1d(count, kFlatWorkgroup, device_.caps()));
}

}  // namespace infini::ops
