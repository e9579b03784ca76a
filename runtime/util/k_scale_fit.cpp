#include "util/k_scale_fit.hpp"

#include <algorithm>

namespace infini {

float fit_scale_min(const float* x, const float* w, int n, int top, float rmin, float rdelta, int steps, bool absolute,
                    float& min_out, int* levels_out) {
  float lo = x[0], hi = x[0], sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::fill_n(levels_out, n, 0);
    min_out = -lo;
    return 0;
  }
  const auto levels = [&](float iscale, float offset, int i) { return std::clamp(nearest_int(iscale * (x[i] - offset)), 0, top); };
  float iscale = float(top) / (hi - lo), scale = 1 / iscale, best = 0;
  for (int i = 0; i < n; ++i) {
    levels_out[i] = levels(iscale, lo, i);
    const float diff = scale * float(levels_out[i]) + lo - x[i];
    best += absolute ? w[i] * std::fabs(diff) : w[i] * diff * diff;
  }
  for (int step = 0; step <= steps; ++step) {
    const float candidate = (rmin + rdelta * float(step) + float(top)) / (hi - lo);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    int tried[32];
    for (int i = 0; i < n; ++i) {
      tried[i] = levels(candidate, lo, i);
      const float l = float(tried[i]);
      sum_l += w[i] * l;
      sum_l2 += w[i] * l * l;
      sum_xl += w[i] * l * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det <= 0) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    float error = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = this_scale * float(tried[i]) + this_min - x[i];
      error += absolute ? w[i] * std::fabs(diff) : w[i] * diff * diff;
    }
    if (error < best) {
      std::copy_n(tried, n, levels_out);
      best = error;
      scale = this_scale;
      lo = this_min;
    }
  }
  min_out = -lo;
  return scale;
}

}  // namespace infini
