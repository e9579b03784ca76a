// The autotuner from the command line (graph/kernel_tuning.hpp): `infini tune -m M` measures every
// matmul kernel this device runs on each weight shape of the model, for a prefill piece, keeps the
// fastest correct one in the device's tuning cache and prints the table; `infini bench --workload
// tune` does the same as JSON records and then measures every candidate again, to show the choice
// against the best of a second, independent pass (the tuner's noise) and against today's rule.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "api/context_access.hpp"
#include "bench.hpp"
#include "bench_model_file.hpp"
#include "command.hpp"
#include "formats/gguf_file.hpp"
#include "exec/llama_runner.hpp"
#include "graph/device_weights.hpp"
#include "graph/kernel_tuning.hpp"
#include "infini/error.hpp"
#include "infini/model.hpp"
#include "model/llama_loader.hpp"
#include "model_options.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache_file.hpp"

namespace infini::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}


nlohmann::json candidates_json(const std::vector<ops::CandidateTiming>& timings) {
  nlohmann::json out = nlohmann::json::array();
  for (const ops::CandidateTiming& t : timings)
    out.push_back({{"kernel", t.choice.name()},
                   {"ms", std::isfinite(t.seconds) ? t.seconds * 1e3 : -1.0},
                   {"nmse", std::isfinite(t.nmse) ? t.nmse : -1.0},
                   {"correct", t.correct}});
  return out;
}

nlohmann::json attention_json(const std::vector<ops::AttentionTiming>& timings) {
  nlohmann::json out = nlohmann::json::array();
  const auto ms = [](double s) { return std::isfinite(s) ? s * 1e3 : -1.0; };
  for (const ops::AttentionTiming& t : timings)
    out.push_back({{"kernel", ops::attention_kernel_name(t.kernel)},
                   {"piece_ms", ms(t.piece_seconds)},
                   {"decode_ms", ms(t.decode_seconds)},
                   {"nmse", std::isfinite(t.nmse) ? t.nmse : -1.0},
                   {"correct", t.correct}});
  return out;
}

double time_of(const std::vector<ops::CandidateTiming>& timings, const ops::MatmulChoice& choice) {
  for (const ops::CandidateTiming& t : timings)
    if (t.choice == choice) return t.seconds;
  return INFINITY;
}

void bench_tune(BenchRun& run) {
  const BenchModel bm = load_bench_model(run.options, "tune");
  const model::LlamaConfig& c = bm.weights.config;
  const model::DeviceWeights weights(run.device, bm.weights, {0, c.layers});
  const auto t0 = std::chrono::steady_clock::now();
  const model::KernelTunings tunings = model::tune_kernels(weights, c, bm.options.infini, model::TuneMode::Force);
  const double tune_s = seconds_since(t0);
  // A second pass over every candidate: how the choice fares in measurements it was not made from.
  for (const model::WeightToTune& w : model::weights_to_tune(weights, c)) {
    const model::TunedMatmul& tuned = tunings.matmuls.at(w.shape);
    const std::vector<ops::CandidateTiming> again =
        ops::time_piece_candidates(run.device, w.shape.b, w.rows, w.chunk_rows, w.shape.k, model::kTuneRows);
    double best = INFINITY;
    for (const ops::CandidateTiming& t : again)
      if (t.correct) best = std::min(best, t.seconds);
    const double chosen = time_of(again, tuned.choice), rule = time_of(again, ops::MatmulChoice{});
    run.emit({{"workload", "tune"},
              {"model", run.options.model},
              {"type", element_name(w.shape.b)},
              {"n", w.shape.n},
              {"k", w.shape.k},
              {"measured_rows", w.chunk_rows},
              {"rows", model::kTuneRows},
              {"chosen", tuned.choice.name()},
              {"candidates", candidates_json(tuned.timings)},
              {"second_pass", candidates_json(again)},
              // Both from the second pass: the choice's time over the best's (1: it is the best),
              // and today's rule's time over the choice's (the tuning's gain).
              {"chosen_vs_best", chosen / best},
              {"rule_vs_chosen", rule / chosen}});
  }
  for (const auto& [key, tuned] : tunings.attention) {
    const AttentionShape shape{key.heads_q, key.heads_kv, key.head_dim, key.value_dim};
    const std::vector<ops::AttentionTiming> again =
        ops::time_attention_candidates(run.device, shape, bm.options.infini, key.input, model::kTuneRows);
    run.emit({{"workload", "tune"},
              {"model", run.options.model},
              {"attention", model::shape_name(key)},
              {"chosen", ops::attention_kernel_name(tuned.kernel)},
              {"candidates", attention_json(tuned.timings)},
              {"second_pass", attention_json(again)},
              {"second_pass_choice", ops::attention_kernel_name(ops::choose_attention_family(again))}});
  }
  run.emit({{"workload", "tune"},
            {"model", run.options.model},
            {"shapes", tunings.matmuls.size() + tunings.attention.size()},
            {"tune_seconds", tune_s}});
}

