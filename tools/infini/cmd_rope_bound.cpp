// infini rope bound: Smallest base keeping sum_i cos(m theta_i) > 0 for m = 0..L (Men et al.); a 1K..1M table without --ctx. A table by default, --json, --svg FILE; on the same
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

const RegisterCommand registration{
    "rope bound", "Smallest base keeping sum_i cos(m theta_i) > 0 for m = 0..L (Men et al.); a 1K..1M table without --ctx", [](CLI::App& app) {
      auto a = std::make_shared<BoundArgs>();
      app.add_option("--dim", a->dim, "Rotary dim d")->capture_default_str();
      app.add_option("--ctx", a->ctx, "Context length L, e.g. 32768 or 32K (default: table for 1K..1M)");
      app.add_option("--grid-per-decade", a->grid, "Search grid density (points per factor 10 of the base)")
          ->capture_default_str()
          ->check(CLI::Range(1, 1000));
      app.add_option("--plot-base", a->plot_bases,
                        "Bases whose curve --svg draws (default: the two bounds and the grid point below)");
      app.add_flag("--json", a->json, "One JSON object per context length");
      app.add_option("--svg", a->svg,
                        "With --ctx: sum_i cos(m theta_i) against m; without: the bound against context length")
          ->type_name("FILE");
      return [a] { return run_bound(*a); };
    }};

}  // namespace
}  // namespace infini::cli
