// infini rope: the seed articles' RoPE analyses (DESIGN.md section 1) as a tool, on the same host
// frequency code the kernels use. Tables by default, --json (one object per line), --svg FILE.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>
#include <vector>

#include "command.hpp"
#include "infini/error.hpp"
#include "rope/rope_analysis.hpp"
#include "infini/rope_config.hpp"
#include "rope/svg_plot.hpp"
#include "rope_options.hpp"

namespace infini::cli {
namespace {

using namespace infini::rope;
using nlohmann::json;
constexpr double kTwoPi = 2.0 * std::numbers::pi;

// Context lengths: 4096, 4K (= 4096) or 1M (= 1048576), as model cards write them.
int64_t parse_length(const std::string& text, const char* flag) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw Error(std::string(flag) + ": expected a length like 4096, 4K or 1M, got '" + text + "'");
  }
  const std::string suffix = text.substr(used);
  int64_t scale = 1;
  if (suffix == "k" || suffix == "K") scale = 1024;
  else if (suffix == "m" || suffix == "M") scale = 1024 * 1024;
  else if (!suffix.empty()) throw Error(std::string(flag) + ": expected a length like 4096, 4K or 1M, got '" + text + "'");
  if (value <= 0) throw Error(std::string(flag) + " must be > 0, got '" + text + "'");
  return static_cast<int64_t>(value) * scale;
}

void check_dim(int dim) {
  if (dim <= 0 || dim % 2 != 0) throw Error("--dim must be even and positive, got " + std::to_string(dim));
}

void check_base(double base) {
  if (!std::isfinite(base) || base <= 1.0) throw Error("--base must be > 1, got " + svg::tick_label(base));
}

std::string g(double v, int digits = 6) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// The dims a pair rotates, which depends on the layout.
std::string pair_dims(int i, int d, RopeLayout layout) {
  return layout == RopeLayout::Neox ? std::to_string(i) + "," + std::to_string(i + d / 2)
                                    : std::to_string(2 * i) + "," + std::to_string(2 * i + 1);
}

svg::Series inv_freq_series(const std::string& label, const std::vector<double>& inv) {
  svg::Series s;
  s.label = label;
  for (size_t i = 0; i < inv.size(); ++i) {
    s.x.push_back(static_cast<double>(i));
    s.y.push_back(inv[i]);
  }
  return s;
}

// Inverse frequency per pair of every scaling variant with this base, factor and L0.
void plot_variants(const RopeConfig& base_config, int head_dim, int64_t length, const std::string& path) {
  svg::Plot p;
  p.title = "RoPE inverse frequency per pair, base " + g(base_config.base) + ", factor " + g(base_config.factor) +
            (base_config.original_max_position_embeddings > 0
                 ? ", L0 " + std::to_string(base_config.original_max_position_embeddings)
                 : "");
  p.x.label = "pair i (rotates two dims)";
  p.y.label = "inverse frequency theta_i (rad/token)";
  p.y.log = true;
  const bool have_l0 = base_config.original_max_position_embeddings > 0;
  for (RopeType t : {RopeType::Default, RopeType::Linear, RopeType::Ntk, RopeType::Dynamic, RopeType::Yarn,
                     RopeType::Llama3}) {
    if (t != RopeType::Default && base_config.factor <= 1.0) continue;
    if ((t == RopeType::Dynamic || t == RopeType::Yarn || t == RopeType::Llama3) && !have_l0) continue;
    RopeConfig c = base_config;
    c.type = t;
    // Without a length, show dynamic where it matters: at factor * L0.
    const int64_t at = t != RopeType::Dynamic ? 0
                       : length > 0         ? length
                                            : static_cast<int64_t>(base_config.factor *
                                                                   double(base_config.original_max_position_embeddings));
    std::string label = rope_type_name(t);
    if (t == RopeType::Dynamic) label += " at L=" + std::to_string(at);
    p.series.push_back(inv_freq_series(label, rope_frequencies(c, head_dim, at).inv_freq));
    if (t == RopeType::Default) p.series.back().dashed = true;
  }
  if (have_l0)
    p.rules.push_back({false, kTwoPi / static_cast<double>(base_config.original_max_position_embeddings), "one turn in L0"});
  svg::write(p, path);
}

// ---- freqs -------------------------------------------------------------------------------

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

// ---- coverage ----------------------------------------------------------------------------

struct CoverageArgs {
  int dim = 128;
  double base = 10000.0;
  std::string ctx;
  bool json = false;
  std::string svg;
};

