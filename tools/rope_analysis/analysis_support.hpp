#pragma once
// What the RoPE analyses share (private to tools/rope_analysis/): their one-line errors and
// numbers, and exact bounds of the cosine over an interval of angles.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

#include "infini/error.hpp"

namespace infini::rope::detail {

inline constexpr double kTwoPi = 2.0 * std::numbers::pi;

[[noreturn]] inline void fail(const std::string& what) { throw Error("rope: " + what); }

inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// min of cos over the angle interval [a, b] (a <= b).
inline double min_cos(double a, double b) {
  if (b - a >= kTwoPi) return -1.0;
  const double k = std::ceil((a - std::numbers::pi) / kTwoPi);  // first odd multiple of pi >= a
  if ((2.0 * k + 1.0) * std::numbers::pi <= b) return -1.0;
  return std::min(std::cos(a), std::cos(b));
}

// max of cos over the angle interval [a, b] (a <= b).
inline double max_cos(double a, double b) {
  if (b - a >= kTwoPi) return 1.0;
  const double k = std::ceil(a / kTwoPi);  // first multiple of 2 pi >= a
  if (k * kTwoPi <= b) return 1.0;
  return std::max(std::cos(a), std::cos(b));
}

}  // namespace infini::rope::detail
