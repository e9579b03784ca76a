#pragma once
// The RoPE analyses of Liu et al. and Men et al. (docs/design.md §2.5), on the same host
// frequencies the kernels use: per-pair periods and how many complete within a context, Liu et al.'s critical
// dimension and extrapolation base, the NTK-aware base, and Men et al.'s lower bound of the base
// for a context length. All throw infini::Error with a one-line reason on bad input.
#include <cstdint>
#include <span>
#include <vector>

#include "rope_analysis/svg_plot.hpp"

namespace infini::rope {

// Default RoPE periods 2 pi / theta_i, theta_i = base^(-2i/d), and how many complete within T.
struct Coverage {
  std::vector<double> inv_freq;  // theta_i, d/2 values
  std::vector<double> period;    // 2 pi / theta_i (tokens)
  int complete_pairs = 0;        // pairs whose period is <= T
  int complete_dims = 0;         // 2 * complete_pairs (Llama-2: d=128, base 1e4, T=4096 -> 92)
  int critical_dim = 0;          // Liu et al., critical_dimension(d, base, T)
};
Coverage rope_coverage(int dim, double base, double context);

// Liu et al. ("Scaling Laws of RoPE-based Extrapolation"): 2 ceil((d/2) log_base(T / 2 pi)),
// the number of dims that see a full period in training, clamped to 0..d.
int critical_dimension(int dim, double base, double context);

// Liu et al.'s extrapolation base base^(ln(T'/2pi) / ln(T/2pi)): the base whose critical
// dimension has period T' where the old one had T (Llama-3-8B 8K -> 262K: 283461213).
double liu_extrapolation_base(double base, double train_context, double target_context);

// NTK-aware base for a context factor s: base * s^(d/(d-2)).
double ntk_base(int dim, double base, double factor);

// sum_i cos(m theta_i) for m = 0..length (Men et al.'s B(m); the attention a query pays to an
// identical key at distance m, up to a constant).
std::vector<double> cos_sum_curve(std::span<const double> inv_freq, int64_t length);

// The first m in 0..length with sum_i cos(m theta_i) <= 0, or -1 when there is none.
int64_t first_nonpositive(std::span<const double> inv_freq, int64_t length);

// Whether the default RoPE of dim d and this base keeps sum_i cos(m theta_i) > 0 for every
// integer m in 0..length.
bool base_feasible(int dim, double base, int64_t length);

// A base from which feasibility is proven, not searched: for pairs with length*theta_i <= pi,
// cos(m theta_i) >= cos(length*theta_i) for every m <= length, the other pairs are >= -1, and
// that lower bound only grows with the base. Needs d >= 6 (with fewer pairs it never turns
// positive).
double certified_base(int dim, int64_t length);

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
