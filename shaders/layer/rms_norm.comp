#version 450
// RMSNorm of rows: y[r][:] = x[r][:] / sqrt(mean(x[r][:]^2) + eps) * w[:], fp32 throughout.
// One workgroup per row; the sum of squares is reduced in shared memory (no subgroup ops).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;
layout(push_constant) uniform Params { uint rows, dim; float eps; } p;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

shared float partial[gl_WorkGroupSize.x];

void main() {
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;  // uniform per workgroup, so the barriers below stay uniform
  const uint tid = gl_LocalInvocationID.x, n = gl_WorkGroupSize.x;
  const uint base = row * p.dim;
  float s = 0.0;
  for (uint c = tid; c < p.dim; c += n) s = fma(x[base + c], x[base + c], s);
  partial[tid] = s;
  barrier();
  for (uint stride = n / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    barrier();
  }
  const float inv = inversesqrt(partial[0] / float(p.dim) + p.eps);
  for (uint c = tid; c < p.dim; c += n) y[base + c] = x[base + c] * inv * w[c];
}
