// `infini bench --workload pipeline --model F.gguf --device-sets 0/0,0 [--handoffs host,auto]
// [--handoff-waits host,auto]`: the same model on several device sets (each set its own logical
// devices, the layers split over them; a set of several devices once per hand-off kind and way of
// waiting asked for), prefill and decode
// timed in alternation so machine load that drifts hits every set alike. One JSON line per set
// with its tokens/s and their ratio to the first set's, and one with each device's busy intervals
// during a prefill (timestamp queries) and how much of the time two or more devices were busy,
// and one with where each stage's time goes per piece (hand-off costs included).
#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

#include "bench.hpp"
#include "split_list.hpp"
#include "stopwatch.hpp"
#include "bench_model_file.hpp"
#include "decode_tokens.hpp"
#include "infini/context.hpp"
#include "infini/error.hpp"
#include "formats/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "exec/llama_runner.hpp"
#include "model_options.hpp"
#include "api/context_access.hpp"
#include "vk/device.hpp"

namespace infini::cli {
namespace {

// Seconds during which at least two of the stages were busy, over the span of all intervals.
double overlap_fraction(const std::vector<std::vector<model::BusyInterval>>& stages) {
  std::vector<std::pair<double, int>> edges;
  for (const auto& s : stages)
    for (const auto& i : s) {
      edges.push_back({i.begin_s, +1});
      edges.push_back({i.end_s, -1});
    }
  if (edges.empty()) return 0;
  std::sort(edges.begin(), edges.end());
  double overlap = 0;
  int busy = 0;
  for (size_t i = 0; i + 1 < edges.size(); ++i) {
    busy += edges[i].second;
    if (busy >= 2) overlap += edges[i + 1].first - edges[i].first;
  }
  return overlap / (edges.back().first - edges.front().first);
}

// Each stage's time over one window of a stream (a prefill, or the decode after it), per piece in
// microseconds: where a hand-off between devices costs (docs/design.md §4.3).
nlohmann::json handoff_json(const model::LlamaRunner& runner, const std::vector<model::StageProfile>& profile_before,
                            const std::vector<model::HandoffProfile>& handoff_before) {
  const std::vector<model::StageProfile> profiles = runner.stage_profiles();
  const std::vector<model::HandoffProfile> handoffs = runner.handoff_profiles();
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < profiles.size(); ++i) {
    const model::StageProfile p = profiles[i] - profile_before[i];
    const model::HandoffProfile h = handoffs[i] - handoff_before[i];
    const double per = p.pieces > 0 ? 1e6 / double(p.pieces) : 0;
    out.push_back({{"stage", i},
                   {"pieces", p.pieces},
                   {"wall_us", p.wall_s * per},
                   {"record_us", p.record_s * per},
                   {"host_in_us", p.host_in_s * per},
                   {"host_out_us", p.host_out_s * per},
                   {"submit_wait_us", p.submit_wait_s * per},
                   {"device_us", p.device_s * per},
                   {"device_upload_us", p.device_upload_s * per},
                   {"device_download_us", p.device_download_s * per},
                   {"submit_and_wake_us", (p.submit_wait_s - p.device_s) * per},
                   {"queued_us", h.queue_s * per},
                   {"thread_wake_us", h.wake_s * per},
                   {"submitted_ahead", h.submitted_ahead},
                   {"device_waits", h.device_waits}});
  }
  return out;
}

// The kind each hand-off between neighbouring stages took, and how each was waited for.
nlohmann::json handoff_names(const model::LlamaRunner& runner) {
  nlohmann::json out = nlohmann::json::array();
  for (model::Handoff h : runner.handoffs()) out.push_back(model::handoff_name(h));
  return out;
}
nlohmann::json handoff_wait_names(const model::LlamaRunner& runner) {
  nlohmann::json out = nlohmann::json::array();
  for (model::HandoffWait w : runner.handoff_waits()) out.push_back(model::handoff_wait_name(w));
  return out;
}

int32_t argmax(const std::vector<float>& logits) {
  return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

struct DeviceSet {
  std::string name;
  std::string handoff, wait;  // as asked for ("auto", ...); the kinds chosen are the runner's
  uint32_t decode_chain;       // as asked for (0: the device's choice); the runner's in the record
  std::unique_ptr<Context> context;
  std::unique_ptr<model::LlamaRunner> runner;
  std::vector<double> prefill, decode;
};

void bench_pipeline(BenchRun& run) {
  const BenchOptions& o = run.options;
  const BenchModel bm = load_bench_model(o, "pipeline");
  const model::LlamaWeights& weights = bm.weights;
  const model::LlamaConfig& c = weights.config;
  const model::RunnerOptions& ro = bm.options;

  std::vector<DeviceSet> sets;
  for (const std::string& list : split_list(o.device_sets, '/')) {
    const std::vector<std::string> names = split_list(list, ',');
    // One device hands nothing off: it runs once whatever the kinds.
    const std::vector<std::string> kinds = names.size() > 1 ? o.handoffs : std::vector<std::string>{"auto"};
    const std::vector<std::string> waits = names.size() > 1 ? o.handoff_waits : std::vector<std::string>{"auto"};
    for (const uint32_t chain : o.decode_chains)
      for (const std::string& kind : kinds)
        for (const std::string& wait : waits) {
          DeviceSet s{list, kind, wait, chain, nullptr, nullptr, {}, {}};
          ModelArgs args;
          args.devices = names;
          s.context = open_context(args);
          const std::vector<int64_t> split = s.context->layers_per_device(c.layers);
          model::RunnerOptions options = ro;
          options.handoff = model::parse_handoff(kind);
          options.handoff_wait = model::parse_handoff_wait(wait);
          options.decode_chain = chain;
          s.runner = std::make_unique<model::LlamaRunner>(ContextAccess::devices(*s.context), weights, options, split);
          sets.push_back(std::move(s));
        }
  }
  if (sets.empty()) throw Error("--device-sets names no devices");

  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> token(0, int32_t(c.vocab - 1));
  std::vector<int32_t> prompt(size_t(o.prefill));
  for (int32_t& t : prompt) t = token(rng);
  for (DeviceSet& s : sets) s.runner->forward(prompt, false);  // untimed: records command buffers
  for (int r = 0; r < o.repeat; ++r)
    for (DeviceSet& s : sets) {
      s.runner->reset();
      auto t0 = std::chrono::steady_clock::now();
      std::vector<float> logits = s.runner->forward(prompt, false);
      s.prefill.push_back(double(o.prefill) / seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      decode_tokens(*s.runner, argmax(logits), o.decode, bench_sampling(o.temperature, o.top_k, o.top_p));
      if (o.decode > 0) s.decode.push_back(double(o.decode) / seconds_since(t0));
    }

  for (DeviceSet& s : sets) {
    // Ratios to the first set decoding the same way (the same --decode-chain).
    const DeviceSet& first = *std::find_if(sets.begin(), sets.end(),
                                           [&](const DeviceSet& f) { return f.decode_chain == s.decode_chain; });
    const Stats first_prefill = stats_of(first.prefill), first_decode = stats_of(first.decode);
    const Stats p = stats_of(s.prefill), d = stats_of(s.decode);
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& st : s.runner->stages())
      stages.push_back({{"device", st.device->caps().name},
                        {"layers", std::to_string(st.layers.first) + "-" + std::to_string(st.layers.last - 1)}});
    nlohmann::json line{{"workload", "pipeline"},
                        {"model", o.model},
                        {"devices", s.name},
                        {"handoff", s.handoff},
                        {"handoffs", handoff_names(*s.runner)},
                        {"handoff_wait", s.wait},
                        {"handoff_waits", handoff_wait_names(*s.runner)},
                        {"decode_chain", std::max<uint32_t>(s.runner->decode_chain(), 1)},
                        {"temperature", o.temperature},
                        {"stages", stages},
                        {"segment", ro.infini.segment},
                        {"prefill_tokens", o.prefill},
                        {"prefill_tokens_per_s", p.median},
                        {"prefill_tokens_per_s_min", p.min},
                        {"prefill_tokens_per_s_max", p.max},
                        {"prefill_ratio_to_first", p.median / first_prefill.median},
                        {"repeats", o.repeat},
                        {"set_peak_device_bytes", s.context->peak_device_memory_bytes()}};
    if (o.temperature > 0) {
      line["top_k"] = o.top_k;
      line["top_p"] = o.top_p;
    }
    if (o.decode > 0) {
      line["decode_tokens"] = o.decode;
      line["decode_tokens_per_s"] = d.median;
      line["decode_ratio_to_first"] = d.median / first_decode.median;
    }
    run.emit(line);
  }

  // Where each stage's time goes, per piece, in one more prefill and decode of every set.
  for (DeviceSet& s : sets) {
    s.runner->reset();
    auto profiles = s.runner->stage_profiles();
    auto handoffs = s.runner->handoff_profiles();
    std::vector<float> logits = s.runner->forward(prompt, false);
    const nlohmann::json prefill = handoff_json(*s.runner, profiles, handoffs);
    profiles = s.runner->stage_profiles();
    handoffs = s.runner->handoff_profiles();
    decode_tokens(*s.runner, argmax(logits), o.decode, bench_sampling(o.temperature, o.top_k, o.top_p));
    nlohmann::json line{{"workload", "pipeline"}, {"phase", "handoffs"}, {"devices", s.name}, {"handoff", s.handoff},
                        {"handoff_wait", s.wait}, {"decode_chain", std::max<uint32_t>(s.runner->decode_chain(), 1)},
                        {"prefill_tokens", o.prefill}, {"prefill_stages", prefill}};
    if (o.decode > 0) {
      line["decode_tokens"] = o.decode;
      line["decode_stages"] = handoff_json(*s.runner, profiles, handoffs);
    }
    run.emit(line);
  }

  // Where each device was busy during one more prefill of every multi-device set.
  for (DeviceSet& s : sets) {
    if (s.runner->stages().size() < 2) continue;
    s.runner->reset();
    s.runner->record_timeline(true);
    s.runner->forward(prompt, false);
    const auto timeline = s.runner->timeline();
    s.runner->record_timeline(false);
    double origin = 1e300;
    for (const auto& st : timeline)
      for (const auto& i : st) origin = std::min(origin, i.begin_s);
    nlohmann::json devices = nlohmann::json::array();
    for (size_t i = 0; i < timeline.size(); ++i) {
      nlohmann::json intervals = nlohmann::json::array();
      double busy = 0;
      for (const auto& b : timeline[i]) {
        intervals.push_back({std::round((b.begin_s - origin) * 1e6) / 1e3, std::round((b.end_s - origin) * 1e6) / 1e3});
        busy += b.end_s - b.begin_s;
      }
      devices.push_back({{"stage", i}, {"busy_ms", busy * 1e3}, {"intervals_ms", intervals}});
    }
    run.emit({{"workload", "pipeline"},
              {"phase", "timeline"},
              {"devices", s.name},
              {"handoff", s.handoff},
              {"handoff_wait", s.wait},
              {"prefill_tokens", o.prefill},
              {"overlap_fraction", overlap_fraction(timeline)},
              {"stages", devices}});
  }
}

const RegisterWorkload pipeline_workload{"pipeline", 40, bench_pipeline};

}  // namespace
}  // namespace infini::cli
