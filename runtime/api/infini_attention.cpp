#include "infini/infini_attention.hpp"

#include <algorithm>
#include <string>

#include "api/context_access.hpp"
#include "ops/host_tensor.hpp"
#include "ops/infini_attention_layer.hpp"
#include "vk/device.hpp"
#include "vk/transfer.hpp"
#include "util/scalar_bytes.hpp"

namespace infini {

// Host-visible inputs and output of one segment's worth of tokens, reused for every call.
struct InfiniAttention::Impl {
  vk::Device& device;
  ops::InfiniAttentionLayer layer;
  vk::Buffer q, k, v, out;
  vk::CommandStream stream;
  int64_t tokens = 0;

  Impl(vk::Device& d, const AttentionShape& s, const InfiniOptions& o, std::span<const float> beta, ElementType t)
      : device(d),
        layer(d, s, o, t, beta),
        q(d, bytes(o.segment, s.heads_q, s.head_dim, t), vk::MemoryUse::Upload, "Q input"),
        k(d, bytes(o.segment, s.heads_kv, s.head_dim, t), vk::MemoryUse::Upload, "K input"),
        v(d, bytes(o.segment, s.heads_kv, s.value_dim, t), vk::MemoryUse::Upload, "V input"),
        out(d, bytes(o.segment, s.heads_q, s.value_dim, ElementType::F32), vk::MemoryUse::Readback, "A output"),
        stream(d) {}

  static uint64_t bytes(int64_t tokens, int heads, int dim, ElementType t) {
    return (uint64_t(tokens) * uint64_t(heads) * uint64_t(dim) * scalar_bytes(t) + 3) / 4 * 4;
  }

  template <typename T>
  std::vector<float> process(std::span<const T> qs, std::span<const T> ks, std::span<const T> vs, int64_t n) {
    const AttentionShape& s = layer.shape();
    const ElementType want = sizeof(T) == 2 ? ElementType::F16 : ElementType::F32;
    if (layer.input_type() != want)
      throw Error(std::string("infini attention: the layer takes ") + std::string(element_name(layer.input_type())) +
                  " inputs, got " + std::string(element_name(want)));
    const size_t q_row = size_t(s.heads_q) * s.head_dim, k_row = size_t(s.heads_kv) * s.head_dim,
                 v_row = size_t(s.heads_kv) * s.value_dim, o_row = size_t(s.heads_q) * s.value_dim;
    if (n < 0 || qs.size() != size_t(n) * q_row || ks.size() != size_t(n) * k_row || vs.size() != size_t(n) * v_row)
      throw Error("infini attention: for " + std::to_string(n) + " tokens Q, K, V need " +
                  std::to_string(size_t(n) * q_row) + ", " + std::to_string(size_t(n) * k_row) + ", " +
                  std::to_string(size_t(n) * v_row) + " values, got " + std::to_string(qs.size()) + ", " +
                  std::to_string(ks.size()) + ", " + std::to_string(vs.size()));
    std::vector<float> result(size_t(n) * o_row);
    for (int64_t done = 0; done < n;) {
      // Pieces end at segment boundaries, so each one is a single record of the layer.
      const int64_t piece = std::min<int64_t>(n - done, layer.segment_room());
      vk::upload(q, 0, qs.data() + done * q_row, piece * q_row * sizeof(T));
      vk::upload(k, 0, ks.data() + done * k_row, piece * k_row * sizeof(T));
      vk::upload(v, 0, vs.data() + done * v_row, piece * v_row * sizeof(T));
      stream.begin();
      layer.record(stream, {&q, 0}, {&k, 0}, {&v, 0}, out, uint32_t(piece));
      stream.end();
      stream.submit_and_wait();
      vk::download(out, 0, result.data() + done * o_row, piece * o_row * sizeof(float));
      done += piece;
    }
    tokens += n;
    return result;
  }

  void run(void (ops::InfiniAttentionLayer::*what)(vk::CommandStream&)) {
    stream.begin();
    (layer.*what)(stream);
    stream.end();
    stream.submit_and_wait();
  }
};

InfiniAttention::InfiniAttention(Context& context, const AttentionShape& shape, const InfiniOptions& options,
                                 std::span<const float> beta, ElementType input)
    : impl_(std::make_unique<Impl>(ContextAccess::first_device(context), shape, options, beta,
                                     input == ElementType::F16 ? ElementType::F16 : ElementType::F32)) {}

InfiniAttention::~InfiniAttention() = default;
InfiniAttention::InfiniAttention(InfiniAttention&&) noexcept = default;
InfiniAttention& InfiniAttention::operator=(InfiniAttention&&) noexcept = default;

std::vector<float> InfiniAttention::process(std::span<const float> q, std::span<const float> k,
                                            std::span<const float> v, int64_t tokens) {
  return impl_->process(q, k, v, tokens);
}

std::vector<float> InfiniAttention::process(std::span<const uint16_t> q, std::span<const uint16_t> k,
                                            std::span<const uint16_t> v, int64_t tokens) {
  return impl_->process(q, k, v, tokens);
}

void InfiniAttention::finish() { impl_->run(&ops::InfiniAttentionLayer::record_finish); }

void InfiniAttention::reset() {
  impl_->run(&ops::InfiniAttentionLayer::record_reset);
  impl_->tokens = 0;
}

std::vector<float> InfiniAttention::memory() const {
  const AttentionShape& s = impl_->layer.shape();
  return ops::download_floats(impl_->layer.memory(), size_t(s.heads_kv) * s.head_dim * s.value_dim);
}

std::vector<float> InfiniAttention::norm() const {
  const AttentionShape& s = impl_->layer.shape();
  return ops::download_floats(impl_->layer.norm(), size_t(s.heads_kv) * s.head_dim);
}

int64_t InfiniAttention::tokens_processed() const noexcept { return impl_->tokens; }
int64_t InfiniAttention::segments_written() const noexcept { return impl_->layer.segments_written(); }
const AttentionShape& InfiniAttention::shape() const noexcept { return impl_->layer.shape(); }

}  // namespace infini
