#pragma once
// Subcommands of the `infini` program register themselves with a static RegisterCommand, so
// main.cpp never changes when one is added. A name with a space ("rope bound") is a subcommand of
// a group ("rope"), which registers itself with no setup.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "infini/error.hpp"

namespace infini::cli {

// A wrong use of the options found after parsing (two options that exclude each other, a value
// that only the input shows wrong): main reports it as it does CLI11's parse errors, with exit
// status 2 and a pointer at the command's --help.
class UsageError : public Error {
 public:
  using Error::Error;
};

// Adds the subcommand's options to `app` and returns what runs it (exit code). Empty for a group.
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct Command {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<Command>& commands();

struct RegisterCommand {
  RegisterCommand(std::string name, std::string description, CommandSetup setup) {
    commands().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace infini::cli