const RegisterWorkload tune_workload{"tune", 45, bench_tune};

struct TuneArgs {
  ModelArgs model;
};

int run_tune(const TuneArgs& args) {
  const std::unique_ptr<Context> context = open_context(args.model);
  vk::Device& device = ContextAccess::first_device(*context);
  const model::GgufFile file(args.model.model);
  const model::LlamaWeights loaded = model::load_llama(file);
  const model::LlamaConfig& c = loaded.config;
  const model::DeviceWeights weights(device, loaded, {0, c.layers});
  // The attention under the options a run of the file takes by default.
  const InfiniOptions attention = model::resolve_runner_options(c, MemoryMode::Auto, 0, 1).infini;
  std::printf("measuring the matmul kernels of %s on %s, a %u-row piece per weight shape, and its attention\n",
              args.model.model.c_str(), device.caps().name.c_str(), model::kTuneRows);
  const auto t0 = std::chrono::steady_clock::now();
  const model::KernelTunings tunings = model::tune_kernels(
      weights, c, attention, model::TuneMode::Force, [](size_t done, size_t total, const std::string& shape) {
        if (!::isatty(2)) return;
        std::fprintf(stderr, "\r  %zu of %zu: %-44s", done, total, shape.c_str());
        if (done == total) std::fprintf(stderr, "\r%70s\r", "");
      });
  for (const auto& [shape, tuned] : tunings.matmuls) {
    // The choice, then every candidate from the fastest, a few a line; wrong or impossible ones last.
    std::vector<ops::CandidateTiming> order = tuned.timings;
    std::stable_sort(order.begin(), order.end(), [](const ops::CandidateTiming& x, const ops::CandidateTiming& y) {
      return x.correct != y.correct ? x.correct : x.correct && x.seconds < y.seconds;
    });
    const double rule = time_of(tuned.timings, ops::MatmulChoice{}), chosen = time_of(tuned.timings, tuned.choice);
    std::printf("%-22s -> %s", model::shape_name(shape).c_str(), tuned.choice.name().c_str());
    if (std::isfinite(rule) && std::isfinite(chosen) && chosen > 0) std::printf(" (the rule takes %.2fx its time)", rule / chosen);
    for (size_t i = 0; i < order.size(); ++i) {
      const ops::CandidateTiming& t = order[i];
      std::printf("%s%s ", i % 4 == 0 ? "\n    " : ",  ", t.choice.name().c_str());
      if (!std::isfinite(t.seconds)) std::printf("(cannot run)");
      else if (!t.correct) std::printf("%.2f ms (WRONG, nmse %.1e)", t.seconds * 1e3, t.nmse);
      else std::printf("%.2f ms", t.seconds * 1e3);
    }
    std::printf("\n");
  }
  for (const auto& [shape, tuned] : tunings.attention) {
    std::printf("%s -> %s", model::shape_name(shape).c_str(), ops::attention_kernel_name(tuned.kernel));
    for (const ops::AttentionTiming& t : tuned.timings) {
      std::printf("\n    %-8s ", ops::attention_kernel_name(t.kernel));
      if (!std::isfinite(t.piece_seconds)) std::printf("(cannot run)");
      else if (!t.correct) std::printf("WRONG (nmse %.1e)", t.nmse);
      else std::printf("a prefill piece %.2f ms, a decode token %.3f ms", t.piece_seconds * 1e3, t.decode_seconds * 1e3);
    }
    std::printf("\n");
  }
  const std::filesystem::path dir = vk::user_cache_directory();
  std::printf("%zu shapes in %.1f s; kept in %s\n", tunings.matmuls.size() + tunings.attention.size(), seconds_since(t0),
              dir.empty() ? "(no cache directory: not kept)" : model::tuning_cache_path(dir, device.caps()).c_str());
  return 0;
}

const RegisterCommand registration{
    "tune", "Measure the matmul kernels on each weight shape of a model and keep the fastest (the autotuner)",
    [](CLI::App& app) {
      auto args = std::make_shared<TuneArgs>();
      app.add_option("-m,--model", args->model.model, "GGUF model file")->required();
      app.add_option("--device", args->model.device, "Device index or name substring");
      app.footer("A model's prefill pieces then run the kernel kept for each weight (INFINI_TUNE=auto, the default,\n"
                 "also measures at a model's first open what the cache lacks; off: the rules alone).");
      return [args] { return run_tune(*args); };
    }};

}  // namespace
}  // namespace infini::cli
