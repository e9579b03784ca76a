#pragma once
// The cos/sin table the RoPE kernel reads: for positions 0..positions-1 and each rotary pair i,
// (cos(pos * theta_i), sin(pos * theta_i)) times the attention factor, computed in double and
// rounded once to float. Kernels never evaluate sin/cos themselves (see shaders/attention/rope.comp).
#include <cstdint>
#include <vector>

#include "infini/rope_config.hpp"

namespace infini::ops {

std::vector<float> rope_cos_sin_table(const rope::RopeFrequencies& freqs, int64_t positions);

}  // namespace infini::ops
