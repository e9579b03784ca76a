// infini bench --workload sampler: the host's cost of drawing a token from a whole row of logits
// (what decode pays per token when the draw needs the row: top-k off, as infini serve's requests
// without top_k; or a row already on the host), per vocabulary size and sampling setting. Host
// work only: no device is used.
#include <chrono>
#include <random>
#include <vector>

#include "bench.hpp"
#include "sampling/sampler.hpp"

namespace infini::cli {
namespace {

void bench_sampler(BenchRun& run) {
  const BenchOptions& o = run.options;
  const double temperature = o.temperature > 0 ? o.temperature : 1.0;
  struct Setting {
    int top_k;
    double top_p;
  };
  const Setting settings[] = {{0, 1.0}, {0, 0.95}, {40, 0.95}};
  constexpr int kDrawsPerSample = 20;
  for (const int64_t vocab : o.vocabs) {
    // Logits drawn from a normal distribution of sigma 3: a flatter row than a trained model's,
    // whose nucleus (about 2,300 tokens of 32,000 at top-p 0.95) is the harder case.
    std::mt19937 rng{uint32_t(vocab)};
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> logits(static_cast<size_t>(vocab));
    for (float& l : logits) l = normal(rng);
    for (const Setting& s : settings) {
      model::Sampler sampler({temperature, s.top_k, s.top_p, 1});
      sampler.sample(logits);  // scratch allocated before timing
      std::vector<double> us;
      int32_t sink = 0;
      for (int r = 0; r < o.repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kDrawsPerSample; ++i) sink ^= sampler.sample(logits);
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
                     kDrawsPerSample);
      }
      const Stats st = stats_of(us);
      run.emit({{"workload", "sampler"},
                {"vocab", vocab},
                {"temperature", temperature},
                {"top_k", s.top_k},
                {"top_p", s.top_p},
                {"logits", "normal, sigma 3"},
                {"us_per_token", st.median},
                {"us_per_token_min", st.min},
                {"us_per_token_max", st.max},
                {"repeats", o.repeat},
                {"last_token", sink}});
    }
  }
}

const RegisterWorkload sampler_workload{"sampler", 50, bench_sampler};

}  // namespace
}  // namespace infini::cli
