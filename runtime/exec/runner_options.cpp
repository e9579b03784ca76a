#include "exec/llama_runner.hpp"

#include <algorithm>

namespace infini::model {

RunnerOptions resolve_runner_options(const LlamaConfig& c, MemoryMode memory, int64_t segment, uint32_t max_piece,
                                     int64_t context, int64_t sinks) {
  RunnerOptions o;
  o.infini = c.has_infini_keys ? c.infini : InfiniOptions{};
  o.infini.memory = memory == MemoryMode::Auto ? c.has_infini_keys : memory == MemoryMode::On;
  // A plain file with memory off, or an Infini file asked for memory off with a context: its local
  // attention alone, as a sliding window (the memory and its gates unused).
  if (!o.infini.memory && (!c.has_infini_keys || context > 0)) {
    o.infini.sliding = true;
    o.infini.sinks = sinks;
    o.infini.segment = context > 0   ? context
                       : segment > 0 ? segment
                       : c.context_length > 0 ? std::min(c.context_length, kMaxSegment / 2)
                                              : kDefaultSegment;
  } else if (segment > 0) {
    o.infini.segment = segment;
  } else if (!c.has_infini_keys) {
    o.infini.segment = kDefaultSegment;
  }
  o.max_piece = max_piece;
  return o;
}

uint64_t context_token_bytes(const LlamaConfig& c) {
  return uint64_t(c.layers) * uint64_t(c.heads_kv) * uint64_t(2 * c.head_dim + c.head_dim) * 4;
}

uint64_t stream_state_bytes(const LlamaConfig& c, const InfiniOptions& o) {
  const uint64_t memory = o.memory ? uint64_t(c.layers) * uint64_t(c.heads_kv) * uint64_t(c.head_dim) *
                                         uint64_t(c.head_dim + 1) * 4
                                   : 0;
  return memory + context_token_bytes(c) * ops::cache_rows(o);
}

}  // namespace infini::model
