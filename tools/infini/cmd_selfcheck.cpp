// infini selfcheck: a quick end-to-end proof that the device computes correctly (infini/selfcheck.hpp).
#include <cstdio>

#include "command.hpp"
#include "infini/selfcheck.hpp"

namespace infini::cli {
namespace {

int run_selfcheck(const std::string& device_selector) {
  Context context({.device = device_selector});
  std::printf("selfcheck on %s\n", context.device().name.c_str());
  int failures = 0;
  for (const SelfcheckResult& r : selfcheck(context)) {
    failures += !r.passed;
    std::printf("  %-32s max error %g  %s\n", r.name.c_str(), r.max_error, r.passed ? "ok" : "FAILED");
  }
  std::printf(failures ? "selfcheck FAILED (%d)\n" : "selfcheck passed\n", failures);
  return failures ? 1 : 0;
}

const RegisterCommand registration{"selfcheck", "Check the device's results against exact integer products",
                                   [](CLI::App& app) {
                                     auto device = std::make_shared<std::string>();
                                     app.add_option("--device", *device, "Device index or name substring");
                                     return [device] { return run_selfcheck(*device); };
                                   }};

}  // namespace
}  // namespace infini::cli
