#pragma once
// RoPE configuration (docs/design.md §2). Field names follow Hugging Face `rope_scaling`, so a
// config.json maps one to one. Inverse frequencies are computed on the host in double precision,
// once, by rope_frequencies(); kernels and the `infini rope` tool share that code.
#include <cstdint>
#include <optional>
#include <vector>

namespace infini::rope {

enum class RopeType { None, Default, Linear, Ntk, Dynamic, Yarn, Llama3 };

// neox: pairs (i, i + d/2) (HF Llama). interleaved: pairs (2i, 2i+1) (GPT-J, llama.cpp NORM).
enum class RopeLayout { Neox, Interleaved };

struct RopeConfig {
  RopeType type = RopeType::Default;
  RopeLayout layout = RopeLayout::Neox;
  double base = 10000.0;
  int rotary_dim = 0;  // 0: the whole head dim; otherwise even and <= head dim, the rest pass through
  double factor = 1.0;
  int64_t original_max_position_embeddings = 0;  // L0 for dynamic, yarn and llama3
  double beta_fast = 32.0;                       // yarn
  double beta_slow = 1.0;                        // yarn
  std::optional<double> attention_factor;        // yarn; default 0.1 ln(factor) + 1
  double low_freq_factor = 1.0;                  // llama3
  double high_freq_factor = 4.0;                 // llama3
  // Per-frequency divisors of theta_i (rotary_dim / 2 of them, finite and > 0), applied after the
  // type's own frequencies: GGUF files carry Llama 3.1-style scaling this way (rope_freqs.weight,
  // which llama.cpp divides the frequencies by). Empty: none.
  std::vector<double> frequency_divisors;
};

struct RopeFrequencies {
  int rotary_dim = 0;              // number of rotated dims (even); 0 for RopeType::None
  std::vector<double> inv_freq;    // rotary_dim / 2 values theta_i
  double attention_factor = 1.0;   // multiplies cos and sin (yarn); 1 otherwise
};

// Inverse frequencies for a head of `head_dim` dims. `current_length` is the sequence length the
// dynamic variant scales for (ignored by the others). Throws infini::Error with a one-line reason
// when the config does not fit (odd or too large rotary dim, base <= 1, factor < 1 for a scaling
// variant, missing original context length where one is needed, ...).
RopeFrequencies rope_frequencies(const RopeConfig& config, int head_dim, int64_t current_length);

const char* rope_type_name(RopeType type) noexcept;
const char* rope_layout_name(RopeLayout layout) noexcept;

}  // namespace infini::rope
