#include "graph/device_weights.hpp"

#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <string>

#include "infini/error.hpp"
#include "model/tensor_values.hpp"
#include "vk/device.hpp"
#include "vk/transfer.hpp"

namespace infini::model {
namespace {

// Weight matrices are stored on the device exactly as in the file (f32 or packed f16), in as
// many row chunks as the device's buffer limits need (one on most devices).
ops::RowChunks upload_matrix(vk::Device& device, const TensorView& t) {
  const uint64_t rows = t.shape.size() > 1 ? uint64_t(t.shape[1]) : 1;
  return ops::RowChunks(device, t.name, t.data, rows, t.data.size() / std::max<uint64_t>(rows, 1),
                        ops::max_chunk_bytes(device.caps()));
}

// Norm weights are small and read as f32 by the kernels.
vk::Buffer upload_f32(vk::Device& device, const TensorView& t) {
  const std::vector<double> wide = widen_all(t);
  const std::vector<float> values(wide.begin(), wide.end());
  vk::Buffer b(device, values.size() * 4, vk::MemoryUse::DeviceLocal, t.name);
  vk::upload(b, std::span<const float>(values));
  return b;
}

// An optional f32 vector on the device, when the file has it.
std::unique_ptr<vk::Buffer> upload_optional(vk::Device& d, const std::optional<TensorView>& t) {
  return t ? std::make_unique<vk::Buffer>(upload_f32(d, *t)) : nullptr;
}

std::vector<float> gate_logits(const LlamaLayerWeights& w, int64_t count) {
  std::vector<float> beta(size_t(count), 0.0f);
  if (w.mem_gate) {
    const std::vector<double> b = widen_all(*w.mem_gate);
    std::copy_n(b.begin(), std::min(b.size(), beta.size()), beta.begin());
  }
  return beta;
}

bool is_tied(const LlamaWeights& w) { return w.output.data.data() == w.token_embd.data.data(); }

}  // namespace

DeviceLayerWeights::DeviceLayerWeights(vk::Device& d, const LlamaLayerWeights& w, int64_t gates)
    : attn_norm(upload_f32(d, w.attn_norm)),
      ffn_norm(upload_f32(d, w.ffn_norm)),
      bq(upload_optional(d, w.bq)),
      bk(upload_optional(d, w.bk)),
      bv(upload_optional(d, w.bv)),
      q_norm(upload_optional(d, w.q_norm)),
      k_norm(upload_optional(d, w.k_norm)),
      wq(upload_matrix(d, w.wq)),
      wk(upload_matrix(d, w.wk)),
      wv(upload_matrix(d, w.wv)),
      wo(upload_matrix(d, w.wo)),
      w_gate(upload_matrix(d, w.ffn_gate)),
      w_up(upload_matrix(d, w.ffn_up)),
      w_down(upload_matrix(d, w.ffn_down)),
      gate_logits(model::gate_logits(w, gates)),
      types{w.wq.type, w.wk.type, w.wv.type, w.wo.type, w.ffn_gate.type, w.ffn_up.type, w.ffn_down.type} {}

uint64_t device_weight_bytes(const LlamaWeights& w, LayerRange range) {
  auto as_f32 = [](const std::optional<TensorView>& t) { return t ? 4 * uint64_t(t->elements()) : 0; };
  const bool head = range.last == w.config.layers;
  uint64_t bytes = 0;
  if (range.first == 0 || (head && is_tied(w))) bytes += w.token_embd.data.size();
  if (head) bytes += 4 * uint64_t(w.output_norm.elements()) + (is_tied(w) ? 0 : w.output.data.size());
  for (int64_t i = range.first; i < range.last; ++i) {
    const LlamaLayerWeights& l = w.layers[size_t(i)];
    for (const TensorView* t : {&l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) bytes += t->data.size();
    bytes += 4 * uint64_t(l.attn_norm.elements() + l.ffn_norm.elements());
    for (const std::optional<TensorView>* t : {&l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm}) bytes += as_f32(*t);
  }
  return bytes;
}

// Throws naming the device when the weights of `range` alone exceed its largest memory heap.
static void check_stage_fits(const vk::Device& device, const LlamaWeights& w, LayerRange range) {
  const uint64_t bytes = device_weight_bytes(w, range);
  const uint64_t heap = device.caps().largest_device_local_heap;
  if (heap && bytes > heap)
    throw Error("model: the weights of layers " + std::to_string(range.first) + "-" + std::to_string(range.last - 1) +
                " need " + std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) +
                " MiB) of device memory; the largest device-local memory heap of '" + device.caps().name + "' has " +
                std::to_string(heap) + " bytes (" + std::to_string(heap >> 20) + " MiB)");
}

DeviceWeights::DeviceWeights(vk::Device& device, const LlamaWeights& weights, LayerRange range, TuneMode tune,
                             const InfiniOptions* attention)
    : device_(device), range_(range), token_embd_type_(weights.token_embd.type), output_type_(weights.output.type) {
  const LlamaConfig& c = weights.config;
  if (range.first < 0 || range.last > c.layers || range.count() < 1)
    throw Error("model: layer range " + std::to_string(range.first) + "-" + std::to_string(range.last - 1) +
                " is not inside the model's " + std::to_string(c.layers) + " layers");
  check_stage_fits(device, weights, range);
  const bool head = range.last == c.layers;
  if (range.first == 0 || (head && is_tied(weights)))
    token_embd_ = std::make_unique<ops::RowChunks>(upload_matrix(device, weights.token_embd));
  layers_.reserve(size_t(range.count()));
  const int64_t gates = gate_values(attention_shape(c), c.infini.gate_shape);
  for (int64_t i = range.first; i < range.last; ++i) layers_.emplace_back(device, weights.layers[size_t(i)], gates);
  if (head) {
    output_norm_ = std::make_unique<vk::Buffer>(upload_f32(device, weights.output_norm));
    if (!is_tied(weights)) output_ = std::make_unique<ops::RowChunks>(upload_matrix(device, weights.output));
  }
  // Measured once per shape and device (then cached on disk): say so where someone watches.
  const bool watched = ::isatty(2) != 0;
  tunings_ = tune_kernels(
      *this, c, attention ? *attention : c.infini, tune,
      [&](size_t done, size_t total, const std::string&) {
        if (watched)
          std::fprintf(stderr, "\rinfini: measuring kernels on %s: %zu of %zu shapes%s", device.caps().name.c_str(), done,
                       total, done == total ? "\n" : "");
      },
      kOpenTuneSeconds);
}

std::optional<ops::MatmulChoice> DeviceWeights::piece_choice(ElementType b, int64_t n, int64_t k) const {
  const auto it = tunings_.matmuls.find({b, uint32_t(n), uint32_t(k)});
  if (it == tunings_.matmuls.end()) return std::nullopt;
  return it->second.choice;
}

std::optional<ops::AttentionKernel> DeviceWeights::attention_choice(const AttentionShapeKey& key) const {
  const auto it = tunings_.attention.find(key);
  if (it == tunings_.attention.end() || it->second.kernel == ops::AttentionKernel::Auto) return std::nullopt;
  return it->second.kernel;
}

std::shared_ptr<const DeviceWeights> DeviceWeightCache::get(vk::Device& device, const LlamaWeights& weights,
                                                            LayerRange range, TuneMode tune,
                                                            const InfiniOptions* attention) {
  std::lock_guard lock(mutex_);
  std::erase_if(copies_, [](const auto& entry) { return entry.second.expired(); });
  std::weak_ptr<const DeviceWeights>& slot = copies_[Key{&device, range.first, range.last}];
  if (auto held = slot.lock()) return held;
  auto made = std::make_shared<const DeviceWeights>(device, weights, range, tune, attention);  // under the lock: one upload
  slot = made;
  return made;
}

std::vector<int64_t> DeviceWeightCache::split(std::span<vk::Device* const> devices,
                                              const std::function<std::vector<int64_t>()>& compute) {
  std::lock_guard lock(mutex_);
  const std::vector<const vk::Device*> key(devices.begin(), devices.end());
  auto it = splits_.find(key);
  if (it == splits_.end()) it = splits_.emplace(key, compute()).first;
  return it->second;
}

}  // namespace infini::model
