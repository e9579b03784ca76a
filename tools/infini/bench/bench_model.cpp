// `infini bench --workload model --model F.gguf`: a GGUF model on the device. Prefill of
// --prefill random tokens and decode of --decode tokens one at a time (tokens/s, wall clock,
// including uploads and logits readback), and, for each --stream length, the tokens/s of a whole
// stream fed segment by segment with the peak device memory it needed (which must not depend on
// the length).
#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench.hpp"
#include "stopwatch.hpp"
#include "bench_model_file.hpp"
#include "decode_tokens.hpp"
#include "infini/error.hpp"
#include "formats/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "exec/layer_split.hpp"
#include "exec/layer_stage.hpp"
#include "exec/llama_runner.hpp"
#include "model_options.hpp"
#include "util/nmse.hpp"
#include "vk/device.hpp"
#include "vk/dispatch_profile.hpp"

namespace infini::cli {
namespace {

// Bytes of weights one decoded token reads: every layer matrix and norm, the final norm and the
// output matrix, and one row of the embedding table. What decode's speed is bound by.
uint64_t weight_bytes_per_token(const model::LlamaWeights& w) {
  uint64_t bytes = w.output_norm.data.size() + w.output.data.size() + w.token_embd.data.size() / uint64_t(w.config.vocab);
  for (const model::LlamaLayerWeights& l : w.layers)
    for (const model::TensorView* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.ffn_gate, &l.ffn_up,
                                       &l.ffn_down})
      bytes += t->data.size();
  return bytes;
}

// Microseconds per piece (per stage's piece where there are several): the whole, recording,
// submitting and waiting, the device's own time, and the host's work besides (wall less both).
nlohmann::json per_piece_us(const model::StageProfile& p) {
  const double k = p.pieces ? 1e6 / double(p.pieces) : 0;
  return {{"pieces", p.pieces},
          {"wall", p.wall_s * k},
          {"record", p.record_s * k},
          {"submit_wait", p.submit_wait_s * k},
          {"device", p.device_s * k},
          {"host_other", (p.wall_s - p.record_s - p.submit_wait_s) * k},
          {"submit_wait_beyond_device", (p.submit_wait_s - p.device_s) * k},
          {"dispatches", p.pieces ? double(p.dispatches) / double(p.pieces) : 0.0},
          {"barriers", p.pieces ? double(p.barriers) / double(p.pieces) : 0.0}};
}

// Token ids drawn uniformly from a vocabulary, the same sequence for the same seed.
class RandomTokens {
 public:
  RandomTokens(int64_t vocab, uint32_t seed) : rng_(seed), token_(0, int32_t(vocab - 1)) {}
  std::vector<int32_t> operator()(int64_t n) {
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (int32_t& t : ids) t = token_(rng_);
    return ids;
  }

