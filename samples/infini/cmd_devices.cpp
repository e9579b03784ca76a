// infini devices: every Vulkan device, its capabilities on one line, and the one that is used.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "infini/context.hpp"

namespace infini::cli {
namespace {

int run_devices(bool json) {
  const auto devices = list_devices();
  if (json) {
    for (const auto& d : devices) {
      nlohmann::json j{{"index", d.index},     {"name", d.name},         {"vendor", d.vendor},
                       {"type", d.type},       {"driver", d.driver},     {"api_version", d.api_version},
                       {"usable", d.usable},   {"selected", d.default_choice}, {"capabilities", d.capabilities}};
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
  }
  for (const auto& d : devices)
    if (d.default_choice)
      std::printf("using device %zu: %s%s\n", d.index, d.name.c_str(),
                  d.type == "cpu" ? " (software rendering: no hardware Vulkan device, or chosen by INFINI_DEVICE)" : "");
  return 0;
}

const RegisterCommand registration{"devices", "List Vulkan devices, their capabilities and the one infini uses",
                                   [](CLI::App& app) {
                                     auto json = std::make_shared<bool>(false);
                                     app.add_flag("--json", *json, "One JSON object per device");
                                     app.footer("INFINI_DEVICE=<index|name substring> overrides the choice.");
                                     return [json] { return run_devices(*json); };
                                   }};

}  // namespace
}  // namespace infini::cli
