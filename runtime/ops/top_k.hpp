#pragma once
// The k largest logits of a row and their token ids, on the device, so that sampling that needs
// only them (greedy, top-k) reads back 8k bytes instead of the whole row. Ranked as the host
// sampler ranks: larger first, ties to the lower id; a NaN ranks first, so the host still sees
// and refuses it.
#include <cstdint>
#include <vector>

#include "vk/buffer.hpp"
#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

struct RankedLogit {
  float logit = 0;
  int32_t id = 0;
};

class TopK {
 public:
  static constexpr uint32_t kMaxK = 64;
  // For rows of at most `max_count` values.
  TopK(vk::Device& device, uint32_t max_count);
  // Records the ranking of the `count` f32 values of `values` from value `first` on into `out`:
  // k (value bits, id) pairs of 32-bit words, best first, ids counted from `first`. Slots past
  // `count` hold id 0xffffffff. Throws infini::Error when k is 0 or above kMaxK, count is 0 or
  // above max_count, or a buffer is too small.
  void record(vk::CommandStream& stream, const vk::Buffer& values, uint64_t first, uint32_t count, uint32_t k,
              const vk::BufferRange& out) const;
  // The pairs that record() wrote, as read back: empty slots dropped.
  static std::vector<RankedLogit> unpack(const uint32_t* pairs, uint32_t k);

 private:
  uint32_t max_count_;
  uint32_t workgroup_;
  const vk::Pipeline* values_;
  const vk::Pipeline* pairs_;
  vk::Buffer ping_, pong_;  // the passes' partial rankings
};

}  // namespace infini::ops
