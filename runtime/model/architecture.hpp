#pragma once
// The architectures infini runs, one row each: what tells them apart in a GGUF file. The loader,
// `infini make-model`'s random writer and the docs read this table; an architecture of the same
// Llama-style graph is added here (docs/design.md, "Adding an architecture").
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "infini/rope_config.hpp"

namespace infini::model {

struct Architecture {
  std::string_view name;         // general.architecture, also the prefix of its hyperparameter keys
  rope::RopeLayout rope_layout;  // llama: interleaved pairs (llama.cpp's converter permuted the Q/K rows); others NEOX halves
  bool qkv_bias;                 // its projections have biases (blk.N.attn_{q,k,v}.bias)
  bool qk_norm;                  // each head of Q and K is RMS-normed before RoPE (blk.N.attn_{q,k}_norm.weight)
};

inline constexpr Architecture kArchitectures[] = {
    {"llama", rope::RopeLayout::Interleaved, false, false},  // Llama 1-3.x, Mistral
    {"qwen2", rope::RopeLayout::Neox, true, false},          // Qwen2, Qwen2.5
    {"qwen3", rope::RopeLayout::Neox, false, true},          // Qwen3 (dense)
};

// The row of `name`, or nullopt for an architecture infini does not run.
std::optional<Architecture> find_architecture(std::string_view name) noexcept;
// "llama, qwen2, qwen3", for messages and help.
std::string architecture_names();

}  // namespace infini::model
