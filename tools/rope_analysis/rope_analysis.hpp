#pragma once
// The RoPE analyses of Liu et al. and Men et al. (docs/design.md §2.5), on the same host
// frequencies the kernels use: per-pair periods and how many complete within a context, Liu et
// al.'s critical dimension and extrapolation base, the NTK-aware base, and Men et al.'s B(m) and
// its feasibility test (the search for the lowest base: base_bound.hpp). All throw infini::Error
// with a one-line reason on bad input.
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

}  // namespace infini::rope
