#pragma once
// Options shared by the subcommands that run a GGUF model (eval, run, passkey, bench): which file,
// which devices, and how the stream is cut and remembered. Opening resolves them against the
// file's own Infini-attention keys (infini::ModelOptions).
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "infini/context.hpp"
#include "infini/model.hpp"
#include "infini/session.hpp"

namespace infini::cli {

struct ModelArgs {
  std::string model;
  std::string device;
  std::vector<std::string> devices;  // pipeline order; INFINI_DEVICES when empty
  ModelOptions options;              // segment, memory, max piece, split
  // -c/--ctx-size (0: not given) and --sinks: a plain file's sliding context (ModelOptions::context,
  // ::sinks); an Infini-attention model refuses them (its context is unbounded). Resolved in
  // open_model only.
  int64_t ctx_size = 0;
  int64_t sinks = kDefaultSinks;
  unsigned threads = 0;  // -t/--threads: a CPU Vulkan driver's threads (0: the driver's default)
};

// -m, --segment, -c, --memory, --max-piece, --decode-chain, the device options and -t.
void add_model_options(CLI::App& app, ModelArgs& args);

// --device, --devices and --split (also for commands without a model).
void add_device_options(CLI::App& app, ModelArgs& args);

// -t/--threads into `threads` (for the commands that open a device).
void add_threads_option(CLI::App& app, unsigned& threads);

// -c/--ctx-size and --sinks (a plain file's sliding context), -c excluding `segment`.
void add_context_options(CLI::App& app, int64_t& ctx_size, int64_t& sinks, CLI::Option* segment);

// Throws UsageError where -c or --sinks was given for an Infini-attention model (its context is
// unbounded): the one place they are resolved against the opened file.
void check_context_options(const std::string& file, const ModelInfo& info, int64_t ctx_size, int64_t sinks);

// --ctx-full slide|stop into `stop`; check_ctx_full refuses stop on an Infini-attention model.
void add_ctx_full_option(CLI::App& app, bool& stop);
void check_ctx_full(bool stop, const std::string& file, const ModelInfo& info);

// --memory auto|on|off into `mode`.
void add_memory_option(CLI::App& app, MemoryMode& mode);

// Throws UsageError for options that exclude each other (-c with --memory on); open_model checks
// this too, but a command calls it first to refuse before reading its input.
void check_model_args(const ModelArgs& args);

// Applies -t (LP_NUM_THREADS for lavapipe, unless the environment sets it) and opens the
// context the device options name. Nothing else may create a Vulkan instance before.
std::unique_ptr<Context> open_context(const ModelArgs& args);

// A model opened on its devices with one session: everything a model run needs, alive together.
struct OpenModel {
  std::unique_ptr<Context> context;
  std::unique_ptr<Model> model;
  std::unique_ptr<Session> session;
};

// Loads the model and uploads it; its warnings and a note on unused devices go to stderr.
OpenModel open_model(const ModelArgs& args);

}  // namespace infini::cli
