#pragma once
// Options shared by the subcommands that run a GGUF model (eval, run, bench): which file, which
// device, and how the stream is cut and remembered. Opening resolves them against the file's own
// Infini-attention keys: a file with them runs with memory on and its segment length; a plain
// Llama file runs with memory off and segments of 2048 tokens unless told otherwise.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "infini/context.hpp"
#include "model/gguf_file.hpp"
#include "model/llama_runner.hpp"
#include "model/llama_weights.hpp"

namespace infini::cli {

struct ModelArgs {
  std::string model;
  std::string device;
  std::vector<std::string> devices;  // pipeline order; INFINI_DEVICES when empty
  std::vector<double> split;         // shares of the layers per device; empty: by device memory
  int64_t segment = 0;          // 0: the file's infini.segment_length, else 2048
  std::string memory = "auto";  // on | off | auto (on when the file has the Infini keys)
  uint32_t max_piece = 256;
};

void add_model_options(CLI::App& app, ModelArgs& args);

// --device, --devices and --split (also for commands without a model).
void add_device_options(CLI::App& app, ModelArgs& args);

// The context the device options name.
std::unique_ptr<Context> open_context(const ModelArgs& args);

// How many of `remaining` input tokens to feed next when streaming a long input in calls that
// end on segment boundaries (for progress lines and checkpoints): the rest of the open segment,
// plus seven more segments on a multi-device pipeline so that its stages overlap them.
size_t next_feed(const model::LlamaRunner& runner, size_t remaining);

// Layers per device of `context` for a model of `layers` layers, as --split (or device memory) says.
std::vector<int64_t> layers_per_device(const Context& context, const ModelArgs& args, int64_t layers);

// "auto" | "on" | "off", as the --memory options of eval, run and bench take it.
model::MemoryChoice memory_choice(const std::string& text);

// Everything a model run needs, alive together (the weights point into the mapped file).
struct OpenModel {
  std::unique_ptr<Context> context;
  std::unique_ptr<model::GgufFile> file;
  model::LlamaWeights weights;
  std::unique_ptr<model::LlamaRunner> runner;
};

// Loads and uploads the model; loader warnings go to stderr, one line each.
OpenModel open_model(const ModelArgs& args);

}  // namespace infini::cli
