#pragma once
// Measuring the matmul's kernels on the device at hand (issue: kernels chosen by measurement, not
// by a rule per device class). For one weight and a prefill piece's rows, every kernel the device
// can run is timed on the same random activations, and its output is checked against the tiled
// kernel's (the reference kernel) before it may be chosen. Then the families within reach of the
// fastest (kExploreRatio) are timed again in their other tilings and, for products whose grid of
// tiles is small, split over k. The choice is the fastest correct one, today's rule (Auto) first,
// so ties and a device where nothing else is correct keep it.
// Which weights and where the results are kept: graph/kernel_tuning.hpp.
#include <cstdint>
#include <span>
#include <vector>

#include "infini/element_type.hpp"
#include "ops/matmul.hpp"
#include "vk/buffer.hpp"

namespace infini::vk {
class Device;
}

namespace infini::ops {

struct CandidateTiming {
  MatmulChoice choice;
  double seconds = 0;  // per call, the median of the repeats
  double nmse = 0;     // of its output against the reference kernel's
  bool correct = false;
};

// The kernels that take calls of many rows of F32 x `b` on this device, in their default tilings,
// Auto (today's rule) first.
std::vector<MatmulChoice> piece_candidates(const vk::Capabilities& caps, ElementType b);

// A family's other tilings that fit the device, and its default tiling split over k in 2, 4 and
// 8 slices where the product [rows][n] has fewer than kMatrixFillWorkgroups tiles and each slice
// keeps at least 256 values of k; none for kernels without tilings (registers, lanes).
std::vector<MatmulChoice> tiling_variants(const vk::Capabilities& caps, MatmulKernel family, uint32_t n, uint32_t k,
                                          uint32_t rows);

// A family is timed in its other tilings when its default takes at most this times the fastest
// correct candidate's time (on lavapipe the tiled kernels take 8-11x the lanes kernel's: none).
inline constexpr double kExploreRatio = 2.0;

// The largest NMSE against the tiled kernel a candidate may have: summation order for f32
// arithmetic, f16 rounding of the operands for the f16-arithmetic and matrix-unit kernels.
double candidate_tolerance(MatmulKernel kernel);

// The fastest correct candidate, the earliest of equal times; Auto when none is correct, or when
// the rule (Auto) is correct and the fastest beats it by less than kRuleMargin (3%): a difference
// the timings' noise could make, which would only make the choice flap between runs.
inline constexpr double kRuleMargin = 0.03;
MatmulChoice choose_kernel(std::span<const CandidateTiming> timings);

// Times every candidate (but the one Auto already runs) on C[rows][n] = A[rows][k] * W^T with W the weight's `n` rows of `k`
// values of type `b` in `weight`, and A random; `repeats` runs each (at least 1).
std::vector<CandidateTiming> time_piece_candidates(vk::Device& device, ElementType b, const vk::BufferRange& weight,
                                                   uint32_t n, uint32_t k, uint32_t rows, int repeats = 3);

}  // namespace infini::ops
