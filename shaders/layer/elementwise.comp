#version 450
// Element-wise steps of a transformer block, fp32:
//   add:      a[i] += b[i]                    (residual connection)
//   add_rows: a[i] += b[i % width]            (a projection's bias on every row)
//   swiglu:   a[i] = silu(a[i]) * b[i]        (a = gate projection, b = up projection)
//   geglu:    a[i] = gelu(a[i]) * b[i]        (GELU's tanh approximation, as ggml_gelu)
//! variant add -DOP_ADD
//! variant add_rows -DOP_ADD_ROWS
//! variant swiglu -DOP_SWIGLU
//! variant geglu -DOP_GEGLU
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
#elif defined(OP_GEGLU)
  // 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))), the tanh written as 1 - 2 / (exp(2u) + 1) so
  // that a large |u| saturates instead of overflowing.
  const float g = a[i];
  const float u = 0.7978845608 * g * (1.0 + 0.044715 * g * g);
  a[i] = 0.5 * g * (2.0 - 2.0 / (exp(2.0 * u) + 1.0)) * b[i];
#else
  const float g = a[i];
  a[i] = g / (1.0 + exp(-g)) * b[i];
#endif
}
