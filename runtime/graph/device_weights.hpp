#pragma once
// A model's weights for layers [first, last) on one device, uploaded once and read-only after:
// every LlamaGraph of those layers on that device reads the same buffers, so many sessions of one
// Model cost one copy of the weights and each only its own stream state and activations.
// DeviceWeightCache hands them out; the copy is freed with the last graph that reads it.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <tuple>
#include <vector>

#include "graph/kernel_tuning.hpp"
#include "model/llama_weights.hpp"
#include "ops/row_chunks.hpp"
#include "vk/buffer.hpp"

namespace infini::vk {
class Device;
}

namespace infini::model {

struct LayerRange {
  int64_t first = 0, last = 0;  // [first, last)
  int64_t count() const noexcept { return last - first; }
};

// One layer's tensors on the device: matrices as the file stores them (in row chunks), norms and
// biases as f32, the memory gate's logits on the host (the attention layer uploads its own).
struct DeviceLayerWeights {
  vk::Buffer attn_norm, ffn_norm;
  std::unique_ptr<vk::Buffer> bq, bk, bv, q_norm, k_norm;  // qwen2's biases, qwen3's Q/K norms
  ops::RowChunks wq, wk, wv, wo, w_gate, w_up, w_down;
  std::vector<float> gate_logits;  // gate_values() of the file's gate shape; zeros when the file has none
  struct MatrixTypes {
    ElementType wq, wk, wv, wo, ffn_gate, ffn_up, ffn_down;
  } types;  // how the matrices are stored (which kernels read them)

  DeviceLayerWeights(vk::Device& device, const LlamaLayerWeights& w, int64_t gates);
};

class DeviceWeights {
 public:
  // Uploads the tensors of `range` (the embedding when it starts at layer 0, the final norm and
  // the output matrix when it ends at the last layer). Throws naming the device when they exceed
  // its largest memory heap (before uploading anything). `tune`: how the prefill pieces' matmul
  // kernels and the attention family are chosen for these weights (graph/kernel_tuning.hpp); Off
  // keeps the rules. The attention is measured under `attention` (a runner's options; null: the
  // model's own); graphs under other segment lengths or contexts keep the rule.
  DeviceWeights(vk::Device& device, const LlamaWeights& weights, LayerRange range, TuneMode tune = TuneMode::Off,
                const InfiniOptions* attention = nullptr);

  vk::Device& device() const noexcept { return device_; }
  LayerRange range() const noexcept { return range_; }
  const DeviceLayerWeights& layer(int64_t i) const { return layers_.at(size_t(i - range_.first)); }
  // The embedding table (the range that starts at 0, or the head of a tied model), else null.
  const ops::RowChunks* token_embd() const noexcept { return token_embd_.get(); }
  const vk::Buffer* output_norm() const noexcept { return output_norm_.get(); }
  // The matrix the logits are computed with (the head only): output.weight, or the embedding
  // table of a model whose output is tied to it.
  const ops::RowChunks* output() const noexcept { return output_ ? output_.get() : token_embd_.get(); }
  ElementType token_embd_type() const noexcept { return token_embd_type_; }
  ElementType output_type() const noexcept { return output_type_; }
  // The autotuner's choices for these weights (empty when tuning is off).
  const KernelTunings& tunings() const noexcept { return tunings_; }
  // The kernel a prefill piece's product with a weight of this type and shape runs, when tuned.
  std::optional<ops::MatmulChoice> piece_choice(ElementType b, int64_t n, int64_t k) const;
  // The attention family of layers of this key, when tuned to other than the rule.
  std::optional<ops::AttentionKernel> attention_choice(const AttentionShapeKey& key) const;

 private:
  vk::Device& device_;
  LayerRange range_;
  std::vector<DeviceLayerWeights> layers_;
  std::unique_ptr<ops::RowChunks> token_embd_;  // embeds, or the head of a tied model
  std::unique_ptr<vk::Buffer> output_norm_;     // head
  std::unique_ptr<ops::RowChunks> output_;      // head, not tied
  ElementType token_embd_type_, output_type_;
  KernelTunings tunings_;
};

// The bytes the weights of `range` take on a device (matrices as stored, vectors as f32), before
// the driver's alignment of each buffer.
uint64_t device_weight_bytes(const LlamaWeights& weights, LayerRange range);

// The device copies of one model's weights, by device and layer range, shared by whoever asks
// while any holds them; and the model's split over a list of devices, taken once (a split by free
// memory taken after the first upload would differ, and share nothing). Thread-safe.
class DeviceWeightCache {
 public:
  std::shared_ptr<const DeviceWeights> get(vk::Device& device, const LlamaWeights& weights, LayerRange range,
                                           TuneMode tune = TuneMode::Off, const InfiniOptions* attention = nullptr);
  // The split `compute()` gives for these devices the first time they are asked for.
  std::vector<int64_t> split(std::span<vk::Device* const> devices, const std::function<std::vector<int64_t>()>& compute);

 private:
  using Key = std::tuple<const vk::Device*, int64_t, int64_t>;
  std::mutex mutex_;
  std::map<Key, std::weak_ptr<const DeviceWeights>> copies_;
  std::map<std::vector<const vk::Device*>, std::vector<int64_t>> splits_;
};

}  // namespace infini::model
