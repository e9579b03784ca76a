#include "ops/rope_table.hpp"

#include <cmath>

namespace infini::ops {

std::vector<float> rope_cos_sin_table(const rope::RopeFrequencies& freqs, int64_t positions) {
  const size_t pairs = freqs.inv_freq.size();
  std::vector<float> table(size_t(positions) * pairs * 2);
  for (int64_t pos = 0; pos < positions; ++pos)
    for (size_t i = 0; i < pairs; ++i) {
      const double angle = double(pos) * freqs.inv_freq[i];
      table[(size_t(pos) * pairs + i) * 2 + 0] = float(std::cos(angle) * freqs.attention_factor);
      table[(size_t(pos) * pairs + i) * 2 + 1] = float(std::sin(angle) * freqs.attention_factor);
    }
  return table;
}

}  // namespace infini::ops
