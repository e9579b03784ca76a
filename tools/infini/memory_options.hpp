#pragma once
// The command-line flags of the memory's conventions (docs/design.md §1.8), shared by
// `infini attention` (a layer's options) and `infini make-model` (the keys a file states).
#include <CLI/CLI.hpp>

#include "infini/attention_options.hpp"

namespace infini::cli {

// Where each flag writes; every target must outlive parsing.
struct MemoryConventionTargets {
  MemoryPositions& positions;
  MemoryHeadMap& head_map;
  GateShape& gate_shape;
  float& z_init;
  float& eps;
  EpsMode& eps_mode;
};

// Adds --memory-rope --head-map --gate-shape --z-init --eps --eps-mode to `app`.
void add_memory_convention_options(CLI::App& app, MemoryConventionTargets targets);

}  // namespace infini::cli
