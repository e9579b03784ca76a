#pragma once
// Layers [first, last) of a Llama-family model on one device as a graph of kernels: the kernels
// that read their weights (a DeviceWeights copy, which many graphs share), each layer's
// Infini-attention state, the activations of one piece, and the forward pass of
// docs/design.md §3.1 recorded into a command stream. The graph that starts at layer 0 also
// embeds the tokens, the one that ends at the last layer also computes logits (and ranks them).
// Running it (staging the host's inputs and outputs, caching recordings, submitting, chains,
// profiles) is the execution stage's work (exec/layer_stage.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "graph/device_weights.hpp"
#include "graph/graph_options.hpp"
#include "model/llama_weights.hpp"
#include "ops/infini_attention_layer.hpp"
#include "ops/layer_snapshot.hpp"
#include "ops/row_chunks.hpp"
#include "ops/top_k.hpp"
#include "vk/buffer.hpp"
#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
}

namespace infini::model {

// The buffers a piece reads and writes outside the graph (the stage stages them).
struct PieceIO {
  const vk::Buffer* ids = nullptr;       // token ids (the graph that embeds)
  const vk::Buffer* x = nullptr;         // the residual stream [n][embd]: hidden states in and out
  const vk::Buffer* position = nullptr;  // the open segment's length when the piece runs (one word)
  const vk::Buffer* logits = nullptr;    // rows of logits (the graph with the head)
  const vk::Buffer* ranked = nullptr;    // ops::TopK's pairs of the last row (the graph with the head)
};

// What a batched decode step (LlamaGraph::record_batch) reads and writes besides the streams'
// attention state: row b of each is stream b's.
struct BatchIO {
  const vk::Buffer* ids = nullptr;     // [B] token ids (the graph that embeds)
  const vk::Buffer* x = nullptr;       // [B][embd] the residual stream: hidden states in and out
  const vk::Buffer* logits = nullptr;  // [B][vocab] (the graph with the head, as `ranked`)
  const vk::Buffer* ranked = nullptr;  // B rows of ops::TopK pairs, each ranked_stride bytes apart
  uint64_t ranked_stride = 0;          // a multiple of the device's storage buffer offset alignment
  uint32_t top_k = 1;
  // Per stream: the open segment's length (one word, written by the caller before the step) and
  // one token's attention output [Hq][Dv], which the step copies into its row of the batch.
  std::span<const vk::Buffer* const> positions, attention_out;
};

class LlamaGraph {
 public:
  // Reads `weights` (on `device`; its range is the graph's); activations for pieces of up to
  // max_piece tokens. The graph holds the weights as long as it lives. Without attention state
  // the graph only records batched steps over other graphs' state (record_batch): it holds the
  // kernels and the activations of max_piece rows, and no layer's segment or memory.
  LlamaGraph(vk::Device& device, std::shared_ptr<const DeviceWeights> weights, const LlamaConfig& config,
             const GraphOptions& options, uint32_t max_piece, bool attention_state = true);
  ~LlamaGraph();

  bool embeds() const noexcept { return range_.first == 0; }
  bool has_head() const noexcept { return range_.last == config_.layers; }
  LayerRange range() const noexcept { return range_; }
  const LlamaConfig& config() const noexcept { return config_; }
  size_t layer_count() const noexcept { return size_t(range_.count()); }

  // The forward pass of a piece of n tokens (inside one segment): the embedding (or the hidden
  // states in io.x), the layers, and with rows > 0 the final norm and the logits of the piece's
  // last `rows` rows into rows logits_row.. of io.logits, ranked (top_k > 0, rows 1) into io.ranked.
  // The attention state's bookkeeping advances as it records.
  void record_piece(vk::CommandStream& stream, const PieceIO& io, uint32_t n, uint32_t rows, uint32_t top_k,
                    uint32_t logits_row = 0);

  // One decode step of B = streams.size() streams (graphs of this graph's layers with their own
  // attention state, on its device and weights): row b is stream b's next token, at its own
  // position, embedded from io.ids (the graph that embeds) or given in io.x. The projections, the
  // FFN and the logits run once over the B rows (each weight read once for all of them); each
  // stream's attention reads and advances its own state (a segment that fills writes its memory,
  // a full sliding context slides). The graph with the head puts the logits of every row into
  // io.logits and ranks each (io.top_k best) into its row of io.ranked; the others leave the
  // hidden states in io.x. This graph must be one without attention state, made for at least B
  // rows.
  void record_batch(vk::CommandStream& stream, const BatchIO& io, std::span<LlamaGraph* const> streams);
  const DeviceWeights& weights() const noexcept { return *weights_; }
  const std::shared_ptr<const DeviceWeights>& shared_weights() const noexcept { return weights_; }
  uint32_t max_piece() const noexcept { return max_piece_; }

  // The attention state of every layer: the first layer's open segment stands for all of them.
  const ops::InfiniAttentionLayer& first_attention() const;
  uint32_t segment_room() const { return first_attention().segment_room(); }
  void advance(uint32_t tokens);    // as a replayed recording of `tokens` tokens does
  void take_back(uint32_t tokens);  // forgets the last tokens of the open segment
  void record_reset(vk::CommandStream& stream);
  std::vector<ops::LayerSnapshot> snapshot() const;
  bool fits(std::span<const ops::LayerSnapshot> layers) const;
  void restore(std::span<const ops::LayerSnapshot> layers);

 private:
  struct Layer;
  struct Kernels;
  struct Activations;
  // The layers' work on the residual stream of n rows; `attend(i, q, k)` records layer i's
  // attention of the piece's Q (q), K (k) and V (the activations' v) into the activations' attn.
  using Attend = std::function<void(size_t layer, const vk::Buffer& q, const vk::Buffer& k)>;
  void record_layers(vk::CommandStream& stream, const vk::Buffer& x, uint32_t n, const Attend& attend);
  // The final norm and logits of rows [n - rows, n) of x into rows logits_row.. of `logits`.
  void record_logits(vk::CommandStream& stream, const vk::Buffer& x, const vk::Buffer& logits, uint32_t n,
                     uint32_t rows, uint32_t logits_row);
  vk::Device& device_;
  LlamaConfig config_;
  LayerRange range_;
  bool fused_steps_;
  uint32_t max_piece_;
  std::shared_ptr<const DeviceWeights> weights_;
  std::unique_ptr<Kernels> kernels_;
  std::vector<Layer> layers_;
  std::unique_ptr<ops::Matmul> logits_matmul_;   // head
  std::unique_ptr<ops::TopK> top_k_;             // head
  std::unique_ptr<Activations> activations_;
};

// Most tokens per piece whose activations fit one buffer of `device` (at most `wanted`); throws
// naming the limit when not even one token fits.
uint32_t max_piece_for(const vk::Device& device, const LlamaConfig& config, uint32_t wanted);

}  // namespace infini::model
