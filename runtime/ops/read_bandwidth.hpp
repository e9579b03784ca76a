#pragma once
// A probe of the device's read bandwidth, so that memory-bound figures (decode, matrix-vector
// products) can be given as a fraction of what the device's memory delivers, measured in the same
// run (`infini bench --workload bandwidth`).
#include <cstdint>

#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

class ReadBandwidth {
 public:
  // contiguous: each invocation reads one run of consecutive words (what CPU drivers want);
  // otherwise the grid's invocations interleave word by word (what GPUs want).
  ReadBandwidth(vk::Device& device, bool contiguous, uint32_t workgroup_size = 256);
  // Reads the whole of `in` (a multiple of 16 bytes) once with `workgroups` workgroups; writes the
  // sum of what each invocation read to `out` (workgroups * workgroup_size floats).
  void record(vk::CommandStream& stream, const vk::BufferRange& in, const vk::BufferRange& out,
              uint32_t workgroups) const;
  uint32_t workgroup_size() const noexcept { return workgroup_size_; }
  bool contiguous() const noexcept { return contiguous_; }

 private:
  bool contiguous_;
  uint32_t workgroup_size_;
  const vk::Pipeline* pipeline_;
};

}  // namespace infini::ops
