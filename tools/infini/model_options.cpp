#include "model_options.hpp"

#include <cstdio>

namespace infini::cli {

void add_memory_option(CLI::App& app, MemoryMode& mode) {
  const std::map<std::string, MemoryMode> modes{
      {"auto", MemoryMode::Auto}, {"on", MemoryMode::On}, {"off", MemoryMode::Off}};
  app.add_option("--memory", mode, "Compressive memory: on, off, or auto (on when the file has Infini keys)")
      ->transform(CLI::CheckedTransformer(modes));
}

void add_model_options(CLI::App& app, ModelArgs& args) {
  app.add_option("-m,--model", args.model, "GGUF model file (llama architecture)")->required();
  app.add_option("--segment", args.options.segment,
                 "Segment length N (default: the file's infini.segment_length, else " +
                     std::to_string(kDefaultSegment) + ")")
      ->check(CLI::Range(int64_t(1), kMaxSegment));
  add_memory_option(app, args.options.memory);
  app.add_option("--max-piece", args.options.max_piece, "Most tokens per device submission (bounds scratch memory)")
      ->check(CLI::Range(1u, 65536u));
  app.add_option("--decode-chain,--greedy-chain", args.options.decode_chain,
                 "Most tokens per device submission when generating, each picked (greedy, or drawn as the host "
                 "sampler draws, top-k 1..64 or top-k 0 with top-p 1) and fed to the next step on the device (1: one "
                 "per submission; "
                 "default: on GPUs as many as decode in about 50 ms, up to 16; 1 on CPU drivers)")
      ->check(CLI::Range(1u, 16u));
  add_device_options(app, args);
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

std::unique_ptr<Context> open_context(const ModelArgs& args) {
  return std::make_unique<Context>(ContextOptions{.device = args.device, .devices = args.devices});
}

OpenModel open_model(const ModelArgs& args) {
  OpenModel m;
  m.context = open_context(args);
  m.model = std::make_unique<Model>(*m.context, args.model, args.options);
  for (const std::string& w : m.model->warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  m.session = std::make_unique<Session>(*m.model);
  const size_t devices = m.context->devices().size(), used = m.session->stages().size();
  if (used < devices)
    std::fprintf(stderr, "note: %zu of %zu devices get no layers (the model has %lld) and are not used\n",
                 devices - used, devices, static_cast<long long>(m.model->info().layers));
  return m;
}

}  // namespace infini::cli
