#include "ops/rms_norm.hpp"

#include <algorithm>

#include "infini/error.hpp"
#include "spirv/rms_norm.h"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {
namespace {
struct Push {
  uint32_t rows, dim;
  float eps;
};
}  // namespace

RmsNorm::RmsNorm(vk::Device& device)
    : device_(device), pipeline_(&device.pipelines().get({"rms_norm", spirv::rms_norm, 3, sizeof(Push)})) {}

void RmsNorm::record(vk::CommandStream& stream, const vk::BufferRange& x, const vk::BufferRange& w,
                     const vk::BufferRange& y, uint32_t rows, uint32_t dim, float eps) const {
  if (rows == 0) return;
  const uint64_t bytes = uint64_t(rows) * dim * 4;
  if (x.size < bytes || y.size < bytes || w.size < uint64_t(dim) * 4)
    throw Error("rms_norm: a range is too small for " + std::to_string(rows) + " rows of " + std::to_string(dim));
  const uint32_t gx = std::min(rows, device_.caps().max_workgroup_count[0]);
  stream.dispatch(*pipeline_, {{x, vk::Access::Read}, {w, vk::Access::Read}, {y, vk::Access::Write}},
                  Push{rows, dim, eps}, {gx, (rows + gx - 1) / gx, 1});
}

}  // namespace infini::ops
