// Men et al.'s lower bound of the RoPE base for a context length: the certified search over the
// whole base axis (base_bound.hpp), and its plot.
#include "rope_analysis/base_bound.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>

#include "rope_analysis/analysis_support.hpp"
#include "rope_analysis/base_search.hpp"
#include "rope_analysis/rope_analysis.hpp"

namespace infini::rope {

using detail::BaseSearch;
using detail::fail;
using detail::num;

BaseBound rope_base_bound(int dim, int64_t length, const BoundSearchOptions& options) {
  if (!(options.precision >= 1e-12 && options.precision <= 0.5))
    fail("precision must be in 1e-12..0.5, got " + num(options.precision));
  if (options.threads < 0) fail("threads must be >= 0, got " + std::to_string(options.threads));
  BaseBound out;
  out.dim = dim;
  out.length = length;
  out.precision = options.precision;
  out.certified = certified_base(dim, length);  // checks dim and length
  const double t_top = std::log(out.certified);

  // The axis [0, t_top] in kChunks equal chunks, searched independently (so the result does not
  // depend on the thread count) by a pool of threads taking the next chunk as they finish.
  constexpr size_t kChunks = 64;
  std::vector<std::vector<BaseSearch::Piece>> chunks(kChunks);
  std::atomic<size_t> next{0};
  std::atomic<int64_t> cells{0}, evaluations{0};
  const auto work = [&] {
    BaseSearch search(dim, length, std::log1p(options.precision));
    for (size_t j; (j = next++) < kChunks;)
      chunks[j] = search.run(t_top * static_cast<double>(j) / kChunks,
                             j + 1 == kChunks ? t_top : t_top * static_cast<double>(j + 1) / kChunks);
    cells += search.cells;
    evaluations += search.evaluations;
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(options.threads > 0 ? static_cast<unsigned>(options.threads)
                                                                               : std::thread::hardware_concurrency(),
                                                           kChunks));
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  out.cells = cells;
  out.evaluations = evaluations;

  using Kind = BaseSearch::Kind;
  std::vector<BaseSearch::Piece> pieces;
  for (const auto& chunk : chunks)
    for (const BaseSearch::Piece& p : chunk) {
      if (!pieces.empty() && p.kind != Kind::Open && pieces.back().kind == p.kind) {
        pieces.back().t1 = p.t1;
        continue;
      }
      pieces.push_back(p);
    }

  // Runs of open cells: between two infeasible cells with no feasible midpoint they may hold an
  // island, between two feasible ones with no infeasible midpoint a gap; and a run wider than
  // kBracket cells is undecided whatever its sides. Below the axis (base 1) counts as infeasible,
  // above it (the certified base) as feasible.
  constexpr double kBracket = 4.0;
  const double widest_bracket = kBracket * std::log1p(options.precision);
  std::vector<std::pair<double, double>> undecided_t;
  for (size_t a = 0; a < pieces.size();) {
    if (pieces[a].kind != Kind::Open) {
      ++a;
      continue;
    }
    size_t b = a;
    bool feasible_point = false, infeasible_point = false;
    for (; b < pieces.size() && pieces[b].kind == Kind::Open; ++b) {
      feasible_point |= pieces[b].point > 0;
      infeasible_point |= pieces[b].point < 0;
    }
    const Kind left = a > 0 ? pieces[a - 1].kind : Kind::Infeasible;
    const Kind right = b < pieces.size() ? pieces[b].kind : Kind::Feasible;
    const bool wide = pieces[b - 1].t1 - pieces[a].t0 > widest_bracket;
    using U = UndecidedInterval::Kind;
    const bool island = left == Kind::Infeasible && right == Kind::Infeasible && (!feasible_point || wide);
    const bool gap = left == Kind::Feasible && right == Kind::Feasible && (!infeasible_point || wide);
    if (island || gap || wide) {
      undecided_t.emplace_back(pieces[a].t0, pieces[b - 1].t1);
      out.undecided.push_back({std::exp(pieces[a].t0), std::exp(pieces[b - 1].t1),
                               island ? U::Island : gap ? U::Gap : U::Boundary});
    }
    a = b;
  }

  // Feasible groups: proven-feasible cells and midpoints not separated by a proven-infeasible one.
  struct Group {
    double low, high, low_limit, high_limit;
  };
  std::vector<Group> groups;
  bool in_group = false;
  double last_bad = 0.0;  // t of the highest proven-infeasible base so far (0: base 1)
  for (const BaseSearch::Piece& p : pieces) {
    const double mid = 0.5 * (p.t0 + p.t1);
    const bool feasible = p.kind == Kind::Feasible || (p.kind == Kind::Open && p.point > 0);
    const bool infeasible = p.kind == Kind::Infeasible || (p.kind == Kind::Open && p.point < 0);
    const double lo = p.kind == Kind::Open ? mid : p.t0, hi = p.kind == Kind::Open ? mid : p.t1;
    if (feasible) {
      if (!in_group) groups.push_back({lo, hi, last_bad, t_top});
      groups.back().high = hi;
      in_group = true;
    } else if (infeasible) {
      if (in_group) groups.back().high_limit = lo;
      in_group = false;
      last_bad = hi;
    }
  }
  if (!in_group) groups.push_back({t_top, t_top, last_bad, t_top});  // the certified base is feasible

  const auto undecided_between = [&](double lo, double hi) {
    return std::any_of(undecided_t.begin(), undecided_t.end(),
                       [&](const auto& u) { return u.first < hi && u.second > lo; });
  };
  // Every base from the trailing run of feasible cells up is feasible (and above t_top by proof).
  const double stable_t = !pieces.empty() && pieces.back().kind == Kind::Feasible ? pieces.back().t0 : t_top;
  out.stable = std::exp(stable_t);
  out.stable_limit = std::exp(last_bad);
  out.stable_certified = !undecided_between(last_bad, stable_t);
  if (last_bad > 0.0) {
    std::vector<double> theta(static_cast<size_t>(dim / 2));
    for (size_t i = 0; i < theta.size(); ++i) theta[i] = std::exp(-2.0 * static_cast<double>(i) / dim * last_bad);
    out.below_stable_fails_at = first_nonpositive(theta, length);
  }
  for (size_t g = 0; g + 1 < groups.size(); ++g)
    out.islands.push_back({std::exp(groups[g].low), std::exp(groups[g].high), std::exp(groups[g].low_limit),
                           std::exp(groups[g].high_limit)});

  const Group& first = groups.front();
  out.lowest_feasible = std::exp(first.low);
  out.lowest_certified = !undecided_between(0.0, first.low);
  double first_open = first.low;  // where the first cell not proven infeasible starts
  for (const BaseSearch::Piece& p : pieces)
    if (p.kind != Kind::Infeasible) {
      first_open = p.t0;
      break;
    }
  out.lowest_limit = std::exp(out.lowest_certified ? first.low_limit : first_open);
  return out;
}

svg::Plot base_bound_plot(const std::vector<BaseBound>& rows) {
  svg::Plot p;
  p.title = "Lower bound of the RoPE base (Men et al.)" + (rows.empty() ? std::string() : ", d=" + std::to_string(rows.front().dim));
  p.x.label = "context length L (tokens)";
  p.y.label = "RoPE base";
  p.x.log = p.y.log = true;
  svg::Series low, stable;
  low.label = "lowest feasible";
  stable.label = "feasible from (band: islands)";
  low.style = stable.style = svg::Style::LinePoints;
  stable.dashed = true;
  for (const BaseBound& b : rows) {
    low.x.push_back(static_cast<double>(b.length));
    low.y.push_back(b.lowest_feasible);
    stable.x.push_back(static_cast<double>(b.length));
    stable.y.push_back(b.stable);
    stable.y_low.push_back(b.lowest_feasible);
  }
  p.series = {low, stable};
  return p;
}

}  // namespace infini::rope
