// infini devices: every Vulkan device, its capabilities on one line, and the one that is used.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "infini/context.hpp"
#include "infini/model.hpp"
#include "model_options.hpp"

namespace infini::cli {
namespace {

std::string percent(int64_t tenths) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%% of the layers", double(tenths) / 10.0);
  return text;
}

// The pipeline --devices / --split (or INFINI_DEVICES) would build: each logical device and its
// share of the layers (exact layer ranges when a model is given).
void print_split(const ModelArgs& args, bool json) {
  const std::unique_ptr<Context> context = open_context(args);
  const std::vector<DeviceDescription> devices = context->devices();
  int64_t layers = 0;
  if (!args.model.empty()) layers = Model(*context, args.model).info().layers;
  const int64_t shown = layers ? layers : 1000;  // without a model: shares in tenths of a percent
  const std::vector<int64_t> counts = context->layers_per_device(shown, args.options.split);
  // How hidden states would pass from each device with layers to the next one with layers.
  std::vector<std::string> handoff(devices.size()), wait(devices.size());
  for (size_t i = 0, prev = devices.size(); i < devices.size(); ++i) {
    if (counts[i] == 0) continue;
    if (prev < devices.size()) {
      handoff[prev] = context->handoff(prev, i);
      wait[prev] = context->handoff_wait(prev, i);
    }
    prev = i;
  }
  int64_t first = 0;
  if (!json) std::printf("pipeline (%zu logical devices):\n", devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string range = counts[i] == 0 ? "no layers (not used)"
                              : layers       ? "layers " + std::to_string(first) + "-" + std::to_string(first + counts[i] - 1)
                                             : percent(counts[i]);
    if (json)
      std::printf("%s\n", nlohmann::json{{"stage", i}, {"index", devices[i].index}, {"name", devices[i].name},
                                         {"layers", layers ? counts[i] : -1}, {"first_layer", first},
                                         {"share", double(counts[i]) / double(shown)},
                                         {"handoff_to_next", handoff[i]}, {"handoff_wait", wait[i]}}
                              .dump()
                              .c_str());
    else
      std::printf("  %zu: device %zu %s: %s%s\n", i, devices[i].index, devices[i].name.c_str(), range.c_str(),
                  handoff[i].empty() ? ""
                                     : ("; hands off to the next through " + handoff[i] +
                                        (wait[i] == "host" ? std::string(", the host waiting in between")
                                                           : ", the next device waiting for it on the GPU (" + wait[i] + ")"))
                                           .c_str());
    first += counts[i];
  }
}

int run_devices(bool json) {
  const auto devices = list_devices();
  if (json) {
    for (const auto& d : devices) {
      nlohmann::json j{{"index", d.index},     {"name", d.name},         {"vendor", d.vendor},
                       {"type", d.type},       {"driver", d.driver},     {"api_version", d.api_version},
                       {"usable", d.usable},   {"selected", d.default_choice}, {"capabilities", d.capabilities},
                       {"tuned_kernels", d.tuned_kernels}};
      if (!d.tuning_cache_problem.empty()) j["tuning_cache_problem"] = d.tuning_cache_problem;
      std::printf("%s\n", j.dump().c_str());
    }
    return devices.empty() ? 1 : 0;
  }
  if (devices.empty()) {
    std::printf("no Vulkan devices (install a driver; without a GPU: apt-get install mesa-vulkan-drivers)\n");
    return 1;
  }
  for (const auto& d : devices) {
    std::printf("%c %zu  %s  [%s, %s, %s, Vulkan %s]\n     %s\n", d.default_choice ? '*' : ' ', d.index, d.name.c_str(),
                d.type.c_str(), d.vendor.c_str(), d.driver.c_str(), d.api_version.c_str(), d.capabilities.c_str());
    if (!d.tuned_kernels.empty()) {  // the autotuner's kept choices (infini tune)
      std::string line;
      for (const std::string& t : d.tuned_kernels) line += (line.empty() ? "" : ", ") + t;
      std::printf("     tuned kernels (%zu shapes): %s\n", d.tuned_kernels.size(), line.c_str());
    }
    if (!d.tuning_cache_problem.empty()) std::printf("     tuning cache ignored: %s\n", d.tuning_cache_problem.c_str());
  }
  for (const auto& d : devices)
    if (d.default_choice)
      std::printf("using device %zu: %s%s\n", d.index, d.name.c_str(),
                  d.type == "cpu" ? " (software rendering: no hardware Vulkan device, or chosen by INFINI_DEVICE)" : "");
  return 0;
}

int run_profiles(bool json) {
  for (const DeviceProfileDescription& p : device_profiles()) {
    if (json)
      std::printf("%s\n", nlohmann::json{{"profile", p.name}, {"description", p.description}, {"subgroup_size", p.subgroup_size}}.dump().c_str());
    else
      std::printf("%-20s %s\n", p.name.c_str(), p.description.c_str());
  }
  return 0;
}

struct DevicesArgs {
  bool json = false;
  bool profiles = false;
  ModelArgs split;
};

const RegisterCommand registration{
    "devices", "List Vulkan devices, their capabilities and the one infini uses", [](CLI::App& app) {
      auto args = std::make_shared<DevicesArgs>();
      app.add_flag("--json", args->json, "One JSON object per device");
      app.add_flag("--profiles", args->profiles, "List the device profiles INFINI_DEVICE_PROFILE takes");
      add_device_options(app, args->split);
      app.add_option("-m,--model", args->split.model, "With --devices: show the layer ranges for this model");
      app.footer("INFINI_DEVICE=<index|name substring> overrides the choice; INFINI_DEVICES=LIST (or --devices)\n"
                 "names a pipeline of devices, whose layer split is then shown. INFINI_DEVICE_PROFILE=NAME shows\n"
                 "(and runs) every device as that phone or board GPU; INFINI_QUIRKS=off|NAME,... sets the\n"
                 "known-bug workarounds.");
      return [args] {
        if (args->profiles) return run_profiles(args->json);
        const bool pipeline = !args->split.devices.empty() || !args->split.options.split.empty() ||
                              !args->split.model.empty() || std::getenv("INFINI_DEVICES");
        if (!pipeline) return run_devices(args->json);
        print_split(args->split, args->json);
        return 0;
      };
    }};

}  // namespace
}  // namespace infini::cli
