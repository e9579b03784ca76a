// C, the output of every matmul kernel (binding 2, f32), and its store: C = A B^T, or C += A B^T
// when the call accumulates (a residual added in the same pass instead of a separate dispatch).
// Include after the kernel's push constants `p`, which end with `uint accumulate`.
#ifndef INFINI_MATMUL_OUTPUT_GLSL
#define INFINI_MATMUL_OUTPUT_GLSL

layout(std430, binding = 2) buffer CBuffer { float c_data[]; };  // read only when accumulating

void store_c(uint i, float value) { c_data[i] = p.accumulate != 0u ? c_data[i] + value : value; }

// Split-K (ops/matmul.hpp): a call dispatched with Z workgroups along z sums slice z of k, a run of
// whole steps of `step` values, into C's rows from z * M on (the slices' partial products one
// after the other; matmul_split_sum.comp adds them up). One slice (Z = 1) is all of k into C.
uint k_slice_length(uint step) {
  const uint slices = gl_NumWorkGroups.z;
  return (p.K + step * slices - 1u) / (step * slices) * step;
}
uint k_slice_begin(uint step) { return gl_WorkGroupID.z * k_slice_length(step); }
uint k_slice_end(uint step) { return min(p.K, k_slice_begin(step) + k_slice_length(step)); }
uint c_slice_offset() { return p.c_off + gl_WorkGroupID.z * p.M * p.ldc; }

#endif
