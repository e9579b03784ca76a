// infini rope freqs: Inverse frequencies, wavelengths and attention factor of a RoPE variant. A table by default, --json, --svg FILE; on the same
// host frequency code the kernels use (docs/design.md §2).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "infini/error.hpp"
#include "infini/rope_config.hpp"
#include "rope_analysis/rope_analysis.hpp"
#include "rope_analysis/svg_plot.hpp"
#include "rope_common.hpp"
#include "rope_options.hpp"

namespace infini::cli {
namespace {

using namespace infini::rope;
using nlohmann::json;

struct FreqsArgs {
  RopeConfig config;
  int head_dim = 128;
  std::string length;  // current length for dynamic
  bool json = false;
  std::string svg;
};

int run_freqs(const FreqsArgs& a) {
  const int64_t length = a.length.empty() ? 0 : parse_length(a.length, "--length");
  const RopeFrequencies f = rope_frequencies(a.config, a.head_dim, length);
  RopeConfig plain = a.config;
  plain.type = RopeType::Default;
  const std::vector<double> unscaled =
      a.config.type == RopeType::None ? std::vector<double>{} : rope_frequencies(plain, a.head_dim, 0).inv_freq;

  std::vector<double> wavelength;
  for (double t : f.inv_freq) wavelength.push_back(kTwoPi / t);
  if (a.json) {
    json j{{"rope_type", rope_type_name(a.config.type)},
           {"layout", rope_layout_name(a.config.layout)},
           {"head_dim", a.head_dim},
           {"rotary_dim", f.rotary_dim},
           {"base", a.config.base},
           {"factor", a.config.factor},
           {"original_max_position_embeddings", a.config.original_max_position_embeddings},
           {"current_length", length},
           {"attention_factor", f.attention_factor},
           {"inv_freq", f.inv_freq},
           {"wavelength", wavelength}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("rope %s, layout %s, head dim %d, rotary dim %d, base %s", rope_type_name(a.config.type),
                rope_layout_name(a.config.layout), a.head_dim, f.rotary_dim, g(a.config.base).c_str());
    if (a.config.type != RopeType::Default && a.config.type != RopeType::None)
      std::printf(", factor %s", g(a.config.factor).c_str());
    if (a.config.original_max_position_embeddings > 0)
      std::printf(", original context %" PRId64, a.config.original_max_position_embeddings);
    if (a.config.type == RopeType::Dynamic) std::printf(", current length %" PRId64, length);
    std::printf("\nattention factor %s\n", g(f.attention_factor).c_str());
    if (f.rotary_dim < a.head_dim) std::printf("dims %d..%d pass through unrotated\n", f.rotary_dim, a.head_dim - 1);
    if (!f.inv_freq.empty())
      std::printf("%5s  %-9s  %-13s  %-13s  %s\n", "pair", "dims", "inv_freq", "wavelength", "scaled down by");
    for (size_t i = 0; i < f.inv_freq.size(); ++i)
      std::printf("%5zu  %-9s  %-13s  %-13s  %s\n", i, pair_dims(int(i), f.rotary_dim, a.config.layout).c_str(),
                  g(f.inv_freq[i]).c_str(), g(wavelength[i]).c_str(), g(unscaled[i] / f.inv_freq[i], 5).c_str());
  }
  if (!a.svg.empty()) {
    if (a.config.type == RopeType::None) throw Error("--svg: rope type none has no frequencies to plot");
    plot_variants(a.config, a.head_dim, length, a.svg);
    if (!a.json) std::printf("wrote %s\n", a.svg.c_str());
  }
  return 0;
}

const RegisterCommand registration{
    "rope freqs", "Inverse frequencies, wavelengths and attention factor of a RoPE variant", [](CLI::App& app) {
      auto a = std::make_shared<FreqsArgs>();
      add_rope_options(app, a->config);
      app.add_option("--head-dim", a->head_dim, "Head dim D")->capture_default_str();
      app.add_option("--length", a->length, "Current sequence length (dynamic), e.g. 16384 or 16K");
      app.add_flag("--json", a->json, "One JSON object");
      app.add_option("--svg", a->svg, "Plot inverse frequency per pair for every scaling variant")
          ->type_name("FILE");
      return [a] { return run_freqs(*a); };
    }};

}  // namespace
}  // namespace infini::cli