 private:
  std::mt19937 rng_;
  std::uniform_int_distribution<int32_t> token_;
};

// What every record of the model workload starts with: the file, its shape, the stream options.
nlohmann::json model_record(const BenchOptions& o, const BenchModel& bm) {
  const model::LlamaConfig& c = bm.weights.config;
  const nlohmann::json shape{{"vocab", c.vocab}, {"embd", c.embd}, {"layers", c.layers}, {"heads", c.heads},
                             {"heads_kv", c.heads_kv}, {"ffn", c.ffn}};
  return {{"workload", "model"}, {"model", o.model}, {"shape", shape}, {"segment", bm.options.infini.segment},
          {"memory", bm.options.infini.memory}};
}

// Prefill and decode of random tokens with one choice of the projections' kernel
// (--matmul-kernel), decode's fused steps (--fused-steps), the attention kernel family
// (--attention-kernel) and the vector kernel's shape (--vector-tiles): one record.
// The choices one prefill_decode record is measured with.
struct ModelChoices {
  ops::MatmulKernel matmul;
  bool fused_steps;
  ops::AttentionKernel attention;
  ops::VectorTiles vector_tiles;
  ops::MatrixTiles matrix_tiles;
  uint32_t decode_chain;  // 0: the device's choice
};

// One record per kernel (name and grid) of a prefill or of a decode, most time first: its
// dispatches and device time per token, and its share of all the kernels' time.
void emit_kernel_times(const BenchRun& run, const nlohmann::json& model_record, const char* part,
                       const vk::DispatchProfile& profile, int64_t tokens) {
  if (tokens <= 0 || profile.kernels.empty()) return;
  std::vector<std::pair<std::string, vk::DispatchTime>> kernels(profile.kernels.begin(), profile.kernels.end());
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  const double total = profile.seconds();
  for (const auto& [kernel, t] : kernels) {
    nlohmann::json r;
    for (const char* key :
         {"workload", "model", "matmul_kernel", "fused_steps", "attention_kernel", "vector_tiles", "matrix_tiles",
          "decode_chain"})
      if (model_record.contains(key)) r[key] = model_record[key];
    r["phase"] = "kernel_times";
    r["part"] = part;
    r["tokens"] = tokens;
    const size_t space = kernel.rfind(' ');
    r["kernel"] = kernel.substr(0, space);
    r["groups"] = kernel.substr(space + 1);
    r["dispatches_per_token"] = double(t.dispatches) / double(tokens);
    r["us_per_token"] = t.seconds * 1e6 / double(tokens);
    r["us_per_dispatch"] = t.seconds * 1e6 / double(t.dispatches);
    r["share"] = total > 0 ? t.seconds / total : 0.0;
    run.emit(r);
  }
}

void prefill_decode(BenchRun& run, const BenchModel& bm, std::span<const int64_t> split, const ModelChoices& choice) {
  const BenchOptions& o = run.options;
  const model::LlamaWeights& weights = bm.weights;
  const model::LlamaConfig& c = weights.config;
  model::RunnerOptions ro = bm.options;
  ro.matmul_kernel = choice.matmul;
  ro.fused_steps = choice.fused_steps;
  ro.kernel = choice.attention;
  ro.vector_tiles = choice.vector_tiles;
  ro.matrix_tiles = choice.matrix_tiles;
  ro.time_kernels = o.kernel_times;
  ro.decode_chain = choice.decode_chain;
  // Memory figures are summed over the devices the layers are split over (--devices).
  const uint64_t baseline = vk::allocated_bytes(run.devices);
  vk::reset_peaks(run.devices);
  model::LlamaRunner runner(run.devices, weights, ro, split);
  RandomTokens random_tokens(c.vocab, 7);
  std::vector<double> prefill_rate, decode_rate;
  model::StageProfile decode_profile;  // of the last repeat's decode
  vk::DispatchProfile prefill_kernels, decode_kernels;  // likewise, with --kernel-times
  for (int r = 0; r < o.repeat; ++r) {
    runner.reset();
    const std::vector<int32_t> prompt = random_tokens(o.prefill);
    const vk::DispatchProfile before_prefill = runner.dispatch_profile();
    auto t0 = std::chrono::steady_clock::now();
    const std::vector<float> logits = runner.forward(prompt, false);
    prefill_rate.push_back(double(o.prefill) / seconds_since(t0));
    const vk::DispatchProfile after_prefill = runner.dispatch_profile();
    prefill_kernels = after_prefill - before_prefill;
    if (o.decode > 0) {
      const int32_t next = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
      const model::StageProfile before = runner.profile();
      t0 = std::chrono::steady_clock::now();
      decode_tokens(runner, next, o.decode, bench_sampling(o.temperature, o.top_k, o.top_p));
      decode_rate.push_back(double(o.decode) / seconds_since(t0));
      decode_profile = runner.profile() - before;
      decode_kernels = runner.dispatch_profile() - after_prefill;
    }
  }
  nlohmann::json record = model_record(o, bm);
  const uint64_t weight_bytes = weight_bytes_per_token(weights);
  const Stats p = stats_of(prefill_rate);
  record["phase"] = "prefill_decode";
  record["matmul_kernel"] = ops::matmul_kernel_name(choice.matmul);
  record["fused_steps"] = choice.fused_steps;
  record["attention_kernel"] = ops::attention_kernel_name(choice.attention);
  record["vector_tiles"] = choice.vector_tiles.name();
  record["matrix_tiles"] = choice.matrix_tiles.name();
  // Most decode tokens per submission, as the runner resolved it (1: a submission per token).
  record["decode_chain"] = std::max<uint32_t>(runner.decode_chain(), 1);
  record["temperature"] = o.temperature;  // decode's draws (0: greedy)
  if (o.temperature > 0) {
    record["top_k"] = o.top_k;
    record["top_p"] = o.top_p;
  }
  // How long the host polls before it sleeps in a wait (vk/host_wait.hpp; INFINI_WAIT_SPIN_US).
  record["wait_spin_us"] = int64_t(run.device.wait_spin().count());
  if (o.kernel_times) record["kernel_times"] = true;  // its kernels ran one at a time: not a throughput figure
  record["prefill_tokens"] = o.prefill;
  record["prefill_tokens_per_s"] = p.median;
  record["prefill_tokens_per_s_min"] = p.min;
  record["prefill_tokens_per_s_max"] = p.max;
  if (!decode_rate.empty()) {
    const Stats d = stats_of(decode_rate);
    record["decode_tokens"] = o.decode;
    record["decode_tokens_per_s"] = d.median;
    record["decode_tokens_per_s_min"] = d.min;
    record["decode_tokens_per_s_max"] = d.max;
    // Summed over the stages: what a token costs in launches and waits between them.
    record["decode_dispatches_per_token"] = double(decode_profile.dispatches) / double(o.decode);
    record["decode_barriers_per_token"] = double(decode_profile.barriers) / double(o.decode);
    // Weight bytes read per second at the median decode rate, and that as a fraction of the
    // device's read bandwidth when the bandwidth workload ran first.
    const double gbps = double(weight_bytes) * d.median / 1e9;
    record["decode_weight_gbytes_per_s"] = gbps;
    if (run.bandwidth_gbps > 0) record["decode_fraction_of_bandwidth"] = gbps / run.bandwidth_gbps;
  }
  record["weight_bytes_per_token"] = weight_bytes;
  record["repeats"] = o.repeat;
  record["model_peak_device_bytes"] = vk::peak_allocated_bytes(run.devices) - baseline;
  if (!o.reference_model.empty()) {
    // Every row of logits of one prompt, from the model and from the reference file on the same
    // devices: how far quantization moved the model.
    runner.reset();
    const std::vector<int32_t> prompt = random_tokens(o.prefill);
    const std::vector<float> got = runner.forward(prompt, true);
    const BenchModel ref = load_bench_model(o, "model", o.reference_model);
    if (ref.weights.config.vocab != c.vocab || ref.weights.config.embd != c.embd || ref.weights.config.layers != c.layers)
      throw Error("--reference-model " + o.reference_model + " is not the shape of " + o.model);
    model::LlamaRunner ref_runner(run.devices, ref.weights, bm.options, split);
    const std::vector<float> want = ref_runner.forward(prompt, true);
    record["reference_model"] = o.reference_model;
    record["logit_nmse_vs_reference"] = nmse(std::span<const float>(got), std::span<const float>(want));
  }
  run.emit(record);
  if (o.kernel_times) {
    emit_kernel_times(run, record, "prefill", prefill_kernels, o.prefill);
    emit_kernel_times(run, record, "decode", decode_kernels, o.decode);
  }
}

void bench_model(BenchRun& run) {
  const BenchOptions& o = run.options;
  const BenchModel bm = load_bench_model(o, "model");
  const model::LlamaWeights& weights = bm.weights;
  const model::LlamaConfig& c = weights.config;
  const std::vector<int64_t> split = model::layers_for_devices(run.devices, c.layers, run.split);
  for (const ops::AttentionKernel attention : o.attention_kernels)
    for (const ops::MatmulKernel kernel : o.matmul_kernels)
      for (const bool fused : o.fused_steps)
        for (const ops::VectorTiles& vt : o.vector_tiles)
          for (const ops::MatrixTiles& mt : o.matrix_tiles)
            for (const uint32_t chain : o.decode_chains)
              prefill_decode(run, bm, split, {kernel, fused, attention, vt, mt, chain});

  if (o.stream_tokens.empty()) return;
  // Streams on the first --matmul-kernel, --fused-steps, --attention-kernel, --vector-tiles and --matrix-tiles.
  model::RunnerOptions ro = bm.options;
  ro.matmul_kernel = o.matmul_kernels.front();
  ro.fused_steps = o.fused_steps.front();
  ro.kernel = o.attention_kernels.front();
  ro.vector_tiles = o.vector_tiles.front();
  ro.matrix_tiles = o.matrix_tiles.front();
  auto peak = [&] { return vk::peak_allocated_bytes(run.devices); };
  auto reset_peak = [&] { vk::reset_peaks(run.devices); };
  const uint64_t baseline = vk::allocated_bytes(run.devices);
  model::LlamaRunner runner(run.devices, weights, ro, split);
  RandomTokens random_tokens(c.vocab, 11);
  const nlohmann::json base = model_record(o, bm);

  for (const int64_t tokens : o.stream_tokens) {
    runner.reset();
    reset_peak();
    const std::vector<int32_t> piece = random_tokens(ro.infini.segment);
    // Rates of the first and the last window of the stream, taken in the same run, show whether
    // throughput depends on how far into the stream we are (it must not).
    // Where each window's time went, per piece, shows what grows if the rate falls.
    const int64_t window = std::min<int64_t>(tokens, 2 * ro.infini.segment);
    double first_window_s = 0, last_window_s = 0;
    model::StageProfile first_profile, last_profile;
    const uint64_t rss_start = host_rss_bytes();
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t done = 0; done < tokens;) {
      const int64_t n = std::min<int64_t>(tokens - done, ro.infini.segment);
      const model::StageProfile before = runner.profile();
      const auto tp = std::chrono::steady_clock::now();
      runner.forward(std::span<const int32_t>(piece).first(size_t(n)), false);
      const double dt = seconds_since(tp);
      if (done < window) {
        first_window_s += dt;
        first_profile += runner.profile() - before;
      }
      if (done >= tokens - window) {
        last_window_s += dt;
        last_profile += runner.profile() - before;
      }
      done += n;
    }
    const double s = seconds_since(t0);
    nlohmann::json line = base;
    line["phase"] = "stream";
    line["tokens"] = tokens;
    line["seconds"] = s;
    line["tokens_per_s"] = double(tokens) / s;
    line["window_tokens"] = window;
    line["first_window_tokens_per_s"] = double(window) / first_window_s;
    line["last_window_tokens_per_s"] = double(window) / last_window_s;
    line["stream_peak_device_bytes"] = peak() - baseline;
    line["host_rss_start_bytes"] = rss_start;
    line["host_rss_end_bytes"] = host_rss_bytes();
    line["recorded_pieces"] = runner.recorded_pieces();  // command buffers kept for replay
    line["first_window_per_piece_us"] = per_piece_us(first_profile);
    line["last_window_per_piece_us"] = per_piece_us(last_profile);
    run.emit(line);
    if (o.interleave) {
      // A second runner that stays within its first segments, timed in alternation with the long
      // stream's next segments: machine load that drifts over minutes hits both alike. A sliding
      // context's fresh stream is first fed past its slide (its first C tokens attend fewer keys,
      // which no later token does), so both sides attend whole contexts.
      model::LlamaRunner fresh(run.devices, weights, ro, split);
      const int64_t seg = ro.infini.segment;
      const int64_t untimed = ro.infini.sliding ? seg : 0;  // tokens before the fresh stream's timed ones
      const int rounds = 4;
      double late_s = 0, early_s = 0;
      auto time_segment = [&](model::LlamaRunner& r) {
        const auto tp = std::chrono::steady_clock::now();
        r.forward(piece, false);
        return seconds_since(tp);
      };
      fresh.forward(piece, false);  // untimed: records its command buffers first
      for (int i = 0; i < rounds; ++i) {
        if (fresh.tokens_seen() >= 2 * seg + untimed) {
          fresh.reset();
          if (untimed > 0) fresh.forward(piece, false);
        }
        early_s += time_segment(fresh);
        late_s += time_segment(runner);
      }
      nlohmann::json cmp = base;
      cmp["phase"] = "stream_interleaved";
      cmp["late_position"] = tokens;
      cmp["segments_each"] = rounds;
      cmp["early_tokens_per_s"] = double(rounds * seg) / early_s;
      cmp["late_tokens_per_s"] = double(rounds * seg) / late_s;
      cmp["late_over_early"] = early_s / late_s;
      run.emit(cmp);
    }
  }
}

const RegisterWorkload model_workload{"model", 30, bench_model};

}  // namespace
}  // namespace infini::cli
