#include "model_options.hpp"

#include <cstdio>

#include "infini/error.hpp"
#include "model/llama_loader.hpp"

namespace infini::cli {

void add_model_options(CLI::App& app, ModelArgs& args) {
  app.add_option("-m,--model", args.model, "GGUF model file (llama architecture)")->required();
  app.add_option("--segment", args.segment,
                 "Segment length N (default: the file's infini.segment_length, else 2048)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  app.add_option("--memory", args.memory, "Compressive memory: on, off, or auto (on when the file has Infini keys)")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  app.add_option("--max-piece", args.max_piece, "Most tokens per device submission (bounds scratch memory)")
      ->check(CLI::Range(1u, 65536u));
  app.add_option("--device", args.device, "Device index or name substring");
}

model::MemoryChoice memory_choice(const std::string& text) {
  return text == "on" ? model::MemoryChoice::On : text == "off" ? model::MemoryChoice::Off : model::MemoryChoice::Auto;
}

OpenModel open_model(const ModelArgs& args) {
  OpenModel m;
  m.file = std::make_unique<model::GgufFile>(args.model);
  std::vector<std::string> warnings;
  m.weights = model::load_llama(*m.file, warnings);
  for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());

  const model::RunnerOptions o =
      model::resolve_runner_options(m.weights.config, memory_choice(args.memory), args.segment, args.max_piece);

  m.context = std::make_unique<Context>(ContextOptions{.device = args.device});
  m.runner = std::make_unique<model::LlamaRunner>(m.context->vulkan_device(), m.weights, o);
  return m;
}

}  // namespace infini::cli
