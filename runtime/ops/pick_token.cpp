#include "ops/pick_token.hpp"

#include <string>

#include "infini/error.hpp"
#include "ops/top_k.hpp"
#include "spirv/pick_row.h"
#include "spirv/pick_token.h"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {
namespace {
struct PickPush {
  uint32_t k, step, feed;
};
struct PickRowPush {
  uint32_t count, offset, step, feed;
};
}  // namespace

PickToken::PickToken(vk::Device& device)
    : pipeline_(&device.pipelines().get({"pick_token", spirv::pick_token, 5, sizeof(PickPush)}, {})),
      row_pipeline_(&device.pipelines().get({"pick_row", spirv::pick_row, 5, sizeof(PickRowPush)}, {})) {}

void PickToken::record(vk::CommandStream& stream, const vk::BufferRange& ranked, uint32_t k,
                       const vk::BufferRange& draws, uint32_t step, const vk::BufferRange& picks,
                       const Feed* feed) const {
  if (k == 0 || k > TopK::kMaxK)
    throw Error("pick token: k must be in 1.." + std::to_string(TopK::kMaxK) + ", got " + std::to_string(k));
  if (step >= kMaxSteps)
    throw Error("pick token: step " + std::to_string(step) + " of at most " + std::to_string(kMaxSteps));
  if (ranked.size < uint64_t(k) * 8 || draws.size < sizeof(Draws) || picks.size < uint64_t(step + 1) * 8 ||
      (feed && (feed->ids.size < 4 || feed->position.size < 4)))
    throw Error("pick token: a buffer is too small for the pick");
  // Without a feed the last two bindings are never touched: the picks stand in for them.
  const vk::BufferRange ids = feed ? feed->ids : picks, position = feed ? feed->position : picks;
  stream.dispatch(*pipeline_,
                  {{ranked, vk::Access::Read},
                   {draws, vk::Access::Read},
                   {picks, vk::Access::Write},
                   {ids, vk::Access::Write},
                   {position, vk::Access::ReadWrite}},
                  PickPush{k, step, feed ? 1u : 0u}, {1, 1, 1});
}

void PickToken::record_row(vk::CommandStream& stream, const vk::Buffer& logits, uint64_t first, uint32_t count,
                           const vk::BufferRange& draws, uint32_t step, const vk::BufferRange& picks,
                           const Feed* feed) const {
  if (count == 0 || count > kMaxRow)
    throw Error("pick token: a row of " + std::to_string(count) + " logits; a draw takes 1.." + std::to_string(kMaxRow));
  if (step >= kMaxSteps)
    throw Error("pick token: step " + std::to_string(step) + " of at most " + std::to_string(kMaxSteps));
  if (first > UINT32_MAX - count || (first + count) * 4 > logits.size() || draws.size < sizeof(Draws) ||
      picks.size < uint64_t(step + 1) * 8 || (feed && (feed->ids.size < 4 || feed->position.size < 4)))
    throw Error("pick token: a buffer is too small for the pick");
  const vk::BufferRange ids = feed ? feed->ids : picks, position = feed ? feed->position : picks;
  // The whole buffer is bound and the row read from `first` on: no offset alignment rules.
  stream.dispatch(*row_pipeline_,
                  {{vk::BufferRange::whole(logits), vk::Access::Read},
                   {draws, vk::Access::Read},
                   {picks, vk::Access::Write},
                   {ids, vk::Access::Write},
                   {position, vk::Access::ReadWrite}},
                  PickRowPush{count, uint32_t(first), step, feed ? 1u : 0u}, {1, 1, 1});
}

}  // namespace infini::ops
