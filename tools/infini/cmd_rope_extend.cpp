// infini rope extend: Base and scaling settings for a longer context (Liu et al., NTK-aware, linear, YaRN, llama3). A table by default, --json, --svg FILE; on the same
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

namespace infini::cli {
namespace {

using namespace infini::rope;
using nlohmann::json;

struct ExtendArgs {
  int dim = 128;
  double base = 10000.0;
  std::string train_ctx, target_ctx;
  bool json = false;
  std::string svg;
};

int run_extend(const ExtendArgs& a) {
  check_dim(a.dim);
  check_base(a.base);
  if (a.dim <= 2) throw Error("--dim must be > 2 for the NTK base, got " + std::to_string(a.dim));
  const int64_t train = parse_length(a.train_ctx, "--train-ctx"), target = parse_length(a.target_ctx, "--target-ctx");
  if (target <= train)
    throw Error("--target-ctx (" + std::to_string(target) + ") must be longer than --train-ctx (" +
                std::to_string(train) + ")");
  const double T = static_cast<double>(train), T2 = static_cast<double>(target), factor = T2 / T;
  const double liu = liu_extrapolation_base(a.base, T, T2);
  const double ntk = ntk_base(a.dim, a.base, factor);
  const int critical = critical_dimension(a.dim, a.base, T);

  struct Setting {
    const char* name;
    RopeConfig config;
    std::string flags;
  };
  RopeConfig c;
  c.base = a.base;
  std::vector<Setting> settings;
  c.type = RopeType::Default;
  c.base = liu;
  settings.push_back({"liu", c, "--rope-type default --rope-base " + std::to_string(std::llround(liu))});
  c.base = a.base;
  c.type = RopeType::Ntk;
  c.factor = factor;
  settings.push_back({"ntk", c, "--rope-type ntk --rope-base " + g(a.base) + " --rope-factor " + g(factor)});
  c.type = RopeType::Linear;
  settings.push_back({"linear", c, "--rope-type linear --rope-base " + g(a.base) + " --rope-factor " + g(factor)});
  c.type = RopeType::Yarn;
  c.original_max_position_embeddings = train;
  settings.push_back({"yarn", c,
                      "--rope-type yarn --rope-base " + g(a.base) + " --rope-factor " + g(factor) + " --rope-orig-ctx " +
                          std::to_string(train) + " --yarn-beta-fast 32 --yarn-beta-slow 1"});
  c.type = RopeType::Llama3;
  settings.push_back({"llama3", c,
                      "--rope-type llama3 --rope-base " + g(a.base) + " --rope-factor " + g(factor) + " --rope-orig-ctx " +
                          std::to_string(train) + " --llama3-low-freq-factor 1 --llama3-high-freq-factor 4"});

  if (a.json) {
    json j{{"dim", a.dim},         {"base", a.base},       {"train_ctx", train}, {"target_ctx", target},
           {"factor", factor},     {"liu_base", liu},      {"ntk_base", ntk},    {"critical_dim", critical}};
    json s = json::object();
    for (const Setting& st : settings) {
      const RopeFrequencies f = rope_frequencies(st.config, a.dim, 0);
      s[st.name] = {{"flags", st.flags}, {"attention_factor", f.attention_factor},
                    {"longest_period", kTwoPi / f.inv_freq.back()}};
    }
    j["settings"] = s;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("extend d=%d, base %s from %" PRId64 " to %" PRId64 " tokens (factor %s)\n", a.dim, g(a.base).c_str(),
                train, target, g(factor).c_str());
    std::printf("Liu et al. extrapolation base  %.0f   base^(ln(T'/2pi)/ln(T/2pi)); critical dim at %" PRId64 ": %d\n",
                liu, train, critical);
    std::printf("NTK-aware base                 %.0f   base*factor^(d/(d-2))\n", ntk);
    std::printf("settings (infini attention flags; HF rope_scaling has the same fields):\n");
    for (const Setting& st : settings) {
      const RopeFrequencies f = rope_frequencies(st.config, a.dim, 0);
      std::printf("  %-7s %s\n          longest period %s tokens", st.name, st.flags.c_str(),
                  g(kTwoPi / f.inv_freq.back(), 4).c_str());
      if (f.attention_factor != 1.0) std::printf(", attention factor %s", g(f.attention_factor, 5).c_str());
      std::printf("\n");
    }
  }
  if (!a.svg.empty()) {
    svg::Plot p;
    p.title = "Extending d=" + std::to_string(a.dim) + ", base " + g(a.base) + ": " + std::to_string(train) + " -> " +
              std::to_string(target) + " tokens";
    p.x.label = "pair i (rotates two dims)";
    p.y.label = "inverse frequency theta_i (rad/token)";
    p.y.log = true;
    RopeConfig orig;
    orig.base = a.base;
    p.series.push_back(inv_freq_series("original", rope_frequencies(orig, a.dim, 0).inv_freq));
    p.series.back().dashed = true;
    for (const Setting& st : settings)
      p.series.push_back(inv_freq_series(st.name, rope_frequencies(st.config, a.dim, 0).inv_freq));
    p.rules.push_back({false, kTwoPi / T, "one turn in " + std::to_string(train)});
    p.rules.push_back({false, kTwoPi / T2, "one turn in " + std::to_string(target)});
    svg::write(p, a.svg);
    if (!a.json) std::printf("wrote %s\n", a.svg.c_str());
  }
  return 0;
}

const RegisterCommand registration{
    "rope extend", "Base and scaling settings for a longer context (Liu et al., NTK-aware, linear, YaRN, llama3)", [](CLI::App& app) {
      auto a = std::make_shared<ExtendArgs>();
      app.add_option("--dim", a->dim, "Rotary dim d")->capture_default_str();
      app.add_option("--base", a->base, "Base the model was trained with")->capture_default_str();
      app.add_option("--train-ctx", a->train_ctx, "Training context length, e.g. 8192 or 8K")->required();
      app.add_option("--target-ctx", a->target_ctx, "Target context length, e.g. 262144 or 256K")->required();
      app.add_flag("--json", a->json, "One JSON object");
      app.add_option("--svg", a->svg, "Plot inverse frequency per pair of every setting")->type_name("FILE");
      return [a] { return run_extend(*a); };
    }};

}  // namespace
}  // namespace infini::cli
