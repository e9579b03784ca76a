#version 450
// The k best of `count` candidates, best first: larger value first, ties to the lower index (the
// order the host sampler ranks in), NaN above everything so the host sees it and refuses.
//
// A workgroup ranks one chunk of PER * WG candidates, held in registers: each round every
// invocation offers its best candidate not yet taken, a shared-memory tree picks the workgroup's
// best, its owner marks it taken, and it is written as the round's (value, index) pair. k rounds,
// no sort. The host runs passes over the pairs (the `pairs` variant) until one workgroup is left.
// An empty slot (index kNone) ranks below every candidate: chunks shorter than k pad with it.
//! variant values
//! variant pairs -DPAIRS
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;
const uint PER = 8;  // candidates per invocation
const uint kNone = 0xffffffffu;

layout(push_constant) uniform Params {
  uint count, k, in_offset;  // in_offset: first value read (values variant)
} p;

#ifdef PAIRS
layout(std430, binding = 0) readonly buffer In { uvec2 in_pairs[]; };  // (value bits, index)
#else
layout(std430, binding = 0) readonly buffer In { float in_values[]; };  // index = position
#endif
layout(std430, binding = 1) writeonly buffer Out { uvec2 out_pairs[]; };  // [workgroup][k]

shared float best_value[WG];
shared uint best_index[WG];

// Whether candidate a ranks above candidate b.
bool above(float av, uint ai, float bv, uint bi) {
  if (ai == kNone) return false;
  if (bi == kNone) return true;
  if (isnan(av) != isnan(bv)) return isnan(av);
  if (!isnan(av) && av != bv) return av > bv;
  return ai < bi;
}

void main() {
  const uint lane = gl_LocalInvocationID.x;
  const uint chunk = gl_WorkGroupID.x * PER * WG;
  float v[PER];
  uint id[PER];
  [[unroll]] for (uint j = 0; j < PER; ++j) {
    const uint e = chunk + j * WG + lane;
    v[j] = 0.0;
    id[j] = kNone;
    if (e < p.count) {
#ifdef PAIRS
      const uvec2 pair = in_pairs[e];
      v[j] = uintBitsToFloat(pair.x);
      id[j] = pair.y;
#else
      v[j] = in_values[p.in_offset + e];
      id[j] = e;
#endif
    }
  }

  for (uint r = 0; r < p.k; ++r) {
    float mv = 0.0;
    uint mi = kNone;
    [[unroll]] for (uint j = 0; j < PER; ++j) {
      if (above(v[j], id[j], mv, mi)) {
        mv = v[j];
        mi = id[j];
      }
    }
    best_value[lane] = mv;
    best_index[lane] = mi;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
      if (lane < s && above(best_value[lane + s], best_index[lane + s], best_value[lane], best_index[lane])) {
        best_value[lane] = best_value[lane + s];
        best_index[lane] = best_index[lane + s];
      }
      barrier();
    }
    const uint winner = best_index[0];
    if (lane == 0) out_pairs[gl_WorkGroupID.x * p.k + r] = uvec2(floatBitsToUint(best_value[0]), winner);
    [[unroll]] for (uint j = 0; j < PER; ++j)
      if (winner != kNone && id[j] == winner) id[j] = kNone;
    barrier();  // everyone has read slot 0 before the next round writes it
  }
}
