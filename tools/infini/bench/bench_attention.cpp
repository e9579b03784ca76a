// `infini bench --workload attention`: one Infini-attention layer streaming T tokens in segments
// of N. One segment's work is recorded once and replayed for every segment, as a model runner
// does. Reports tokens/s, achieved GFLOP/s as a fraction of the device's measured peak, and the
// peak device memory of the whole stream (which must not depend on T).
#include <random>

#include "bench.hpp"
#include "ops/host_tensor.hpp"
#include "ops/infini_attention_layer.hpp"
#include "vk/device.hpp"

namespace infini::cli {
namespace {

// FLOPs of one full segment: causal Q K^T and P V, the memory read, the delta retrieval and the
// memory update (multiply-add = 2).
double segment_flops(const AttentionShape& s, double n) {
  const double causal_pairs = n * (n + 1) / 2;
  return 2 * causal_pairs * s.heads_q * (s.head_dim + s.value_dim) + 2 * n * s.heads_q * s.head_dim * s.value_dim +
         2 * 2 * n * s.heads_kv * s.head_dim * s.value_dim;
}

void bench_attention(BenchRun& run) {
  const BenchOptions& o = run.options;
  const AttentionShape shape{o.heads_q, o.heads_kv, o.head_dim, o.head_dim};
  InfiniOptions options;
  options.segment = o.segment;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  const size_t n = size_t(o.segment);
  const auto q = random(n * shape.heads_q * shape.head_dim), k = random(n * shape.heads_kv * shape.head_dim),
             v = random(n * shape.heads_kv * shape.value_dim), beta = random(size_t(shape.heads_q));

  for (const std::string& name : o.dtypes) {
    const ElementType type = name == "f16" ? ElementType::F16 : ElementType::F32;
    for (const ops::AttentionKernel kernel : o.attention_kernels) {
      for (const int64_t tokens : o.tokens) {
        vk::Device& dev = run.device;
        const uint64_t baseline = dev.allocated_bytes();
        dev.reset_peak();
        ops::InfiniAttentionLayer layer(dev, shape, options, type, beta, kernel);
        vk::Buffer dq = ops::upload_tensor(dev, q, type, "Q"), dk = ops::upload_tensor(dev, k, type, "K"),
                   dv = ops::upload_tensor(dev, v, type, "V");
        vk::Buffer out(dev, n * shape.heads_q * shape.value_dim * 4, vk::MemoryUse::DeviceLocal, "out");
        vk::CommandStream full(dev, 2), tail(dev, 2);
        // Segment 0 is recorded on its own (first-segment convention), then one full segment that is
        // replayed; a shorter last segment gets its own recording.
        auto record = [&](vk::CommandStream& s, uint32_t count) {
          s.begin();
          s.timestamp("start");
          layer.record(s, {&dq, 0}, {&dk, 0}, {&dv, 0}, out, count);
          if (layer.open_tokens() > 0) layer.record_finish(s);
          s.timestamp("end");
          s.end();
        };
        double device_ms = 0;
        const int64_t full_segments = tokens / o.segment;
        const uint32_t last = uint32_t(tokens % o.segment);
        for (int64_t seg = 0; seg < full_segments; ++seg) {
          if (seg <= 1) record(full, uint32_t(o.segment));  // segment 0, then the replayed one
          device_ms += run.time_ms(full, 1)[0];
        }
        if (last) {
          record(tail, last);
          device_ms += run.time_ms(tail, 1)[0];
        }
        const double flops = double(full_segments) * segment_flops(shape, double(o.segment)) +
                             (last ? segment_flops(shape, last) : 0.0);
        const double gflops = flops / (device_ms * 1e6);
        nlohmann::json record_json{{"workload", "attention"}, {"dtype", name}, {"tokens", tokens},
                                   {"kernel", ops::attention_kernel_name(layer.attention_kernel())},
                                   {"memory_kernel", ops::memory_kernel_name(layer.memory_kernel())},
                                   {"segment", o.segment}, {"heads_q", shape.heads_q}, {"heads_kv", shape.heads_kv},
                                   {"head_dim", shape.head_dim}, {"segments", full_segments + (last ? 1 : 0)},
                                   {"ms", device_ms}, {"tokens_per_s", double(tokens) / (device_ms * 1e-3)},
                                   {"gflops", gflops}};
        if (run.peak_gflops > 0) record_json["fraction_of_peak"] = gflops / run.peak_gflops;
        record_json["stream_peak_device_bytes"] = dev.peak_allocated_bytes() - baseline;
        run.emit(record_json);
      }
    }
  }
}

const RegisterWorkload attention{"attention", 20, bench_attention};

}  // namespace
}  // namespace infini::cli
