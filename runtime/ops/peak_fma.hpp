#pragma once
// A probe of the device's peak fp32 FMA throughput, so other figures can be given as a fraction
// of what the device can do.
#include <cstdint>

#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

class PeakFma {
 public:
  explicit PeakFma(vk::Device& device, uint32_t workgroup_size = 256);
  // Runs `workgroups` x workgroup_size invocations, each `iterations` x 32 FMAs; writes one float
  // per invocation to `out` (which needs workgroups * workgroup_size * 4 bytes).
  void record(vk::CommandStream& stream, const vk::BufferRange& out, uint32_t workgroups, uint32_t iterations) const;
  double flops(uint32_t workgroups, uint32_t iterations) const {
    return 64.0 * workgroup_size_ * double(workgroups) * iterations;
  }
  uint32_t workgroup_size() const noexcept { return workgroup_size_; }

 private:
  uint32_t workgroup_size_;
  const vk::Pipeline* pipeline_;
};

}  // namespace infini::ops
