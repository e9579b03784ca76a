#pragma once
// One decode step of many streams of a model as one pass: each stream (a LlamaRunner) gives its
// next token, and on each device of the model's pipeline the projections, FFN and logits run once
// over all of their rows, so the weights are read once for the batch, while each stream's
// attention reads and advances its own state (graph/llama_graph.hpp, record_batch). Between the
// devices of a pipeline the batch's hidden states pass through the host. A stream's logits also
// land where its head stage keeps its last logits, so it goes on alone afterwards (feeding,
// saving, whole rows) as if it had fed the token itself.
//
// The step is recorded anew each time (its streams change from step to step); streams whose
// stages have work in flight are refused.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "exec/llama_runner.hpp"
#include "graph/device_weights.hpp"
#include "graph/graph_options.hpp"
#include "ops/top_k.hpp"

namespace infini::model {

class BatchDecoder {
 public:
  // Steps of 1..max_batch streams whose model's layers are `stages` (one copy of the weights per
  // device, in pipeline order; one: the whole model on one device).
  BatchDecoder(std::span<const std::shared_ptr<const DeviceWeights>> stages, const LlamaConfig& config,
               const GraphOptions& options, uint32_t max_batch);
  ~BatchDecoder();

  struct Entry {
    LlamaRunner* runner;  // the stream: its stages run on this decoder's weights
    int32_t token;        // its next token (checked against the vocabulary)
  };
  // Feeds each entry's token to its stream and gives back, per entry, the k (1..ops::TopK::kMaxK)
  // best logits of that token, ranked as LlamaRunner::forward_ranked ranks them. Throws naming the
  // problem, having fed nothing, when an entry cannot join (other weights, work in flight, a
  // token outside the vocabulary, one stream twice, too many).
  std::vector<std::vector<ops::RankedLogit>> step(std::span<const Entry> entries, uint32_t k);

  uint32_t max_batch() const noexcept { return max_batch_; }

 private:
  struct Stage;
  void check(std::span<const Entry> entries, uint32_t k) const;

  LlamaConfig config_;
  uint32_t max_batch_;
  std::vector<std::unique_ptr<Stage>> stages_;
};

}  // namespace infini::model
