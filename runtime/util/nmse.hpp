#pragma once
// Normalised mean squared error sum((x - ref)^2) / sum(ref^2), the accuracy measure every op is
// checked with. Non-finite values in x give +inf so they can never pass.
#include <cmath>
#include <limits>
#include <span>

namespace infini {

template <typename T, typename R>
double nmse(std::span<const T> x, std::span<const R> ref) {
  if (x.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double err = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = static_cast<double>(x[i]), r = static_cast<double>(ref[i]);
    if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
    err += (v - r) * (v - r);
    norm += r * r;
  }
  if (norm == 0) return err == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return err / norm;
}

}  // namespace infini
