#pragma once
// Men et al.'s lower bound of the RoPE base for a context length (docs/design.md §2.5): a certified
// search over the whole base axis, and its plot. Throws infini::Error with a one-line reason on
// bad input.
#include <cstdint>
#include <vector>

#include "rope_analysis/svg_plot.hpp"

namespace infini::rope {

struct BoundSearchOptions {
  // Relative width of the narrowest interval of the base the search resolves: cells of the base
  // are halved (in log base) down to this width and no further.
  double precision = 1e-6;
  // Threads searching chunks of the axis at once (0: one per hardware thread). The result does
  // not depend on it.
  int threads = 0;
};

// A run of feasible bases below the stable run. Every base in [low, high] that the search proved
// feasible lies in the island; its true ends lie in [low_limit, low] and [high, high_limit], where
// the limits are bases proven infeasible.
struct Island {
  double low = 0, high = 0;
  double low_limit = 0, high_limit = 0;
};

// Part of the base axis the search could not decide at its precision: cells left open between
// two infeasible stretches, which may hold an island narrower than them (Island); between two
// feasible stretches, which may hold an infeasible gap (Gap); or more than a few cells wide between
// an infeasible and a feasible stretch, so that where one ends is not resolved (Boundary).
struct UndecidedInterval {
  enum class Kind { Island, Gap, Boundary };
  double low = 0, high = 0;
  Kind kind = Kind::Island;
};

// Men et al. ("Base of RoPE Bounds Context Length"): the smallest base with
// B_m(b) = sum_i cos(m b^(-2i/d)) > 0 for every integer m in 0..L. The feasible set is not monotone
// in the base (it has islands below the stable run), so this is a certified search over the whole
// axis from base 1 up to the certified base, in t = ln(base): a cell of t is proven feasible when a
// lower bound of B_m over the cell is positive for every m (branch and bound over m with interval
// cosines on blocks of m, Taylor bounds per m in the leaves), proven infeasible when one m has an
// upper bound below zero over the whole cell, and halved otherwise, down to the precision. Cells at
// the precision that stay open are judged by their midpoint. All proofs leave a margin for
// float64 rounding.
struct BaseBound {
  int dim = 0;
  int64_t length = 0;
  double precision = 0;  // BoundSearchOptions::precision
  double certified = 0;  // certified_base(dim, length): feasible from here up by proof
  // The lowest feasible base lies in [lowest_limit, lowest_feasible]: no base below lowest_limit
  // is feasible and lowest_feasible is (both proven). It is certified when no undecided interval
  // lies below lowest_feasible; otherwise a narrower island may hide in one.
  double lowest_feasible = 0;
  double lowest_limit = 0;
  bool lowest_certified = false;
  // Every base >= stable is feasible; stable_limit < stable is a base proven infeasible (the
  // stable run starts in [stable_limit, stable]); certified unless an undecided interval lies
  // between them.
  double stable = 0;
  double stable_limit = 0;
  bool stable_certified = false;
  int64_t below_stable_fails_at = -1;  // first m with B_m <= 0 at stable_limit
  std::vector<Island> islands;         // below the stable run, lowest first
  std::vector<UndecidedInterval> undecided;
  int64_t cells = 0;        // cells of the base examined
  int64_t evaluations = 0;  // (cell, m) pairs bounded one m at a time
};
BaseBound rope_base_bound(int dim, int64_t length, const BoundSearchOptions& options = {});

// The bound against context length (what `infini rope bound --svg` draws without --ctx): the
// lowest feasible base, and the stable base with the band of islands and gaps below it shaded.
svg::Plot base_bound_plot(const std::vector<BaseBound>& rows);

}  // namespace infini::rope
