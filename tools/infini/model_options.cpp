#include "model_options.hpp"

#include <cstdio>
#include <cstdlib>

#include "command.hpp"
#include "option_checks.hpp"

namespace infini::cli {

void add_memory_option(CLI::App& app, MemoryMode& mode) {
  add_choice_option(app, "--memory", mode, {{"auto", MemoryMode::Auto}, {"on", MemoryMode::On}, {"off", MemoryMode::Off}},
                    "Compressive memory: on, off, or auto (on when the file has Infini keys)");
}

void add_threads_option(CLI::App& app, unsigned& threads) {
  app.add_option("-t,--threads", threads,
                 "CPU threads of a CPU Vulkan driver (lavapipe: sets LP_NUM_THREADS unless the environment sets it); "
                 "no effect on GPUs")
      ->check(integer_range(1u, 1024u));
}

void add_context_options(CLI::App& app, int64_t& ctx_size, int64_t& sinks, CLI::Option* segment) {
  app.add_option("-c,--ctx-size", ctx_size,
                 "Context C of a file without Infini-attention tensors (memory off): full attention up to C tokens "
                 "of stream, then sliding: each token attends the first --sinks tokens and the most recent C - sinks "
                 "(StreamingLLM), at constant memory (default: the file's context_length, cut to what the device "
                 "holds). On an Infini-attention model only with --memory off: its local attention alone, as such "
                 "a sliding window (its context is otherwise unbounded)")
      ->check(integer_range(int64_t(1), kMaxSegment / 2))
      ->excludes(segment);
  app.add_option("--sinks", sinks, "Tokens at the start of the stream that a sliding context keeps (attention sinks)")
      ->check(integer_range(int64_t(0), kMaxSegment / 2 - 1))
      ->capture_default_str();
}

void check_context_options(const std::string& file, const ModelInfo& info, int64_t ctx_size, int64_t sinks) {
  if (ctx_size > 0 && info.context == 0)
    throw UsageError("--ctx-size: " + file +
                     " is an Infini-attention model whose context is unbounded; set its local span with --segment, "
                     "or add --memory off to run its local attention alone as a sliding window of C tokens");
  if (sinks != kDefaultSinks && info.context == 0)
    throw UsageError("--sinks: " + file + " is an Infini-attention model, which has no sliding context "
                     "(--memory off -c C gives it one)");
}

void add_ctx_full_option(CLI::App& app, bool& stop) {
  add_choice_option(app, "--ctx-full", stop, {{"slide", false}, {"stop", true}},
                    "When a plain file's stream reaches its context (-c): slide on (attention sinks, default), or "
                    "stop: refuse input past it and end generation there");
}

void check_ctx_full(bool stop, const std::string& file, const ModelInfo& info) {
  if (stop && info.context == 0)
    throw UsageError("--ctx-full: " + file + " is an Infini-attention model, whose context never fills");
}

void add_model_options(CLI::App& app, ModelArgs& args) {
  app.add_option("-m,--model", args.model, "GGUF model file (llama, qwen2, qwen3 or gemma architecture)")->required();
  auto* segment = app.add_option("--segment", args.options.segment,
                                 "Segment length N (default: the file's infini.segment_length, else " +
                                     std::to_string(kDefaultSegment) + ")")
                      ->check(integer_range(int64_t(1), kMaxSegment));
  add_context_options(app, args.ctx_size, args.sinks, segment);
  add_memory_option(app, args.options.memory);
  app.add_option("--max-piece", args.options.max_piece, "Most tokens per device submission (bounds scratch memory)")
      ->check(integer_range(1u, 65536u));
  app.add_option("--decode-chain,--greedy-chain", args.options.decode_chain,
                 "Most tokens per device submission when generating, each picked (greedy, or drawn as the host "
                 "sampler draws, top-k 1..64 or top-k 0 with top-p 1) and fed to the next step on the device (1: one "
                 "per submission; "
                 "default: on GPUs as many as decode in about 50 ms, up to 16; 1 on CPU drivers)")
      ->check(integer_range(1u, 16u));
  add_device_options(app, args);
  add_threads_option(app, args.threads);
}

void add_device_options(CLI::App& app, ModelArgs& args) {
  auto* one = app.add_option("--device", args.device, "Device index or name substring");
  app.add_option("--devices", args.devices,
                 "Devices in pipeline order, comma-separated (indices or name substrings; a device named twice "
                 "opens two logical devices); the model's layers are split over them (default: INFINI_DEVICES)")
      ->delimiter(',')
      ->excludes(one);
  app.add_option("--split", args.options.split,
                 "Share of the layers per device of --devices, comma-separated (3,1: three quarters on the first; "
                 "default: in proportion to each device's free memory)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
}

void check_model_args(const ModelArgs& args) {
  if (args.ctx_size > 0 && args.options.memory == MemoryMode::On)
    throw UsageError("--ctx-size: with --memory on the context is unbounded; set the local span with --segment");
  if (args.sinks != kDefaultSinks && args.options.memory == MemoryMode::On)
    throw UsageError("--sinks: with --memory on there is no sliding context");
}

std::unique_ptr<Context> open_context(const ModelArgs& args) {
  // lavapipe reads LP_NUM_THREADS when its first instance is created.
  if (args.threads > 0 && !std::getenv("LP_NUM_THREADS"))
    setenv("LP_NUM_THREADS", std::to_string(args.threads).c_str(), 1);
  return std::make_unique<Context>(ContextOptions{.device = args.device, .devices = args.devices});
}

OpenModel open_model(const ModelArgs& args) {
  check_model_args(args);
  OpenModel m;
  m.context = open_context(args);
  ModelOptions options = args.options;
  options.context = args.ctx_size;
  options.sinks = args.sinks;
  m.model = std::make_unique<Model>(*m.context, args.model, options);
  check_context_options(args.model, m.model->info(), args.ctx_size, args.sinks);
  for (const std::string& w : m.model->warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  m.session = std::make_unique<Session>(*m.model);
  const size_t devices = m.context->devices().size(), used = m.session->stages().size();
  if (used < devices)
    std::fprintf(stderr, "note: %zu of %zu devices get no layers (the model has %lld) and are not used\n",
                 devices - used, devices, static_cast<long long>(m.model->info().layers));
  return m;
}

}  // namespace infini::cli
