#include "sampling/token_logprobs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "infini/error.hpp"

namespace infini::model {

TokenLogprobs token_logprobs(std::span<const float> row, int32_t token, size_t top) {
  if (token < 0 || size_t(token) >= row.size())
    throw Error("logprobs: token " + std::to_string(token) + " is outside the row of " + std::to_string(row.size()));
  double best = -std::numeric_limits<double>::infinity();
  for (float x : row) {
    if (std::isnan(x)) throw Error("logprobs: the logits hold NaN");
    best = std::max(best, double(x));
  }
  double sum = 0;
  for (float x : row) sum += std::exp(double(x) - best);
  const double log_z = best + std::log(sum);
  TokenLogprobs out;
  out.chosen = float(double(row[size_t(token)]) - log_z);
  top = std::min(top, row.size());
  std::vector<int32_t> ids(row.size());
  std::iota(ids.begin(), ids.end(), 0);
  const auto better = [&](int32_t a, int32_t b) { return row[size_t(a)] > row[size_t(b)] || (row[size_t(a)] == row[size_t(b)] && a < b); };
  std::partial_sort(ids.begin(), ids.begin() + std::ptrdiff_t(top), ids.end(), better);
  for (size_t i = 0; i < top; ++i) out.top.emplace_back(ids[i], float(double(row[size_t(ids[i])]) - log_z));
  return out;
}

}  // namespace infini::model
