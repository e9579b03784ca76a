// A long stream through one Infini-attention layer (issue 8): 2^20 tokens by default (set
// INFINI_LONG_TOKENS to change it) with small dimensions, fed a segment at a time to the device
// and to the float64 reference. Every output must be finite, and the error must stay bounded
// however long the stream gets: the per-segment nmse, the worst one and the final memory's are
// checked and printed, so drift shows in the log.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "support/gpu_fixture.hpp"
#include "infini/infini_attention.hpp"
#include "reference/infini_attention_reference.hpp"
#include "util/nmse.hpp"

namespace infini::test {
namespace {

int64_t stream_tokens() {
  const char* env = std::getenv("INFINI_LONG_TOKENS");
  return env ? std::max<int64_t>(1, std::atoll(env)) : (int64_t(1) << 20);
}

TEST_CASE("a 1M-token stream stays finite and close to the float64 reference", "[gpu][long]") {
  const AttentionShape shape{2, 1, 16, 16};
  InfiniOptions o;
  o.segment = 256;
  o.rope.base = 10000;
  const std::vector<float> beta = {0.5f, -1.0f};
  Context context;
  InfiniAttention layer(context, shape, o, beta);
  reference::LayerReference ref(shape, o, {0.5, -1.0}, rope::rope_frequencies(o.rope, shape.head_dim, o.segment));

  std::mt19937 rng(2024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t total = stream_tokens(), n = o.segment;
  const size_t qn = size_t(n) * 2 * 16, kn = size_t(n) * 16;
  std::vector<float> q(qn), k(kn), v(kn);
  double worst = 0, last = 0;
  bool finite = true;
  for (int64_t done = 0; done < total; done += n) {
    const int64_t t = std::min(n, total - done);
    for (float& x : q) x = normal(rng);
    for (float& x : k) x = normal(rng);
    for (float& x : v) x = normal(rng);
    const auto got = layer.process(std::span(q).first(size_t(t) * 32), std::span(k).first(size_t(t) * 16),
                                   std::span(v).first(size_t(t) * 16), t);
    const std::vector<double> qd(q.begin(), q.begin() + t * 32), kd(k.begin(), k.begin() + t * 16),
        vd(v.begin(), v.begin() + t * 16);
    const auto want = ref.prefill(qd, kd, vd, t);
    for (float x : got) finite = finite && std::isfinite(x);
    last = nmse(std::span<const float>(got), std::span<const double>(want));
    worst = std::max(worst, last);
  }
  const std::vector<float> m = layer.memory();
  const double memory_err = nmse(std::span<const float>(m), std::span<const double>(ref.memory().M));
  std::printf("long stream: %lld tokens, worst segment nmse %.3g, last %.3g, memory nmse %.3g\n",
              static_cast<long long>(total), worst, last, memory_err);
  CHECK(finite);
  CHECK(worst <= 1e-6);
  CHECK(memory_err <= 1e-6);
}

}  // namespace
}  // namespace infini::test
