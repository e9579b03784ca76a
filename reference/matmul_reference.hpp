#pragma once
// Float64 CPU reference for ops::Matmul: C[i][j] = sum_k A[i][k] * B[j][k].
#include <span>
#include <vector>

namespace infini::ops {

std::vector<double> matmul_reference(std::span<const double> a, std::span<const double> b, size_t m, size_t n,
                                     size_t k);

}  // namespace infini::ops
