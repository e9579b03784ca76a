// infini rope bound: the bases with sum_i cos(m theta_i) > 0 for every m = 0..L (Men et al.), found
// by a certified search; a 1K..1M table without --ctx. A table by default, --json, --svg FILE; on
// the same host frequency code the kernels use (docs/design.md §2).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "option_checks.hpp"
#include "infini/error.hpp"
#include "infini/rope_config.hpp"
#include "rope_analysis/base_bound.hpp"
#include "rope_analysis/rope_analysis.hpp"
#include "rope_analysis/svg_plot.hpp"
#include "rope_common.hpp"

namespace infini::cli {
namespace {

using namespace infini::rope;
using nlohmann::json;

struct BoundArgs {
  int dim = 128;
  std::string ctx;             // empty: the table
  std::string max_ctx = "1M";  // the table's last row
  double precision = 1e-6;
  int threads = 0;
  std::vector<double> plot_bases;
  bool json = false;
  std::string svg;
};

// How far apart two bases are, relative to the lower one.
double relative_gap(double low, double high) { return high / low - 1.0; }

const char* undecided_kind(const UndecidedInterval& u) {
  switch (u.kind) {
    case UndecidedInterval::Kind::Island: return "island";
    case UndecidedInterval::Kind::Gap: return "gap";
    case UndecidedInterval::Kind::Boundary: return "boundary";
  }
  return "";
}

json bound_json(const BaseBound& b) {
  json islands = json::array();
  for (const Island& r : b.islands)
    islands.push_back({{"low", r.low},
                       {"high", r.high},
                       {"width", r.high - r.low},
                       {"low_limit", r.low_limit},
                       {"high_limit", r.high_limit}});
  json undecided = json::array();
  for (const UndecidedInterval& u : b.undecided)
    undecided.push_back({{"low", u.low}, {"high", u.high}, {"kind", undecided_kind(u)}});
  return {{"dim", b.dim},
          {"ctx", b.length},
          {"precision", b.precision},
          // null unless certified: then lowest_known_feasible is only an upper bound of it
          {"lowest_feasible_base", b.lowest_certified ? json(b.lowest_feasible) : json(nullptr)},
          {"lowest_feasible_certified", b.lowest_certified},
          {"lowest_known_feasible", b.lowest_feasible},
          {"no_feasible_base_below", b.lowest_limit},
          {"lowest_feasible_precision", relative_gap(b.lowest_limit, b.lowest_feasible)},
          {"feasible_from_base", b.stable},
          {"feasible_from_certified", b.stable_certified},
          {"infeasible_below_at", b.stable_limit},
          {"feasible_from_precision", relative_gap(b.stable_limit, b.stable)},
          {"fails_below_at_m", b.below_stable_fails_at},
          {"certified_from", b.certified},
          {"islands", islands},
          {"undecided", undecided},
          {"cells", b.cells},
          {"evaluations", b.evaluations}};
}

void print_method(double precision) {
  std::printf(
      "search: every base from 1 up to the certified base, in cells of ln(base); a cell is proven feasible when a "
      "lower bound of sum_i cos(m theta_i) over it is > 0 for every m in 0..L (interval cosines on blocks of m, "
      "Taylor bounds in ln(base) per m), proven infeasible when one m stays < 0 over all of it, and halved "
      "otherwise down to a relative width of %s; cells still open there are judged by their midpoint. Proofs "
      "keep a margin for float64 rounding. From the certified base up feasibility is proven analytically (pairs "
      "with L*theta_i <= pi give >= cos(L*theta_i), the others >= -1).\n",
      g(precision, 3).c_str());
}

std::string undecided_text(const UndecidedInterval& u) {
  const std::string where = "[" + g(u.low, 8) + ", " + g(u.high, 8) + "] ";
  switch (u.kind) {
    case UndecidedInterval::Kind::Island: return where + "may hold an island";
    case UndecidedInterval::Kind::Gap: return where + "may hold an infeasible gap";
    case UndecidedInterval::Kind::Boundary: return where + "holds the end of a feasible stretch, not located to the precision";
  }
  return where;
}

void print_bound(const BaseBound& b) {
  std::printf("Men et al. lower bound of the RoPE base, d=%d, L=%" PRId64
              ": bases with sum_i cos(m theta_i) > 0 for every integer m in 0..L\n",
              b.dim, b.length);
  if (b.lowest_certified)
    std::printf("lowest feasible base      %s  (certified: it is feasible and no base below %s is; %s relative)\n",
                g(b.lowest_feasible, 8).c_str(), g(b.lowest_limit, 8).c_str(),
                g(relative_gap(b.lowest_limit, b.lowest_feasible), 2).c_str());
  else
    std::printf("lowest feasible base      uncertain: in [%s, %s]; %s is feasible, but undecided intervals below it "
                "may hold narrower islands\n",
                g(b.lowest_limit, 8).c_str(), g(b.lowest_feasible, 8).c_str(), g(b.lowest_feasible, 8).c_str());
  std::printf("feasible from base        %s  (every base >= it is feasible; %s is not%s)%s\n", g(b.stable, 8).c_str(),
              g(b.stable_limit, 8).c_str(),
              b.below_stable_fails_at >= 0
                  ? (", the sum drops to <= 0 at m = " + std::to_string(b.below_stable_fails_at)).c_str()
                  : "",
              b.stable_certified ? "" : "; uncertain, see the undecided intervals");
  std::printf("islands below it          %zu\n", b.islands.size());
  if (!b.islands.empty()) {
    std::printf("  %14s  %14s  %12s\n", "low", "high", "width");
    for (const Island& r : b.islands)
      std::printf("  %14s  %14s  %12s\n", g(r.low, 9).c_str(), g(r.high, 9).c_str(), g(r.high - r.low, 4).c_str());
  }
  std::printf("undecided intervals       %s\n", b.undecided.empty() ? "none" : std::to_string(b.undecided.size()).c_str());
  for (const UndecidedInterval& u : b.undecided) std::printf("  %s\n", undecided_text(u).c_str());
  std::printf("%" PRId64 " cells of the base, %" PRId64 " (cell, m) bounds; certified from %s\n", b.cells, b.evaluations,
              g(b.certified, 4).c_str());
  print_method(b.precision);
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
  const BoundSearchOptions options{a.precision, a.threads};
  for (double b : a.plot_bases) check_base(b);

  if (!a.ctx.empty()) {
    const int64_t L = parse_length(a.ctx, "--ctx");
    const BaseBound b = rope_base_bound(a.dim, L, options);
    if (a.json)
      std::printf("%s\n", bound_json(b).dump().c_str());
    else
      print_bound(b);
    if (!a.svg.empty()) {
      svg::Plot p;
      p.title = "sum_i cos(m theta_i), d=" + std::to_string(a.dim) + ", m = 0.." + std::to_string(L);
      p.x.label = "relative distance m (tokens)";
      p.y.label = "sum_i cos(m theta_i)  (band: min..max per pixel)";
      std::vector<double> bases = a.plot_bases;
      if (bases.empty()) {
        bases = {b.stable, b.lowest_feasible};
        if (b.lowest_limit > 1.0) bases.push_back(b.lowest_limit);  // proven infeasible
      }
      for (double base : bases) {
        const bool ok = base_feasible(a.dim, base, L);
        p.series.push_back(cos_sum_series(a.dim, base, L, "base " + g(base, 7) + (ok ? "" : " (fails)")));
      }
      p.rules.push_back({false, 0.0, "0"});
      svg::write(p, a.svg);
      if (!a.json) std::printf("wrote %s\n", a.svg.c_str());
    }
    return 0;
  }

  // The table for 1K..max-ctx.
  if (!a.plot_bases.empty()) throw Error("--plot-base needs --ctx (the curve is drawn for one context length)");
  const int64_t top = parse_length(a.max_ctx, "--max-ctx");
  if (top < 1024) throw Error("--max-ctx must be >= 1K (the table starts there), got '" + a.max_ctx + "'");
  std::vector<BaseBound> rows;
  bool uncertain = false;
  if (!a.json)
    std::printf("Men et al. lower bound of the RoPE base, d=%d (sum_i cos(m theta_i) > 0 for m = 0..L), certified to "
                "%s\n%9s  %-15s  %-15s  %8s  %s\n",
                a.dim, g(a.precision, 3).c_str(), "L", "lowest feasible", "feasible from", "islands", "undecided");
  for (int64_t L = 1024; L <= top; L *= 2) {
    rows.push_back(rope_base_bound(a.dim, L, options));
    const BaseBound& b = rows.back();
    uncertain |= !b.lowest_certified || !b.stable_certified;
    if (a.json)
      std::printf("%s\n", bound_json(b).dump().c_str());
    else
      std::printf("%9" PRId64 "  %-15s  %-15s  %8zu  %zu\n", L,
                  ((b.lowest_certified ? "" : "<= ") + g(b.lowest_feasible)).c_str(),
                  ((b.stable_certified ? "" : "<= ") + g(b.stable)).c_str(), b.islands.size(), b.undecided.size());
    std::fflush(stdout);
  }
  if (!a.json) {
    if (uncertain)
      std::printf("<= : uncertain, the value is feasible but undecided intervals lie below it (see --ctx L)\n");
    print_method(a.precision);
  }
  if (!a.svg.empty()) {
    svg::write(base_bound_plot(rows), a.svg);
    if (!a.json) std::printf("wrote %s\n", a.svg.c_str());
  }
  return 0;
}

const RegisterCommand registration{
    "rope bound", "Bases keeping sum_i cos(m theta_i) > 0 for m = 0..L (Men et al.), certified; a 1K..1M table without --ctx",
    [](CLI::App& app) {
      auto a = std::make_shared<BoundArgs>();
      app.add_option("--dim", a->dim, "Rotary dim d")->capture_default_str();
      app.add_option("--ctx", a->ctx, "Context length L, e.g. 32768 or 32K (default: table for 1K..--max-ctx)");
      app.add_option("--max-ctx", a->max_ctx, "Last context length of the table (it doubles from 1K)")
          ->capture_default_str();
      app.add_option("--precision", a->precision,
                     "Relative width of the narrowest interval of the base resolved (islands, boundaries)")
          ->capture_default_str();  // range checked by rope_base_bound (1e-12..0.5)
      app.add_option("--threads", a->threads, "Threads for the search (0: one per hardware thread)")
          ->capture_default_str()
          ->check(integer_range(0, 1024));
      app.add_option("--plot-base", a->plot_bases,
                     "Bases whose curve --svg draws (default: the two bounds and the base proven infeasible below the lowest)");
      app.add_flag("--json", a->json, "One JSON object per context length");
      app.add_option("--svg", a->svg,
                     "With --ctx: sum_i cos(m theta_i) against m; without: the bound against context length")
          ->type_name("FILE");
      return [a] { return run_bound(*a); };
    }};

}  // namespace
}  // namespace infini::cli
