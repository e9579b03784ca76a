#version 450
// Writes one segment into the compressive memory:
//   M[kv] += sigma(K)^T W     (W = V for the linear rule, V - retrieval for the delta rule)
//   z[kv] += sum over tokens of sigma(K)
// A workgroup owns a DT x 64 block of M (one KV head) and walks the segment's tokens in chunks
// held in shared memory; the workgroups of the first value block also accumulate z.
//! variant k32_w32
//! variant k16_w32 -DK_F16
//! variant k16_w16 -DK_F16 -DW_F16
#extension GL_GOOGLE_include_directive : require
#include "../common/activations.glsl"
#include "../common/storage.glsl"

layout(local_size_x = 64) in;
const uint DT = 16;  // head-dim rows per workgroup
const uint TC = 32;  // tokens per chunk

layout(push_constant) uniform Params {
  uint tokens, heads_kv, head_dim, value_dim;
} p;

#ifdef K_F16
DECLARE_F16_INPUT(0, K)
#else
DECLARE_F32_INPUT(0, K)
#endif
#ifdef W_F16
DECLARE_F16_INPUT(1, W)
#else
DECLARE_F32_INPUT(1, W)
#endif
layout(std430, binding = 2) buffer MBuffer { float M[]; };
layout(std430, binding = 3) buffer ZBuffer { float z[]; };

shared float sk[TC * DT];
shared float sw[TC * 64];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint dv = gl_WorkGroupID.x * 64 + tid;
  const uint d0 = gl_WorkGroupID.y * DT;
  const uint kvh = gl_WorkGroupID.z;
  const bool z_block = gl_WorkGroupID.x == 0u;

  float acc[DT];
  for (uint i = 0; i < DT; ++i) acc[i] = 0.0;
  float z_acc = 0.0;

  for (uint t0 = 0; t0 < p.tokens; t0 += TC) {
    for (uint e = tid; e < TC * DT; e += 64) {
      const uint tt = e / DT, i = e % DT, tok = t0 + tt, d = d0 + i;
      sk[e] = (tok < p.tokens && d < p.head_dim)
                  ? elu_plus_one(load_K((tok * p.heads_kv + kvh) * p.head_dim + d)) : 0.0;
    }
    for (uint e = tid; e < TC * 64; e += 64) {
      const uint tt = e / 64, c = e % 64, tok = t0 + tt, col = gl_WorkGroupID.x * 64 + c;
      sw[e] = (tok < p.tokens && col < p.value_dim) ? load_W((tok * p.heads_kv + kvh) * p.value_dim + col) : 0.0;
    }
    barrier();
    for (uint tt = 0; tt < TC; ++tt) {
      const float wv = sw[tt * 64 + tid];
      for (uint i = 0; i < DT; ++i) acc[i] += sk[tt * DT + i] * wv;
    }
    if (z_block && tid < DT)
      for (uint tt = 0; tt < TC; ++tt) z_acc += sk[tt * DT + tid];
    barrier();
  }

  if (dv < p.value_dim)
    for (uint i = 0; i < DT; ++i)
      if (d0 + i < p.head_dim) M[(kvh * p.head_dim + d0 + i) * p.value_dim + dv] += acc[i];
  if (z_block && tid < DT && d0 + tid < p.head_dim) z[kvh * p.head_dim + d0 + tid] += z_acc;
}
