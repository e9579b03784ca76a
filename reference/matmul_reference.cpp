#include "reference/matmul_reference.hpp"

namespace infini::ops {

std::vector<double> matmul_reference(std::span<const double> a, std::span<const double> b, size_t m, size_t n,
                                     size_t k) {
  std::vector<double> c(m * n, 0.0);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      double sum = 0;
      for (size_t p = 0; p < k; ++p) sum += a[i * k + p] * b[j * k + p];
      c[i * n + j] = sum;
    }
  return c;
}

}  // namespace infini::ops
