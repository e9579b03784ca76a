// RoPE analyses of Liu et al. and Men et al. (docs/design.md §2.5), on the frequencies
// rope_frequencies() gives the kernels.
#include "rope_analysis/rope_analysis.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <thread>

#include "infini/error.hpp"
#include "infini/rope_config.hpp"
#include "rope_analysis/analysis_support.hpp"

namespace infini::rope {
namespace {

using detail::fail;
using detail::kTwoPi;
using detail::min_cos;
using detail::num;

std::vector<double> default_theta(int dim, double base) {
  RopeConfig c;
  c.base = base;
  return rope_frequencies(c, dim, 0).inv_freq;
}

void check_context(double context, const char* what) {
  // log(T / 2 pi) must be positive for the period formulas to mean anything.
  if (!std::isfinite(context) || context <= kTwoPi)
    fail(std::string(what) + " must be > 2 pi (one period of the fastest pair), got " + num(context));
}

void check_length(int64_t length) {
  if (length < 1) fail("context length must be >= 1, got " + std::to_string(length));
}

// Walks m = 0..length with cos/sin(m theta_i) advanced by one rotation per step (6 flops per
// pair instead of a cos), re-anchored exactly every kAnchor steps so rounding cannot drift.
// Calls visit(m, sum) for m = first..last and stops early when it returns false; returns the m
// it stopped at or -1.
template <class Visit>
int64_t walk_cos_sum(std::span<const double> theta, int64_t first, int64_t last, Visit&& visit) {
  constexpr int64_t kAnchor = 4096;
  const size_t n = theta.size();
  std::vector<double> c(n), s(n), step_c(n), step_s(n);
  for (size_t i = 0; i < n; ++i) {
    step_c[i] = std::cos(theta[i]);
    step_s[i] = std::sin(theta[i]);
  }
  for (int64_t start = first; start <= last; start += kAnchor) {
    for (size_t i = 0; i < n; ++i) {
      const double angle = static_cast<double>(start) * theta[i];
      c[i] = std::cos(angle);
      s[i] = std::sin(angle);
    }
    const int64_t end = std::min(last, start + kAnchor - 1);
    for (int64_t m = start;; ++m) {
      // Four partial sums let the compiler keep the reduction in vector registers.
      double sum[4] = {0, 0, 0, 0};
      for (size_t i = 0; i < n; ++i) {
        sum[i & 3] += c[i];
        const double next_c = c[i] * step_c[i] - s[i] * step_s[i];
        s[i] = c[i] * step_s[i] + s[i] * step_c[i];
        c[i] = next_c;
      }
      if (!visit(m, (sum[0] + sum[1]) + (sum[2] + sum[3]))) return m;
      if (m == end) break;
    }
  }
  return -1;
}


// Branch and bound over m: a block [lo, hi] whose lower bound sum_i min cos(m theta_i) is
// positive cannot hold a bad m and is skipped; others are halved, and small ones are walked
// exactly. Far above the bound almost every block is skipped, which makes a full check of
// L = 1M cheap. Blocks are visited in order of m, so the first bad m found is the first one.
class FirstNonpositive {
 public:
  explicit FirstNonpositive(std::span<const double> theta) : theta_(theta) {}

  int64_t search(int64_t lo, int64_t hi) {
    if (lower_bound(lo, hi) > kSlack) return -1;
    if (hi - lo < kLeaf) return walk_cos_sum(theta_, lo, hi, [](int64_t, double sum) { return sum > 0.0; });
    const int64_t mid = lo + (hi - lo) / 2;
    const int64_t bad = search(lo, mid);
    return bad >= 0 ? bad : search(mid + 1, hi);
  }

 private:
  static constexpr int64_t kLeaf = 256;
  static constexpr double kSlack = 1e-9;  // covers rounding in the bound itself

  double lower_bound(int64_t lo, int64_t hi) const {
    double bound = 0;
    for (double t : theta_) bound += min_cos(static_cast<double>(lo) * t, static_cast<double>(hi) * t);
    return bound;
  }

