// `infini bench --workload batch`: decode of B streams of one model on one copy of its weights
// in batched steps (exec/batch_decoder.hpp), for each B of --streams: each stream prefilled with
// --prefill random tokens of its own, then --decode steps of all B together, each stream fed its
// own best token. One record per B with the step time, the aggregate and per-stream tokens/s, the
// same model's decode of one stream alone in the same run (its ratio is the batching's gain) and
// the device memory each stream adds. With --devices the model's layers are split over them, as
// the model workload splits them.
#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bench.hpp"
#include "bench_model_file.hpp"
#include "exec/batch_decoder.hpp"
#include "exec/layer_split.hpp"
#include "exec/llama_runner.hpp"
#include "exec/step_batcher.hpp"
#include "graph/device_weights.hpp"
#include "infini/error.hpp"
#include "vk/device.hpp"

namespace infini::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The streams' prefill pieces: small, so that many streams' activations fit beside each other.
constexpr uint32_t kStreamPiece = 64;

void batch_of(BenchRun& run, const BenchModel& bm, uint32_t streams) {
  const BenchOptions& o = run.options;
  const model::LlamaWeights& weights = bm.weights;
  model::RunnerOptions ro = bm.options;
  ro.max_piece = std::min(ro.max_piece, kStreamPiece);
  ro.decode_chain = 1;  // the lone stream's baseline: a submission per token, as each batched step is
  // Memory figures are summed over the devices the layers are split over (--devices).
  const uint64_t empty = vk::allocated_bytes(run.devices);
  const std::vector<int64_t> split = model::layers_for_devices(run.devices, weights.config.layers, run.split);
  model::DeviceWeightCache shared;
  std::vector<std::unique_ptr<model::LlamaRunner>> runners;
  for (uint32_t s = 0; s < streams; ++s)
    runners.push_back(std::make_unique<model::LlamaRunner>(run.devices, weights, ro, split, &shared));
  model::BatchDecoder decoder(model::stage_weights(*runners.front()), weights.config, ro, streams);
  const uint64_t total = vk::allocated_bytes(run.devices) - empty;
  const uint64_t weight_bytes = model::device_weight_bytes(weights, {0, weights.config.layers});

  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> token(0, int32_t(weights.config.vocab - 1));
  std::vector<int32_t> next(streams);
  for (uint32_t s = 0; s < streams; ++s) {
    std::vector<int32_t> prompt(size_t(std::max<int64_t>(o.prefill, 1)));
    for (int32_t& t : prompt) t = token(rng);
    next[s] = runners[s]->forward_ranked(prompt, 1).at(0).id;
  }
  // One stream alone, decoding as `infini bench --workload model --decode-chain 1` does.
  std::vector<double> alone_rate;
  int32_t lone = next[0];
  for (int r = 0; r < o.repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < o.decode; ++i) lone = runners[0]->forward_ranked(std::span<const int32_t>(&lone, 1), 1).at(0).id;
    alone_rate.push_back(double(o.decode) / seconds_since(t0));
  }
  next[0] = lone;
  std::vector<double> aggregate, step_ms;
  std::vector<model::BatchDecoder::Entry> entries(streams);
  for (int r = 0; r < o.repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < o.decode; ++i) {
      for (uint32_t s = 0; s < streams; ++s) entries[s] = {runners[s].get(), next[s]};
      const auto ts = std::chrono::steady_clock::now();
      const std::vector<std::vector<ops::RankedLogit>> best = decoder.step(entries, 1);
      step_ms.push_back(seconds_since(ts) * 1e3);
      for (uint32_t s = 0; s < streams; ++s) next[s] = best[s].at(0).id;
    }
    aggregate.push_back(double(streams) * double(o.decode) / seconds_since(t0));
  }
  const model::LlamaConfig& c = weights.config;
  const Stats a = stats_of(aggregate), one = stats_of(alone_rate), step = stats_of(step_ms);
  nlohmann::json record{{"workload", "batch"},
                        {"model", o.model},
                        {"shape", {{"vocab", c.vocab}, {"embd", c.embd}, {"layers", c.layers}, {"heads", c.heads},
                                   {"heads_kv", c.heads_kv}, {"ffn", c.ffn}}},
                        {"segment", bm.options.infini.segment},
                        {"memory", bm.options.infini.memory},
                        {"streams", streams},
                        {"devices", run.devices.size()},
                        {"prefill_tokens", o.prefill},
                        {"decode_steps", o.decode},
                        {"repeats", o.repeat}};
  record["step_ms"] = step.median;
  record["step_ms_min"] = step.min;
  record["step_ms_max"] = step.max;
  record["aggregate_tokens_per_s"] = a.median;
  record["aggregate_tokens_per_s_min"] = a.min;
  record["aggregate_tokens_per_s_max"] = a.max;
  record["per_stream_tokens_per_s"] = a.median / streams;
  record["alone_tokens_per_s"] = one.median;
  record["alone_tokens_per_s_min"] = one.min;
  record["alone_tokens_per_s_max"] = one.max;
  // The batching's gain, both measured in this run: aggregate over one stream decoding alone.
  record["aggregate_vs_alone"] = a.median / one.median;
  record["weight_bytes"] = weight_bytes;
  // What each stream adds beside the one copy of the weights (its state, activations and share
  // of the batch's scratch).
  record["device_bytes"] = total;
  record["device_bytes_per_stream"] = (total - std::min(total, weight_bytes)) / streams;
  run.emit(record);
}

void bench_batch(BenchRun& run) {
  const BenchOptions& o = run.options;
  if (o.decode < 1) throw Error("the batch workload needs --decode 1 or more");
  const BenchModel bm = load_bench_model(o, "batch");
  for (const uint32_t streams : o.streams) batch_of(run, bm, streams);
}

const RegisterWorkload batch_workload{"batch", 40, bench_batch};

}  // namespace
}  // namespace infini::cli
