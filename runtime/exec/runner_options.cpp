#include "exec/llama_runner.hpp"

namespace infini::model {

RunnerOptions resolve_runner_options(const LlamaConfig& c, MemoryMode memory, int64_t segment,
                                     uint32_t max_piece) {
  RunnerOptions o;
  o.infini = c.has_infini_keys ? c.infini : InfiniOptions{};
  o.infini.memory = memory == MemoryMode::Auto ? c.has_infini_keys : memory == MemoryMode::On;
  if (segment > 0) o.infini.segment = segment;
  else if (!c.has_infini_keys) o.infini.segment = kDefaultSegment;
  o.max_piece = max_piece;
  return o;
}

}  // namespace infini::model
