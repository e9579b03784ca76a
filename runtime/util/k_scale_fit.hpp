#pragma once
// The scale fits of ggml's K-format reference quantizers (no importance matrix), shared by the
// encoders of Q2_K (low_bit_k_blocks.cpp), Q4_K and Q5_K (block_codec.cpp): each sub-block's
// scale (and min) is the best of a few candidates around the one its extremes give, by weighted
// error on the rounded values; the sub-block scales are then quantized against the super-block's
// largest and the values rounded again against the quantized scales.
#include <cmath>

namespace infini {

// Round to nearest, ties to even (ggml's nearest_int, for the magnitudes quantizers meet).
inline int nearest_int(float v) { return int(std::lrintf(v)); }

// The scale and the min (returned as a value >= 0 to subtract) of one sub-block of n <= 32 values
// on levels 0..top, trying iscale = (top + rmin + rdelta * step) / (max - min) for each step of
// 0..steps; the error is the weighted square (absolute: the weighted magnitude) of each value's
// difference; `levels_out` gets the chosen candidate's levels.
float fit_scale_min(const float* x, const float* w, int n, int top, float rmin, float rdelta, int steps, bool absolute,
                    float& min_out, int* levels_out);

}  // namespace infini
