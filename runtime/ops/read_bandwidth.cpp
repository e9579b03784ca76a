#include "ops/read_bandwidth.hpp"

#include <algorithm>
#include <string>

#include "infini/error.hpp"
#include "spirv/read_bandwidth.h"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {

ReadBandwidth::ReadBandwidth(vk::Device& device, bool contiguous, uint32_t workgroup_size)
    : contiguous_(contiguous), workgroup_size_(std::min(workgroup_size, device.caps().max_workgroup_invocations)) {
  const vk::KernelSource kernel{"read_bandwidth", spirv::read_bandwidth, 2, sizeof(uint32_t)};
  const uint32_t spec[] = {workgroup_size_, contiguous ? 1u : 0u};
  pipeline_ = &device.pipelines().get(kernel, spec);
}

void ReadBandwidth::record(vk::CommandStream& stream, const vk::BufferRange& in, const vk::BufferRange& out,
                           uint32_t workgroups) const {
  if (in.size % 16 != 0 || in.size / 16 > UINT32_MAX)
    throw Error("read_bandwidth: the input must be a multiple of 16 bytes and at most 64 GiB, got " +
                std::to_string(in.size));
  if (out.size < uint64_t(workgroups) * workgroup_size_ * 4) throw Error("read_bandwidth: output range is too small");
  const uint32_t words = uint32_t(in.size / 16);
  stream.dispatch(*pipeline_, {{in, vk::Access::Read}, {out, vk::Access::Write}}, words, {workgroups, 1, 1});
}

}  // namespace infini::ops
