#pragma once
// The RoPE analyses of Liu et al. and Men et al. (docs/design.md §2.5), on the same host
// frequencies the kernels use: per-pair periods and how many complete within a context, Liu et al.'s critical
// dimension and extrapolation base, the NTK-aware base, and Men et al.'s lower bound of the base
// for a context length. All throw infini::Error with a one-line reason on bad input.
#include <cstdint>
#include <span>
#include <vector>

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
  int grid_per_decade = 16;        // grid 10^(k/grid_per_decade), k = 1, 2, ... up to the certified base
  double relative_tolerance = 1e-6;  // bisection refinement of grid boundaries
};

// A run of consecutive feasible grid points below the stable run ("islands").
struct FeasibleRun {
  double low = 0, high = 0;  // first and last grid base of the run
};

// Men et al. ("Base of RoPE Bounds Context Length"): the smallest base with
// sum_i cos(m theta_i) > 0 for all integer m in 0..L. The feasible set is not monotone in the
// base, so this is a search: every grid point from 10^(1/G) up to the certified base is checked
// at every m (points at and above the certified base are feasible by proof), then the two
// boundaries that matter are refined by bisection in log base. Islands narrower than one grid
// step can be missed.
struct BaseBound {
  int dim = 0;
  int64_t length = 0;
  int grid_per_decade = 0;
  double grid_low = 0, grid_high = 0;  // first and last grid points
  int grid_points = 0;                 // checked points
  int feasible_points = 0;
  double certified = 0;                // certified_base(dim, length)
  double lowest_feasible_grid = 0;     // lowest feasible grid point
  double lowest_feasible = 0;          // refined: boundary between it and the grid point below
  double stable_grid = 0;              // every grid point from here up is feasible
  double stable = 0;                   // refined: boundary of that run with the point below
  int64_t below_stable_fails_at = -1;  // first bad m at the grid point just below stable_grid
  std::vector<FeasibleRun> islands;    // feasible runs below the stable run (lowest first)
};
BaseBound rope_base_bound(int dim, int64_t length, const BoundSearchOptions& options = {});

}  // namespace infini::rope
