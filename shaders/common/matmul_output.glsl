// C, the output of every matmul kernel (binding 2, f32), and its store: C = A B^T, or C += A B^T
// when the call accumulates (a residual added in the same pass instead of a separate dispatch).
// Include after the kernel's push constants `p`, which end with `uint accumulate`.
#ifndef INFINI_MATMUL_OUTPUT_GLSL
#define INFINI_MATMUL_OUTPUT_GLSL

layout(std430, binding = 2) buffer CBuffer { float c_data[]; };  // read only when accumulating

void store_c(uint i, float value) { c_data[i] = p.accumulate != 0u ? c_data[i] + value : value; }

#endif
