#version 450
// Element-wise steps of a transformer block, fp32:
//   add:      a[i] += b[i]                    (residual connection)
//   add_rows: a[i] += b[i % width]            (a projection's bias on every row)
//   swiglu:   a[i] = silu(a[i]) * b[i]        (a = gate projection, b = up projection)
//! variant add -DOP_ADD
//! variant add_rows -DOP_ADD_ROWS
//! variant swiglu -DOP_SWIGLU
layout(local_size_x = 128) in;  // kFlatWorkgroup (ops/dispatch_grid.hpp): every device has 128
layout(push_constant) uniform Params { uint count, width; } p;

layout(std430, binding = 0) buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.count) return;
#if defined(OP_ADD)
  a[i] += b[i];
#elif defined(OP_ADD_ROWS)
  a[i] += b[i % p.width];
#else
  const float g = a[i];
  a[i] = g / (1.0 + exp(-g)) * b[i];
#endif
}
