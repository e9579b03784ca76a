#include "ops/peak_fma.hpp"

#include <algorithm>

#include "spirv/peak_fma.h"
#include "infini/error.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {

PeakFma::PeakFma(vk::Device& device, uint32_t workgroup_size)
    : workgroup_size_(std::min(workgroup_size, device.caps().max_workgroup_invocations)) {
  const vk::KernelSource kernel{"peak_fma", spirv::peak_fma, 1, sizeof(uint32_t)};
  const uint32_t spec[] = {workgroup_size_};
  pipeline_ = &device.pipelines().get(kernel, spec);
}

void PeakFma::record(vk::CommandStream& stream, const vk::BufferRange& out, uint32_t workgroups,
                     uint32_t iterations) const {
  if (out.size < uint64_t(workgroups) * workgroup_size_ * 4) throw Error("peak_fma: output range is too small");
  stream.dispatch(*pipeline_, {{out, vk::Access::Write}}, iterations, {workgroups, 1, 1});
}

}  // namespace infini::ops
