#version 450
// Element-wise steps of a transformer block, fp32:
//   add:    a[i] += b[i]                      (residual connection)
//   swiglu: a[i] = silu(a[i]) * b[i]          (a = gate projection, b = up projection)
//! variant add -DOP_ADD
//! variant swiglu -DOP_SWIGLU
layout(local_size_x = 256) in;
layout(push_constant) uniform Params { uint count; } p;

layout(std430, binding = 0) buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.count) return;
#ifdef OP_ADD
  a[i] += b[i];
#else
  const float g = a[i];
  a[i] = g / (1.0 + exp(-g)) * b[i];
#endif
}
