#include "model_options.hpp"

#include <cstdio>

#include "infini/error.hpp"
#include "model/llama_loader.hpp"
#include "vk/device.hpp"

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
  add_device_options(app, args);
}

void add_device_options(CLI::App& app, ModelArgs& args) {
  auto* one = app.add_option("--device", args.device, "Device index or name substring");
  app.add_option("--devices", args.devices,
                 "Devices in pipeline order, comma-separated (indices or name substrings; a device named twice "
                 "opens two logical devices); the model's layers are split over them (default: INFINI_DEVICES)")
      ->delimiter(',')
      ->excludes(one);
  app.add_option("--split", args.split,
                 "Share of the layers per device of --devices, comma-separated (3,1: three quarters on the first; "
                 "default: in proportion to each device's free memory)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
}

size_t next_feed(const model::LlamaRunner& runner, size_t remaining) {
  const int64_t segment = runner.options().infini.segment;
  const int64_t segments = runner.stages().size() > 1 ? 8 : 1;
  return std::min(remaining, size_t(segment * segments - runner.tokens_seen() % segment));
}

std::unique_ptr<Context> open_context(const ModelArgs& args) {
  return std::make_unique<Context>(ContextOptions{.device = args.device, .devices = args.devices});
}

std::vector<int64_t> layers_per_device(const Context& context, const ModelArgs& args, int64_t layers) {
  return model::layers_for_devices(context.vulkan_devices(), layers, args.split);
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

  m.context = open_context(args);
  const std::vector<int64_t> split = layers_per_device(*m.context, args, m.weights.config.layers);
  m.runner = std::make_unique<model::LlamaRunner>(m.context->vulkan_devices(), m.weights, o, split);
  if (m.runner->stages().size() < split.size())
    std::fprintf(stderr, "note: %zu of %zu devices get no layers (the model has %lld) and are not used\n",
                 split.size() - m.runner->stages().size(), split.size(), static_cast<long long>(m.weights.config.layers));
  return m;
}

}  // namespace infini::cli
