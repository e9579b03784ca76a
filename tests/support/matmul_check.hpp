#pragma once
// Runs one matmul kernel on random operands and compares it with the float64 reference: the
// output sits between guard regions, with gaps between its rows, that must come back untouched.
#include <cstdint>

#include "infini/element_type.hpp"
#include "ops/matmul.hpp"

namespace infini::test {

struct MatmulResult {
  double nmse;
  size_t guard_violations;
  bool split_ran = false;  // a split-K call wrote partial products into its scratch
};

struct MatmulLayout {
  uint32_t guard = 67;   // elements of C before and after the output
  uint32_t row_gap = 5;  // ldc = n + row_gap
  // The reference rounds both operands to f16 first, as kernels on f16 arithmetic do, so that
  // only their sums' rounding is left to compare.
  bool f16_operands = false;
  // C starts with random values and the call adds to them (MatmulArgs::accumulate); the reference
  // adds them too.
  bool accumulate = false;
  // MatmulArgs' fused steps (the vector kernel): A's rows RMS-normalised with random weights and
  // this epsilon (0: no norm); C = silu(A B^T) * (A U^T) with a random U in B's type; a random
  // bias read from element bias_offset on.
  float norm_eps = 0;
  bool glu = false, bias = false;
  uint32_t bias_offset = 3;
  // Split-K (ops::MatmulChoice::split_k) into this many slices, with room for their partials.
  uint32_t split_k = 1;
};

MatmulResult run_matmul(uint32_t m, uint32_t n, uint32_t k, ElementType ta, ElementType tb, ops::MatmulTiles tiles,
                        uint32_t seed, ops::MatmulKernel kernel = ops::MatmulKernel::Tiled, const MatmulLayout& layout = {},
                        ops::MatrixTiles matrix_tiles = {}, ops::VectorTiles vector_tiles = {});

}  // namespace infini::test