  std::span<const double> theta_;
};

// Lower bound of min over m <= length of sum_i cos(m theta_i), see certified_base().
double certified_lower_bound(int dim, double base, int64_t length) {
  double bound = 0;
  for (double t : default_theta(dim, base)) {
    const double reach = static_cast<double>(length) * t;
    bound += reach <= std::numbers::pi ? std::cos(reach) : -1.0;
  }
  return bound;
}

}  // namespace

Coverage rope_coverage(int dim, double base, double context) {
  check_context(context, "context");
  Coverage out;
  out.inv_freq = default_theta(dim, base);
  for (double t : out.inv_freq) {
    out.period.push_back(kTwoPi / t);
    if (out.period.back() <= context) ++out.complete_pairs;
  }
  out.complete_dims = 2 * out.complete_pairs;
  out.critical_dim = critical_dimension(dim, base, context);
  return out;
}

int critical_dimension(int dim, double base, double context) {
  if (dim <= 0 || dim % 2 != 0) fail("dim must be even and positive, got " + std::to_string(dim));
  if (!std::isfinite(base) || base <= 1.0) fail("base must be a finite number > 1, got " + num(base));
  check_context(context, "context");
  const double pairs = std::ceil(dim / 2.0 * std::log(context / kTwoPi) / std::log(base));
  return 2 * static_cast<int>(std::clamp(pairs, 0.0, dim / 2.0));
}

double liu_extrapolation_base(double base, double train_context, double target_context) {
  if (!std::isfinite(base) || base <= 1.0) fail("base must be a finite number > 1, got " + num(base));
  check_context(train_context, "training context");
  check_context(target_context, "target context");
  return std::pow(base, std::log(target_context / kTwoPi) / std::log(train_context / kTwoPi));
}

double ntk_base(int dim, double base, double factor) {
  if (dim <= 2 || dim % 2 != 0) fail("dim must be even and > 2, got " + std::to_string(dim));
  if (!std::isfinite(base) || base <= 1.0) fail("base must be a finite number > 1, got " + num(base));
  if (!std::isfinite(factor) || factor < 1.0) fail("factor must be >= 1, got " + num(factor));
  return base * std::pow(factor, static_cast<double>(dim) / (dim - 2));
}

std::vector<double> cos_sum_curve(std::span<const double> inv_freq, int64_t length) {
  check_length(length);
  std::vector<double> out(static_cast<size_t>(length) + 1);
  walk_cos_sum(inv_freq, 0, length, [&](int64_t m, double sum) {
    out[static_cast<size_t>(m)] = sum;
    return true;
  });
  return out;
}

int64_t first_nonpositive(std::span<const double> inv_freq, int64_t length) {
  check_length(length);
  FirstNonpositive search(inv_freq);
  // Top blocks of 2^16 keep the recursion shallow and find early failures early.
  constexpr int64_t kTop = int64_t{1} << 16;
  for (int64_t lo = 0; lo <= length; lo += kTop) {
    const int64_t bad = search.search(lo, std::min(length, lo + kTop - 1));
    if (bad >= 0) return bad;
  }
  return -1;
}

bool base_feasible(int dim, double base, int64_t length) {
  return first_nonpositive(default_theta(dim, base), length) < 0;
}

double certified_base(int dim, int64_t length) {
  check_length(length);
  if (dim < 6 || dim % 2 != 0) fail("the base bound needs an even dim >= 6, got " + std::to_string(dim));
  // The bound is monotone in the base: bisect log base between 1 and a base where it holds.
  double low = 1.0, high = 2.0;
  while (certified_lower_bound(dim, high, length) <= 0.0) {
    low = high;
    high *= high;
    if (!std::isfinite(high)) fail("no certified base below 1e308 for dim " + std::to_string(dim));
  }
  while (high / low > 1.0 + 1e-9) {
    const double mid = std::sqrt(low * high);
    (certified_lower_bound(dim, mid, length) > 0.0 ? high : low) = mid;
  }
  return high;
}

}  // namespace infini::rope
