#include "ops/top_k.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "infini/error.hpp"
#include "spirv/top_k_pairs.h"
#include "spirv/top_k_values.h"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {
namespace {

struct TopKPush {
  uint32_t count, k, in_offset;
};

constexpr uint32_t kPerInvocation = 8;  // PER in top_k.comp
constexpr uint32_t kNone = 0xffffffffu;

uint32_t ceil_div(uint64_t a, uint64_t b) { return uint32_t((a + b - 1) / b); }

// Candidates a pass over `count` of them leaves: k per workgroup.
uint64_t pass_output(uint32_t count, uint32_t chunk) { return uint64_t(ceil_div(count, chunk)) * TopK::kMaxK; }

}  // namespace

TopK::TopK(vk::Device& device, uint32_t max_count)
    : max_count_(max_count),
      // Each round crosses log2(WG) barriers: CPU drivers, where a barrier is expensive, get few lanes.
      workgroup_(std::min(device.caps().is_software() ? 64u : 256u, std::bit_floor(device.caps().max_workgroup_invocations))),
      // The first pass leaves the most candidates; later passes fewer.
      ping_(device, pass_output(max_count, workgroup_ * kPerInvocation) * 8, vk::MemoryUse::DeviceLocal, "top-k ping"),
      pong_(device, pass_output(max_count, workgroup_ * kPerInvocation) * 8, vk::MemoryUse::DeviceLocal, "top-k pong") {
  const uint32_t spec[] = {workgroup_};
  auto& pipelines = device.pipelines();
  values_ = &pipelines.get({"top_k_values", spirv::top_k_values, 2, sizeof(TopKPush)}, spec);
  pairs_ = &pipelines.get({"top_k_pairs", spirv::top_k_pairs, 2, sizeof(TopKPush)}, spec);
}

void TopK::record(vk::CommandStream& stream, const vk::Buffer& values, uint64_t first, uint32_t count, uint32_t k,
                  const vk::BufferRange& out) const {
  if (k == 0 || k > kMaxK)
    throw Error("top-k: k must be in 1.." + std::to_string(kMaxK) + ", got " + std::to_string(k));
  if (count == 0 || count > max_count_)
    throw Error("top-k: " + std::to_string(count) + " values; this ranking takes 1.." + std::to_string(max_count_));
  if (first > UINT32_MAX || (first + count) * 4 > values.size() || out.size < uint64_t(k) * 8)
    throw Error("top-k: a buffer is too small for the ranking");
  const uint32_t chunk = workgroup_ * kPerInvocation;
  // Pass 1 ranks the values chunk by chunk; later passes rank the pairs until one chunk is left.
  const vk::Buffer* scratch[] = {&ping_, &pong_};
  uint32_t groups = ceil_div(count, chunk);
  vk::BufferRange in = vk::BufferRange::whole(values);  // read from `first` on: no offset alignment rules
  uint32_t in_offset = uint32_t(first);
  const vk::Pipeline* kernel = values_;
  for (int pass = 0;; ++pass) {
    const uint64_t out_bytes = uint64_t(groups) * k * 8;
    const vk::BufferRange dst = groups == 1 ? out : vk::BufferRange{scratch[pass % 2], 0, out_bytes};
    stream.dispatch(*kernel, {{in, vk::Access::Read}, {dst, vk::Access::Write}}, TopKPush{count, k, in_offset}, {groups, 1, 1});
    if (groups == 1) return;
    in = dst;
    in_offset = 0;
    count = groups * k;
    groups = ceil_div(count, chunk);
    kernel = pairs_;
  }
}

std::vector<RankedLogit> TopK::unpack(const uint32_t* pairs, uint32_t k) {
  std::vector<RankedLogit> out;
  for (uint32_t i = 0; i < k; ++i)
    if (pairs[2 * i + 1] != kNone) out.push_back({std::bit_cast<float>(pairs[2 * i]), int32_t(pairs[2 * i + 1])});
  return out;
}

}  // namespace infini::ops
