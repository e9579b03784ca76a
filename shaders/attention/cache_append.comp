#version 450
// Appends a piece's rows to the open segment's cache: dst rows open .. open + rows - 1 take src
// rows src_row0 .. src_row0 + rows - 1. A kernel rather than a buffer copy because `open`, the
// open segment's length when the piece runs, comes from a buffer: one recording serves every
// position. Each invocation writes one 32-bit word of dst; f16 rows of an odd number of values
// start mid-word, so the halves variant merges the word's other half unchanged.
//! variant words
//! variant halves -DHALVES
layout(local_size_x = 128) in;  // kFlatWorkgroup (ops/dispatch_grid.hpp): every device has 128

layout(push_constant) uniform Params {
  uint rows, row_values, src_row0;  // values: 32-bit (words) or 16-bit (halves)
} p;

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) buffer Dst { uint dst[]; };
layout(std430, binding = 2) readonly buffer Position { uint open; };

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint count = p.rows * p.row_values;
  const uint first = open * p.row_values;  // first value of dst written
#ifndef HALVES
  if (i >= count) return;
  dst[first + i] = src[p.src_row0 * p.row_values + i];
#else
  const uint w = first / 2 + i;
  if (count == 0 || w > (first + count - 1) / 2) return;
  uint word = dst[w];
  for (uint k = 0; k < 2; ++k) {
    const uint e = 2 * w + k;
    if (e < first || e >= first + count) continue;
    const uint s = p.src_row0 * p.row_values + (e - first);
    const uint value = (src[s / 2] >> (16 * (s & 1u))) & 0xffffu;
    word = (word & ~(0xffffu << (16 * k))) | (value << (16 * k));
  }
  dst[w] = word;
#endif
}
