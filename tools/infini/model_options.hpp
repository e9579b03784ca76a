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
};

void add_model_options(CLI::App& app, ModelArgs& args);

// --device, --devices and --split (also for commands without a model).
void add_device_options(CLI::App& app, ModelArgs& args);

// --memory auto|on|off into `mode`.
void add_memory_option(CLI::App& app, MemoryMode& mode);

// The context the device options name.
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
