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

namespace {
// "rope bound" for the subcommand bound of rope.
std::string command_path(const CLI::App* app) {
  std::string path = app->get_name();
  for (const CLI::App* p = app->get_parent(); p && p->get_parent(); p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}
}  // namespace
}  // namespace infini::cli

int main(int argc, char** argv) {
  using namespace infini::cli;
  CLI::App app{"infini: Infini-attention on Vulkan. Streams unbounded input through segment attention with a "
               "compressive memory, on any GPU or on lavapipe."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "infini 0.1.0");

  auto& all = commands();
  std::sort(all.begin(), all.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  // Groups sort before their members ("rope" < "rope bound"), so a member's parent exists.
  std::map<std::string, CLI::App*> apps;
  std::map<CLI::App*, std::function<int()>> runners;
  for (const Command& c : all) {
    const size_t space = c.name.rfind(' ');
    CLI::App* parent = space == std::string::npos ? &app : apps.at(c.name.substr(0, space));
    CLI::App* sub = parent->add_subcommand(c.name.substr(space + 1), c.description);
    apps[c.name] = sub;
    if (c.setup) runners[sub] = c.setup(*sub);
    else sub->require_subcommand(1);
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
  while (!runners.count(chosen)) chosen = chosen->get_subcommands().front();
  try {
    return runners.at(chosen)();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infini %s: error: %s\n", command_path(chosen).c_str(), e.what());
    return 1;
  }
}
