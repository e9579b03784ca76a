#pragma once
// One decode step of many streams of a model on one device as one pass: each stream (a LayerStage
// holding the whole model) gives its next token, the projections, FFN and logits run once over
// all of their rows, so the weights are read once for the batch, and each stream's attention
// reads and advances its own state (graph/llama_graph.hpp, record_batch). A stream's logits also
// land where its stage keeps its last logits, so it goes on alone afterwards (feeding, saving,
// whole rows) as if it had fed the token itself.
//
// The step is recorded anew each time (its streams change from step to step); streams whose
// state is in the middle of a piece (in flight) are refused.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "exec/layer_stage.hpp"
#include "graph/device_weights.hpp"
#include "graph/graph_options.hpp"
#include "graph/llama_graph.hpp"
#include "ops/top_k.hpp"
#include "vk/buffer.hpp"
#include "vk/command_stream.hpp"
#include "vk/staged_buffer.hpp"

namespace infini::model {

class BatchDecoder {
 public:
  // Steps of 1..max_batch streams of `weights` (the whole model, on `device`).
  BatchDecoder(vk::Device& device, std::shared_ptr<const DeviceWeights> weights, const LlamaConfig& config,
               const GraphOptions& options, uint32_t max_batch);
  ~BatchDecoder();

  struct Entry {
    LayerStage* stage;  // the stream: a stage with the whole model on this decoder's weights
    int32_t token;      // its next token (checked against the vocabulary)
  };
  // Feeds each entry's token to its stream and gives back, per entry, the k (1..ops::TopK::kMaxK)
  // best logits of that token, ranked as LlamaRunner::forward_ranked ranks them. Throws naming the
  // problem, having fed nothing, when an entry cannot join (another model or device, a stream
  // with work in flight, a token outside the vocabulary, one stream twice, too many).
  std::vector<std::vector<ops::RankedLogit>> step(std::span<const Entry> entries, uint32_t k);

  uint32_t max_batch() const noexcept { return max_batch_; }
  const DeviceWeights& weights() const noexcept { return graph_.weights(); }
  vk::Device& device() const noexcept { return device_; }

 private:
  void check(std::span<const Entry> entries, uint32_t k) const;

  vk::Device& device_;
  LlamaConfig config_;
  uint32_t max_batch_;
  LlamaGraph graph_;  // without attention state: the streams bring theirs
  vk::StagedBuffer ids_io_, ranked_io_;
  vk::Buffer x_, logits_;
  std::vector<vk::Buffer> positions_, attention_out_;  // per row
  vk::CommandStream stream_;
};

}  // namespace infini::model
