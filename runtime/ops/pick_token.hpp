#pragma once
// The next token of a chain decoded ahead on the device (pick_token.comp), from the step's
// ranking (ops::TopK's pairs): the best one, or the one a uniform number draws with the host
// sampler's own draw (ops::ranked_draw), so that sampled decoding, like greedy decoding, needs no
// host round trip between tokens and gives the tokens the host would have given.
#include <array>
#include <cstdint>

#include "ops/ranked_draw.hpp"
#include "vk/buffer.hpp"
#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

class PickToken {
 public:
  static constexpr uint32_t kMaxSteps = 16;  // uniforms one Draws holds
  // What the kernel reads: the draw's settings and one uniform in [0, 1) per step.
  struct Draws {
    uint32_t greedy = 1;  // 1: the best-ranked token, no uniform used
    float inv_temperature = 1, top_p = 1;
    uint32_t unused = 0;
    std::array<float, kMaxSteps> uniforms{};
  };
  static_assert(sizeof(Draws) == 4 * (4 + kMaxSteps));

  // Where a pick goes besides `picks`, for a chain whose next step embeds it: the token id into
  // the first word of `ids`, and the first word of `position` (the open segment's length the next
  // step runs at) one more.
  struct Feed {
    vk::BufferRange ids, position;
  };

  explicit PickToken(vk::Device& device);
  // Records step `step`'s pick from the k pairs of `ranked` (best first; empty slots end it) as a
  // (logit bits, id) pair at pair `step` of `picks`, drawn with `draws` (a Draws) and its
  // uniforms[step]. A NaN ranked first is picked as it is (the host refuses it). Throws
  // infini::Error when k is 0 or above TopK::kMaxK, step is kMaxSteps or more, or a buffer is too
  // small.
  void record(vk::CommandStream& stream, const vk::BufferRange& ranked, uint32_t k, const vk::BufferRange& draws,
              uint32_t step, const vk::BufferRange& picks, const Feed* feed = nullptr) const;
  // Most logits record_row draws from.
  static constexpr uint32_t kMaxRow = 2048 * 256;
  // The same, drawn from a whole row of logits (pick_row.comp: top-k off and top-p 1, the draw of
  // ops::row_draw with draws' 1 / T and uniforms[step]): the `count` f32 logits from element
  // `first` of `logits`. A NaN anywhere in the row is picked (the first). Throws infini::Error when
  // count is 0 or above kMaxRow, step is kMaxSteps or more, or a buffer is too small.
  void record_row(vk::CommandStream& stream, const vk::Buffer& logits, uint64_t first, uint32_t count,
                  const vk::BufferRange& draws, uint32_t step, const vk::BufferRange& picks,
                  const Feed* feed = nullptr) const;

 private:
  const vk::Pipeline* pipeline_;
  const vk::Pipeline* row_pipeline_;
};

}  // namespace infini::ops