int run_coverage(const CoverageArgs& a) {
  check_dim(a.dim);
  check_base(a.base);
  const int64_t ctx = parse_length(a.ctx, "--ctx");
  const Coverage c = rope_coverage(a.dim, a.base, static_cast<double>(ctx));
  if (a.json) {
    json j{{"dim", a.dim},           {"base", a.base},
           {"ctx", ctx},             {"period", c.period},
           {"complete_dims", c.complete_dims}, {"complete_pairs", c.complete_pairs},
           {"critical_dim", c.critical_dim}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("RoPE periods 2 pi / theta_i, d=%d, base %s, context %" PRId64 "\n", a.dim, g(a.base).c_str(), ctx);
    std::printf("%5s  %-9s  %-13s  %s\n", "pair", "dims", "period", "full period within context");
    for (size_t i = 0; i < c.period.size(); ++i)
      std::printf("%5zu  %-9s  %-13s  %s\n", i, (std::to_string(2 * i) + "," + std::to_string(2 * i + 1)).c_str(),
                  g(c.period[i]).c_str(), c.period[i] <= static_cast<double>(ctx) ? "yes" : "no");
    std::printf("%d of %d dims (%d of %d pairs) complete a full period within %" PRId64 " tokens\n", c.complete_dims,
                a.dim, c.complete_pairs, a.dim / 2, ctx);
    std::printf("Liu et al. critical dimension 2*ceil((d/2) log_base(T/2pi)) = %d\n", c.critical_dim);
  }
  if (!a.svg.empty()) {
    svg::Plot p;
    p.title = "RoPE period per dimension, d=" + std::to_string(a.dim) + ", base " + g(a.base);
    p.x.label = "dimension 2i (pair i rotates dims 2i, 2i+1)";
    p.y.label = "period 2 pi / theta_i (tokens)";
    p.y.log = true;
    svg::Series s;
    s.style = svg::Style::LinePoints;
    for (size_t i = 0; i < c.period.size(); ++i) {
      s.x.push_back(2.0 * static_cast<double>(i));
      s.y.push_back(c.period[i]);
    }
    p.series.push_back(s);
    p.rules.push_back({false, static_cast<double>(ctx), "context " + std::to_string(ctx)});
    p.rules.push_back({true, static_cast<double>(c.critical_dim), "critical dim " + std::to_string(c.critical_dim)});
    svg::write(p, a.svg);
    if (!a.json) std::printf("wrote %s\n", a.svg.c_str());
  }
  return 0;
}

// ---- extend ------------------------------------------------------------------------------

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

// ---- bound -------------------------------------------------------------------------------

struct BoundArgs {
  int dim = 128;
  std::string ctx;  // empty: the 1K..1M table
  int grid = 64;
  std::vector<double> plot_bases;
  bool json = false;
  std::string svg;
};

json bound_json(const BaseBound& b) {
  json islands = json::array();
  for (const FeasibleRun& r : b.islands) islands.push_back({r.low, r.high});
  return {{"dim", b.dim},
          {"ctx", b.length},
          {"lowest_feasible_base", b.lowest_feasible},
          {"lowest_feasible_grid", b.lowest_feasible_grid},
          {"feasible_from_base", b.stable},
          {"feasible_from_grid", b.stable_grid},
          {"certified_from", b.certified},
          {"islands", islands},
          {"grid_per_decade", b.grid_per_decade},
          {"grid_low", b.grid_low},
          {"grid_high", b.grid_high},
          {"grid_points", b.grid_points},
          {"feasible_points", b.feasible_points},
          {"fails_below_at_m", b.below_stable_fails_at}};
}

void print_method(int grid) {
  std::printf(
      "search: grid 10^(k/%d) (step x%s) from 10^(1/%d) up to the certified base; every grid point checked at "
      "every integer m (branch and bound on m, exact sums in the leaves); at and above the certified base "
      "feasibility is proven (pairs with L*theta_i <= pi give >= cos(L*theta_i), the others >= -1); the two "
      "boundaries refined by bisection in log base to 1e-6. Islands narrower than one grid step can be missed "
      "(raise --grid-per-decade).\n",
      grid, g(std::pow(10.0, 1.0 / grid), 4).c_str(), grid);
}

// sum_i cos(m theta_i) against m, as a min/max band per pixel column so that 1M positions
// stay a small file.
svg::Series cos_sum_series(int dim, double base, int64_t length, const std::string& label) {
  RopeConfig c;
  c.base = base;
  const std::vector<double> curve = cos_sum_curve(rope_frequencies(c, dim, 0).inv_freq, length);
  constexpr int64_t kBins = 600;
  svg::Series s;
  s.label = label;
  const int64_t per_bin = std::max<int64_t>(1, (length + kBins) / kBins);
  for (int64_t start = 0; start <= length; start += per_bin) {
    const int64_t end = std::min(length, start + per_bin - 1);
    double lo = curve[size_t(start)], hi = lo;
    for (int64_t m = start; m <= end; ++m) {
      lo = std::min(lo, curve[size_t(m)]);
      hi = std::max(hi, curve[size_t(m)]);
    }
    s.x.push_back(0.5 * static_cast<double>(start + end));
    s.y.push_back(lo);  // the line follows the minimum, which decides feasibility
    s.y_low.push_back(hi);
  }
  return s;
}

int run_bound(const BoundArgs& a) {
  check_dim(a.dim);
  if (a.dim < 6) throw Error("--dim must be >= 6 for the base bound, got " + std::to_string(a.dim));
  const BoundSearchOptions options{a.grid, 1e-6};
  for (double b : a.plot_bases) check_base(b);

  if (!a.ctx.empty()) {
    const int64_t L = parse_length(a.ctx, "--ctx");
    const BaseBound b = rope_base_bound(a.dim, L, options);
    if (a.json) {
      std::printf("%s\n", bound_json(b).dump().c_str());
    } else {
      std::printf("Men et al. lower bound of the RoPE base, d=%d, L=%" PRId64
                  ": smallest base with sum_i cos(m theta_i) > 0 for every integer m in 0..L\n",
                  a.dim, L);
      std::printf("lowest feasible base      %s  (grid point %s)\n", g(b.lowest_feasible).c_str(),
                  g(b.lowest_feasible_grid).c_str());
      std::printf("feasible from base        %s  (every grid point from %s to %s is feasible)\n", g(b.stable).c_str(),
                  g(b.stable_grid).c_str(), g(b.grid_high).c_str());
      if (b.below_stable_fails_at >= 0)
        std::printf("just below it             the sum first drops to <= 0 at m = %" PRId64 "\n", b.below_stable_fails_at);
      std::printf("islands below that        %zu", b.islands.size());
      for (const FeasibleRun& r : b.islands) std::printf("  [%s, %s]", g(r.low, 4).c_str(), g(r.high, 4).c_str());
      std::printf("\n%d grid points checked, %d feasible; certified from %s\n", b.grid_points, b.feasible_points,
                  g(b.certified, 4).c_str());
      print_method(b.grid_per_decade);
    }
    if (!a.svg.empty()) {
      svg::Plot p;
      p.title = "sum_i cos(m theta_i), d=" + std::to_string(a.dim) + ", m = 0.." + std::to_string(L);
      p.x.label = "relative distance m (tokens)";
      p.y.label = "sum_i cos(m theta_i)  (band: min..max per pixel)";
      std::vector<double> bases = a.plot_bases;
      if (bases.empty()) {
        bases = {b.stable, b.lowest_feasible};
        if (b.lowest_feasible_grid > b.grid_low) bases.push_back(b.lowest_feasible_grid / std::pow(10.0, 1.0 / b.grid_per_decade));
      }
      for (double base : bases) {
        const bool ok = base_feasible(a.dim, base, L);
        p.series.push_back(cos_sum_series(a.dim, base, L, "base " + g(base, 5) + (ok ? "" : " (fails)")));
      }
      p.rules.push_back({false, 0.0, "0"});
      svg::write(p, a.svg);
      if (!a.json) std::printf("wrote %s\n", a.svg.c_str());
    }
    return 0;
  }

  // The table for 1K..1M.
  if (!a.plot_bases.empty()) throw Error("--plot-base needs --ctx (the curve is drawn for one context length)");
  std::vector<BaseBound> rows;
  if (!a.json)
    std::printf("Men et al. lower bound of the RoPE base, d=%d (sum_i cos(m theta_i) > 0 for m = 0..L)\n%9s  %-15s  %-15s  %s\n",
                a.dim, "L", "lowest feasible", "feasible from", "islands between");
  for (int64_t L = 1024; L <= 1024 * 1024; L *= 2) {
    rows.push_back(rope_base_bound(a.dim, L, options));
    const BaseBound& b = rows.back();
    if (a.json)
      std::printf("%s\n", bound_json(b).dump().c_str());
    else
      std::printf("%9" PRId64 "  %-15s  %-15s  %zu\n", L, g(b.lowest_feasible, 4).c_str(), g(b.stable, 4).c_str(),
                  b.islands.size());
    std::fflush(stdout);
  }
  if (!a.json) print_method(a.grid);
  if (!a.svg.empty()) {
    svg::Plot p;
    p.title = "Lower bound of the RoPE base (Men et al.), d=" + std::to_string(a.dim);
    p.x.label = "context length L (tokens)";
    p.y.label = "RoPE base";
    p.x.log = p.y.log = true;
    svg::Series low, stable;
    low.label = "lowest feasible";
    stable.label = "feasible from";
    low.style = stable.style = svg::Style::LinePoints;
    stable.dashed = true;
    for (const BaseBound& b : rows) {
      low.x.push_back(double(b.length));
      low.y.push_back(b.lowest_feasible);
      stable.x.push_back(double(b.length));
      stable.y.push_back(b.stable);
    }
    p.series = {low, stable};
    svg::write(p, a.svg);
    if (!a.json) std::printf("wrote %s\n", a.svg.c_str());
  }
  return 0;
}

// ---- registration ------------------------------------------------------------------------

struct RopeArgs {
  FreqsArgs freqs;
  CoverageArgs coverage;
  ExtendArgs extend;
  BoundArgs bound;
};

const RegisterCommand registration{
    "rope", "RoPE analyses: frequencies of every variant, period coverage, context extension, base bound",
    [](CLI::App& app) {
      auto a = std::make_shared<RopeArgs>();
      app.require_subcommand(1);

      CLI::App* freqs = app.add_subcommand("freqs", "Inverse frequencies, wavelengths and attention factor of a RoPE variant");
      add_rope_options(*freqs, a->freqs.config);
      freqs->add_option("--head-dim", a->freqs.head_dim, "Head dim D")->capture_default_str();
      freqs->add_option("--length", a->freqs.length, "Current sequence length (dynamic), e.g. 16384 or 16K");
      freqs->add_flag("--json", a->freqs.json, "One JSON object");
      freqs->add_option("--svg", a->freqs.svg, "Plot inverse frequency per pair for every scaling variant")
          ->type_name("FILE");

      CLI::App* coverage =
          app.add_subcommand("coverage", "Period of each dimension pair and how many complete within a context");
      coverage->add_option("--dim", a->coverage.dim, "Rotary dim d")->capture_default_str();
      coverage->add_option("--base", a->coverage.base, "RoPE base")->capture_default_str();
      coverage->add_option("--ctx", a->coverage.ctx, "Context length T, e.g. 4096 or 4K")->required();
      coverage->add_flag("--json", a->coverage.json, "One JSON object");
      coverage->add_option("--svg", a->coverage.svg, "Plot period per dimension with the context line")->type_name("FILE");

      CLI::App* extend = app.add_subcommand(
          "extend", "Base and scaling settings for a longer context (Liu et al., NTK-aware, linear, YaRN, llama3)");
      extend->add_option("--dim", a->extend.dim, "Rotary dim d")->capture_default_str();
      extend->add_option("--base", a->extend.base, "Base the model was trained with")->capture_default_str();
      extend->add_option("--train-ctx", a->extend.train_ctx, "Training context length, e.g. 8192 or 8K")->required();
      extend->add_option("--target-ctx", a->extend.target_ctx, "Target context length, e.g. 262144 or 256K")->required();
      extend->add_flag("--json", a->extend.json, "One JSON object");
      extend->add_option("--svg", a->extend.svg, "Plot inverse frequency per pair of every setting")->type_name("FILE");

      CLI::App* bound = app.add_subcommand(
          "bound", "Smallest base keeping sum_i cos(m theta_i) > 0 for m = 0..L (Men et al.); a 1K..1M table without --ctx");
      bound->add_option("--dim", a->bound.dim, "Rotary dim d")->capture_default_str();
      bound->add_option("--ctx", a->bound.ctx, "Context length L, e.g. 32768 or 32K (default: table for 1K..1M)");
      bound->add_option("--grid-per-decade", a->bound.grid, "Search grid density (points per factor 10 of the base)")
          ->capture_default_str()
          ->check(CLI::Range(1, 1000));
      bound->add_option("--plot-base", a->bound.plot_bases,
                        "Bases whose curve --svg draws (default: the two bounds and the grid point below)");
      bound->add_flag("--json", a->bound.json, "One JSON object per context length");
      bound->add_option("--svg", a->bound.svg,
                        "With --ctx: sum_i cos(m theta_i) against m; without: the bound against context length")
          ->type_name("FILE");

      return [a, freqs, coverage, extend, bound] {
        if (freqs->parsed()) return run_freqs(a->freqs);
        if (coverage->parsed()) return run_coverage(a->coverage);
        if (extend->parsed()) return run_extend(a->extend);
        if (bound->parsed()) return run_bound(a->bound);
        return 1;
      };
    }};

}  // namespace
}  // namespace infini::cli
