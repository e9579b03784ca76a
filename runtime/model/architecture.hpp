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

// The feed-forward's gate: silu(gate) * up (SwiGLU), or gelu(gate) * up with GELU's tanh
// approximation (GeGLU, as llama.cpp's ggml_gelu computes it).
enum class FfnGate { SwiGlu, GeGlu };

struct Architecture {
  std::string_view name;         // general.architecture, also the prefix of its hyperparameter keys
  rope::RopeLayout rope_layout;  // llama: interleaved pairs (llama.cpp's converter permuted the Q/K rows); others NEOX halves
  bool qkv_bias;                 // its projections have biases (blk.N.attn_{q,k,v}.bias)
  bool qk_norm;                  // each head of Q and K is RMS-normed before RoPE (blk.N.attn_{q,k}_norm.weight)
  FfnGate ffn_gate = FfnGate::SwiGlu;
  bool scaled_embedding = false;  // the embedding rows are multiplied by sqrt(n_embd) as they are read
  bool tied_output = false;       // the logits always use token_embd (an output.weight is not read)
};

inline constexpr Architecture kArchitectures[] = {
    {"llama", rope::RopeLayout::Interleaved, false, false},  // Llama 1-3.x, Mistral
    {"qwen2", rope::RopeLayout::Neox, true, false},          // Qwen2, Qwen2.5
    {"qwen3", rope::RopeLayout::Neox, false, true},          // Qwen3 (dense)
    // Gemma 1 (2B: MQA, head_dim 256). Its RMSNorm's (1 + w) is in the file already: llama.cpp's
    // converter adds the 1 to every norm weight, so the norm reads them as any other.
    {"gemma", rope::RopeLayout::Neox, false, false, FfnGate::GeGlu, true, true},
};

// The row of `name`, or nullopt for an architecture infini does not run.
std::optional<Architecture> find_architecture(std::string_view name) noexcept;
// "llama, qwen2, qwen3, gemma", for messages and help.
std::string architecture_names();

}  // namespace infini::model
