#version 450
// Read-bandwidth probe: the invocations of the grid stream a buffer once and each writes the sum
// of what it read, so no read can be optimised away (and a test can check that every word was
// read exactly once). Two access patterns, for the two kinds of device:
//   interleaved (GPUs): invocation i reads words i, i + G, i + 2G, ... (G = grid size), so the
//     invocations of a subgroup read neighbouring words at every step;
//   contiguous (CPU drivers, which run an invocation's lanes as SIMD lanes of one thread): each
//     invocation reads one run of consecutive words, as a CPU thread streams memory.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool CONTIGUOUS = false;

layout(push_constant) uniform Params { uint words; } p;  // 16-byte words in the input
layout(std430, binding = 0) readonly buffer In { vec4 data[]; };
layout(std430, binding = 1) writeonly buffer Out { float sums[]; };

void main() {
  const uint grid = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint id = gl_GlobalInvocationID.x;
  vec4 acc = vec4(0.0);
  if (CONTIGUOUS) {
    const uint run = (p.words + grid - 1) / grid;
    const uint end = min(p.words, (id + 1) * run);
    for (uint i = id * run; i < end; ++i) acc += data[i];
  } else {
    for (uint i = id; i < p.words; i += grid) acc += data[i];
  }
  sums[gl_GlobalInvocationID.x] = (acc.x + acc.y) + (acc.z + acc.w);
}
