// RoPE flags: names follow Hugging Face rope_scaling fields (docs/design.md §2.1).
#include "rope_options.hpp"

#include <string>

#include "option_checks.hpp"

namespace infini::cli {

void add_rope_options(CLI::App& app, infini::rope::RopeConfig& config) {
  using infini::rope::RopeLayout;
  using infini::rope::RopeType;
  const std::vector<std::pair<std::string, RopeType>> types{{"none", RopeType::None},       {"default", RopeType::Default},
                                              {"linear", RopeType::Linear},   {"ntk", RopeType::Ntk},
                                              {"dynamic", RopeType::Dynamic}, {"yarn", RopeType::Yarn},
                                              {"llama3", RopeType::Llama3}};
  const std::vector<std::pair<std::string, RopeLayout>> layouts{{"neox", RopeLayout::Neox}, {"interleaved", RopeLayout::Interleaved}};
  const std::string group = "RoPE";

  app.add_option("--rope-base", config.base, "RoPE base (rope_theta)")->capture_default_str()->group(group);
  app.add_option("--rope-dim", config.rotary_dim, "Rotated dims per head, even; 0 = the whole head")
      ->capture_default_str()
      ->group(group);
  add_choice_option(app, "--rope-layout", config.layout, layouts,
                    "Pairs (i, i+d/2) as in HF Llama (neox) or (2i, 2i+1) as in GPT-J and GGUF (interleaved)")
      ->default_str(infini::rope::rope_layout_name(config.layout))
      ->group(group);
  add_choice_option(app, "--rope-type", config.type, types, "RoPE variant (HF rope_type)")
      ->default_str(infini::rope::rope_type_name(config.type))
      ->group(group);
  app.add_option("--rope-factor", config.factor, "Context scaling factor (linear, ntk, dynamic, yarn, llama3)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--rope-orig-ctx", config.original_max_position_embeddings,
                 "Original (pre-training) context length L0 (dynamic, yarn, llama3)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--yarn-beta-fast", config.beta_fast, "YaRN: pairs turning more often than this in L0 keep their frequency")
      ->capture_default_str()
      ->group(group);
  app.add_option("--yarn-beta-slow", config.beta_slow, "YaRN: pairs turning less often than this in L0 are interpolated")
      ->capture_default_str()
      ->group(group);
  app.add_option_function<double>(
         "--rope-attn-factor", [&config](const double& v) { config.attention_factor = v; },
         "YaRN attention factor scaling cos and sin (default 0.1 ln(factor) + 1)")
      ->group(group);
  app.add_option("--llama3-low-freq-factor", config.low_freq_factor, "Llama 3.1: wavelengths above L0/this are interpolated")
      ->capture_default_str()
      ->group(group);
  app.add_option("--llama3-high-freq-factor", config.high_freq_factor, "Llama 3.1: wavelengths below L0/this are kept")
      ->capture_default_str()
      ->group(group);
}

}  // namespace infini::cli
