#pragma once
// A quick proof that a device computes what infini expects, for a program to run once on a device
// it has not seen before (a phone's driver, a new GPU): the matrix kernels on awkward shapes and
// every storage pair, with integer-valued inputs whose exact products are known, so any wrong
// index, lost row or broken conversion shows as a nonzero error.
#include <string>
#include <vector>

#include "infini/context.hpp"

namespace infini {

struct SelfcheckResult {
  std::string name;       // "matmul 17x33x65 A f32 B f16"
  double max_error = 0;   // largest |device - exact| over the outputs
  bool passed = false;    // max_error == 0
};

// Runs on the context's first device. Throws infini::Error only when the device cannot run at all.
std::vector<SelfcheckResult> selfcheck(Context& context);

}  // namespace infini
