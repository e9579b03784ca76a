// infini: the command-line program. Each subcommand lives in its own cmd_*.cpp.
#include <algorithm>
#include <cstdio>
#include <map>

#include "command.hpp"
#include "infini/error.hpp"

namespace infini::cli {
std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}
}  // namespace infini::cli

int main(int argc, char** argv) {
  using namespace infini::cli;
  CLI::App app{"infini: Infini-attention on Vulkan. Streams unbounded input through segment attention with a "
               "compressive memory, on any GPU or on lavapipe."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "infini 0.1.0");

  auto& all = commands();
  std::sort(all.begin(), all.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  std::map<CLI::App*, std::function<int()>> runners;
  for (const Command& c : all) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    runners[sub] = c.setup(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "infini: error: %s (see infini --help)\n", e.what());
    return 2;
  }

  CLI::App* chosen = app.get_subcommands().front();
  try {
    return runners.at(chosen)();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infini %s: error: %s\n", chosen->get_name().c_str(), e.what());
    return 1;
  }
}
