// A sliding context's cache (InfiniOptions::sliding; ops/infini_attention_layer.hpp): how many
// rows it holds, and the move of its window back behind the sinks when it fills.
#include <algorithm>
#include <utility>

#include "ops/attention_kernels.hpp"
#include "ops/dispatch_grid.hpp"
#include "ops/infini_attention_layer.hpp"
#include "util/scalar_bytes.hpp"
#include "vk/device.hpp"

namespace infini::ops {
namespace {

// How far past C a sliding context's cache reaches: the window moves back once per this many + 1
// tokens, and a prefill piece after a move can be this long + 1.
uint32_t slide_margin(int64_t context) { return uint32_t(std::min<int64_t>(context, 256)); }

uint64_t elements(uint64_t tokens, int heads, int dim) { return tokens * uint64_t(heads) * uint64_t(dim); }

vk::BufferRange whole(const vk::Buffer& b) { return vk::BufferRange::whole(b); }

}  // namespace

uint32_t cache_rows(const InfiniOptions& o) {
  return uint32_t(o.segment) + (o.sliding ? slide_margin(o.segment) : 0u);
}

uint32_t room_after_fill(const InfiniOptions& o) {
  return o.sliding ? slide_margin(o.segment) + 1 : uint32_t(o.segment);
}

void InfiniAttentionLayer::record_slide(vk::CommandStream& stream) {
  const AttentionShape& s = shape_;
  const uint32_t sinks = uint32_t(options_.sinks);
  const uint32_t keep = segment_ - 1 - sinks;  // the window's rows the next token still attends
  const uint32_t from = rows_ - keep;
  if (keep > 0) {
    // Raw K and V move back in chunks no longer than the gap, so no copy overlaps itself (the
    // stream orders each chunk after the reads of the one before).
    const uint64_t es = scalar_bytes(input_);
    const uint32_t gap = from - sinks;
    for (const auto& [cache, row_bytes] : {std::pair{&cache_k_, elements(1, s.heads_kv, s.head_dim) * es},
                                           std::pair{&cache_v_, elements(1, s.heads_kv, s.value_dim) * es}})
      for (uint32_t done = 0; done < keep; done += gap) {
        const uint64_t rows = std::min(gap, keep - done);
        stream.copy({cache, (from + done) * row_bytes, rows * row_bytes},
                    {cache, (sinks + done) * row_bytes, rows * row_bytes});
      }
    // K rotated again at its new rows, from the raw rows: the same values as if fed there.
    const uint32_t interleaved = options_.rope.layout == rope::RopeLayout::Interleaved ? 1u : 0u;
    const uint32_t hkv = uint32_t(s.heads_kv), d = uint32_t(s.head_dim);
    const RopePush push{keep, hkv, d, rotary_dim_, interleaved, sinks, 1u};
    stream.dispatch(*rope_,
                    {{whole(cache_k_), vk::Access::Read}, {whole(rope_table_), vk::Access::Read},
                     {whole(cache_kr_), vk::Access::ReadWrite}, {whole(sinks_position_), vk::Access::Read}},
                    push, grid_1d(elements(keep, s.heads_kv, s.head_dim), kFlatWorkgroup, device_.caps()));
  }
  open_ = segment_ - 1;
  ++segments_written_;
}

}  // namespace infini::ops
