#version 450
// Split-K's second pass (ops/matmul.hpp): C = sum over slices z of P[z], or C += it when the call
// accumulates, with P the slices' partial products, each [M][N] packed, one after the other. The
// slices are added in order, so a split call gives the same C every time.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;
layout(push_constant) uniform Params {
  uint M, N, ldc, c_off, accumulate, slices;
} p;

layout(std430, binding = 0) readonly buffer PBuffer { float partial[]; };
layout(std430, binding = 1) buffer CBuffer { float c_data[]; };  // read only when accumulating

void main() {
  const uint col = gl_GlobalInvocationID.x, row = gl_WorkGroupID.y;
  if (col >= p.N || row >= p.M) return;
  const uint at = p.c_off + row * p.ldc + col;
  float sum = p.accumulate != 0u ? c_data[at] : 0.0;
  for (uint z = 0u; z < p.slices; ++z) sum += partial[(z * p.M + row) * p.N + col];
  c_data[at] = sum;
}
