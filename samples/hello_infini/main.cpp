// hello_infini: the smallest program on the installed library. It opens the default device,
// checks it (infini::selfcheck), then streams three segments of random Q, K, V through one
// Infini-attention layer and prints what the compressive memory holds.
#include <cstdio>
#include <random>
#include <vector>

#include "infini/infini_attention.hpp"
#include "infini/selfcheck.hpp"

int main() try {
  infini::Context context;
  std::printf("device: %s\n", context.device().name.c_str());
  for (const infini::SelfcheckResult& r : infini::selfcheck(context))
    if (!r.passed) {
      std::printf("selfcheck failed: %s (max error %g)\n", r.name.c_str(), r.max_error);
      return 1;
    }

  const infini::AttentionShape shape{4, 2, 32, 32};  // 4 query heads sharing 2 KV heads, dim 32
  infini::InfiniOptions options;
  options.segment = 16;
  const std::vector<float> beta(4, 0.0f);  // gate logits: an even mix of memory and local attention
  infini::InfiniAttention layer(context, shape, options, beta);

  const int64_t tokens = 3 * options.segment;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = normal(rng);
    return v;
  };
  const auto q = random(size_t(tokens) * 4 * 32), k = random(size_t(tokens) * 2 * 32), v = random(size_t(tokens) * 2 * 32);
  const std::vector<float> out = layer.process(q, k, v, tokens);
  double sum = 0;
  for (float x : layer.memory()) sum += double(x) * x;
  std::printf("streamed %lld tokens, %lld segments written, output %zu values, |M|^2 %.3f\n",
              static_cast<long long>(layer.tokens_processed()), static_cast<long long>(layer.segments_written()),
              out.size(), sum);
  return layer.segments_written() == 3 && sum > 0 ? 0 : 1;
} catch (const infini::Error& e) {
  std::fprintf(stderr, "hello_infini: %s\n", e.what());
  return 1;
}
