#pragma once
// The RoPE command-line flags (docs/design.md §2.1), shared by `infini attention` and
// `infini rope freqs` so both read a config.json's rope_scaling the same way.
#include <CLI/CLI.hpp>

#include "infini/rope_config.hpp"

namespace infini::cli {

// Adds --rope-base --rope-dim --rope-layout --rope-type --rope-factor --rope-orig-ctx
// --yarn-beta-fast --yarn-beta-slow --rope-attn-factor --llama3-low-freq-factor
// --llama3-high-freq-factor to `app`, writing into `config` (which must outlive parsing). The
// defaults are config's current values.
void add_rope_options(CLI::App& app, infini::rope::RopeConfig& config);

}  // namespace infini::cli
