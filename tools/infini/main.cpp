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

// "infini rope bound", as errors and help pointers name a command; "infini" for the program.
std::string program_path(const CLI::App* app) { return app->get_parent() ? "infini " + command_path(app) : "infini"; }

// The command the leading words of argv name (the program, a group or a command), and the first
// word where a group wants a command and that names none.
struct NamedCommand {
  CLI::App* app;
  std::string unknown;
};

NamedCommand named_command(CLI::App& program, int argc, char** argv, const std::map<CLI::App*, std::function<int()>>& runners) {
  CLI::App* at = &program;
  for (int i = 1; i < argc && !runners.count(at); ++i) {
    const std::string word = argv[i];
    if (word.starts_with('-')) break;  // the group's own options (--help, --version)
    const std::vector<CLI::App*> named = at->get_subcommands([&](CLI::App* sub) { return sub->check_name(word); });
    if (named.empty()) return {at, word};
    at = named.front();
  }
  return {at, ""};
}

// How a wrong command line is reported: one line naming the command, and its --help.
int usage_error(const CLI::App* app, const std::string& message) {
  const std::string path = program_path(app);
  std::fprintf(stderr, "%s: error: %s (see %s --help)\n", path.c_str(), message.c_str(), path.c_str());
  return 2;
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

  const NamedCommand named = named_command(app, argc, argv, runners);
  if (!named.unknown.empty()) return usage_error(named.app, "unknown command '" + named.unknown + "'");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (!runners.count(named.app) && dynamic_cast<const CLI::RequiredError*>(&e))
      return usage_error(named.app, "give a command");
    return usage_error(named.app, e.what());
  }

  CLI::App* chosen = app.get_subcommands().front();
  while (!runners.count(chosen)) chosen = chosen->get_subcommands().front();
  try {
    return runners.at(chosen)();
  } catch (const UsageError& e) {
    return usage_error(chosen, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infini %s: error: %s\n", command_path(chosen).c_str(), e.what());
    return 1;
  }
}
