#include "support/attention_harness.hpp"

#include <algorithm>
#include <cstring>

#include "support/gpu_fixture.hpp"
#include "ops/host_tensor.hpp"
#include "ops/infini_attention_layer.hpp"
#include "reference/infini_attention_reference.hpp"
#include "vk/transfer.hpp"

namespace infini::test {

StreamInputs random_stream(const AttentionShape& shape, int64_t tokens, uint32_t seed) {
  StreamInputs in{shape, tokens, {}, {}, {}, {}};
  const size_t t = size_t(tokens);
  in.q = random_floats(t * shape.heads_q * shape.head_dim, seed, -1.5f, 1.5f);
  in.k = random_floats(t * shape.heads_kv * shape.head_dim, seed + 1, -1.5f, 1.5f);
  in.v = random_floats(t * shape.heads_kv * shape.value_dim, seed + 2);
  in.beta = random_floats(size_t(shape.heads_q), seed + 3, -2.0f, 2.0f);
  return in;
}

StreamResult run_device_layer(const StreamInputs& in, const InfiniOptions& options, ElementType input, int64_t chunk,
                              ops::AttentionKernel kernel, bool fuse_decode) {
  vk::Device& dev = device();
  const AttentionShape& s = in.shape;
  ops::InfiniAttentionLayer layer(dev, s, options, input, in.beta, kernel);
  layer.fuse_decode_steps(fuse_decode);
  vk::Buffer q = ops::upload_tensor(dev, in.q, input, "Q");
  vk::Buffer k = ops::upload_tensor(dev, in.k, input, "K");
  vk::Buffer v = ops::upload_tensor(dev, in.v, input, "V");

  constexpr uint32_t kSentinel = 0x7fc0beef, kGuardWords = 61;
  const size_t row = size_t(s.heads_q) * s.value_dim;
  const size_t out_words = size_t(options.segment) * row + kGuardWords;
  vk::Buffer out(dev, out_words * 4, vk::MemoryUse::DeviceLocal, "out");
  vk::CommandStream stream(dev);

  StreamResult result;
  result.kernel = layer.attention_kernel();
  result.memory_kernel = layer.memory_kernel();
  result.fused_decode = layer.fuses_decode_steps();
  result.out.reserve(size_t(in.tokens) * row);
  int64_t done = 0;
  while (done < in.tokens) {
    int64_t n = std::min<int64_t>(in.tokens - done, layer.segment_room());
    if (chunk > 0) n = std::min(n, chunk);
    const std::vector<uint32_t> guard(out_words, kSentinel);
    vk::upload(out, std::span<const uint32_t>(guard));
    stream.begin();
    layer.record(stream, {&q, uint32_t(done)}, {&k, uint32_t(done)}, {&v, uint32_t(done)}, out, uint32_t(n));
    stream.end();
    stream.submit_and_wait();
    std::vector<uint32_t> raw(out_words);
    vk::download(out, std::span<uint32_t>(raw));
    for (size_t i = 0; i < raw.size(); ++i) {
      if (i < size_t(n) * row) {
        float f;
        std::memcpy(&f, &raw[i], 4);
        result.out.push_back(f);
      } else if (raw[i] != kSentinel) {
        ++result.guard_violations;
      }
    }
    done += n;
  }
  stream.begin();
  layer.record_finish(stream);
  stream.end();
  stream.submit_and_wait();
  result.memory = ops::download_floats(layer.memory(), size_t(s.heads_kv) * s.head_dim * s.value_dim);
  result.norm = ops::download_floats(layer.norm(), size_t(s.heads_kv) * s.head_dim);
  return result;
}

ReferenceResult run_reference_layer(const StreamInputs& in, const InfiniOptions& options, ElementType input) {
  const auto freqs = rope::rope_frequencies(options.rope, in.shape.head_dim, options.segment);
  const auto q = ops::as_stored(in.q, input), k = ops::as_stored(in.k, input), v = ops::as_stored(in.v, input);
  const std::vector<double> beta(in.beta.begin(), in.beta.end());
  reference::MemoryState state = reference::MemoryState::zeros(in.shape);
  ReferenceResult r;
  r.out = reference::infini_attention_stream(q, k, v, in.tokens, in.shape, options, beta, freqs, &state);
  r.memory = std::move(state.M);
  r.norm = std::move(state.z);
  return r;
}

}  // namespace infini::test
