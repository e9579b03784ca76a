#include "ops/infini_attention_layer.hpp"
// The layer's stream-state bookkeeping (ops/infini_attention_layer.hpp): how far the open segment
// has come, taking tokens back, and the state copied to the host and back.
#include <string>

#include "infini/error.hpp"
#include "util/scalar_bytes.hpp"
#include "vk/transfer.hpp"

namespace infini::ops {

namespace {

uint64_t elements(uint64_t tokens, int heads, int dim) { return tokens * uint64_t(heads) * uint64_t(dim); }

std::vector<std::byte> read_bytes(const vk::Buffer& b, uint64_t bytes) {
  std::vector<std::byte> out(bytes);
  if (bytes) vk::download(b, 0, out.data(), bytes);
  return out;
}
}  // namespace

void InfiniAttentionLayer::take_back(uint32_t tokens) {
  if (tokens > open_)
    throw Error("infini attention: cannot take back " + std::to_string(tokens) + " tokens of an open segment of " +
                std::to_string(open_));
  if (options_.sliding && segments_written_ > 0 && open_ - tokens < segment_ - 1)
    throw Error("infini attention: cannot take back " + std::to_string(tokens) +
                " tokens: the sliding context has moved past the keys its window would need again");
  open_ -= tokens;
}

void InfiniAttentionLayer::advance(uint32_t tokens) {
  if (tokens > segment_room())
    throw Error("infini attention: " + std::to_string(tokens) + " tokens do not fit the " +
                std::to_string(segment_room()) + " left in the open segment");
  open_ += tokens;
  if (open_ == rows_) {
    open_ = options_.sliding ? segment_ - 1 : 0;
    ++segments_written_;
  }
}

LayerSnapshot InfiniAttentionLayer::snapshot() const {
  const AttentionShape& s = shape_;
  const uint64_t es = scalar_bytes(input_);
  LayerSnapshot state;
  state.open = open_;
  state.segments_written = segments_written_;
  state.m = read_bytes(m_, elements(s.heads_kv, s.head_dim, s.value_dim) * 4);
  state.z = read_bytes(z_, elements(s.heads_kv, s.head_dim, 1) * 4);
  state.k = read_bytes(cache_k_, elements(open_, s.heads_kv, s.head_dim) * es);
  state.v = read_bytes(cache_v_, elements(open_, s.heads_kv, s.value_dim) * es);
  state.kr = read_bytes(cache_kr_, elements(open_, s.heads_kv, s.head_dim) * 4);
  return state;
}

bool InfiniAttentionLayer::fits(const LayerSnapshot& state) const {
  const AttentionShape& s = shape_;
  const uint64_t es = scalar_bytes(input_);
  if (state.open >= rows_ || state.segments_written < 0) return false;
  if (options_.sliding && state.segments_written > 0 && state.open < segment_ - 1) return false;
  return state.m.size() == elements(s.heads_kv, s.head_dim, s.value_dim) * 4 &&
                    state.z.size() == elements(s.heads_kv, s.head_dim, 1) * 4 &&
                    state.k.size() == elements(state.open, s.heads_kv, s.head_dim) * es &&
                    state.v.size() == elements(state.open, s.heads_kv, s.value_dim) * es &&
                    state.kr.size() == elements(state.open, s.heads_kv, s.head_dim) * 4;
}

void InfiniAttentionLayer::restore(const LayerSnapshot& state) {
  if (!fits(state))
    throw Error("infini attention: saved state (" + std::to_string(state.open) +
                " open tokens) does not match this layer's segment length, shape or input type");
  auto write = [](const vk::Buffer& b, const std::vector<std::byte>& bytes) {
    if (!bytes.empty()) vk::upload(b, 0, bytes.data(), bytes.size());
  };
  write(m_, state.m);
  write(z_, state.z);
  write(cache_k_, state.k);
  write(cache_v_, state.v);
  write(cache_kr_, state.kr);
  open_ = state.open;
  segments_written_ = state.segments_written;
}

}  // namespace infini::ops
