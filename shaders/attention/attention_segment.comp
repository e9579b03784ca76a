#version 450
// Causal softmax attention inside one segment, flash style: a workgroup takes BR query rows of
// one query head, walks the key tiles up to its last row with an online softmax, and keeps its
// output rows in registers. No score matrix ever reaches device memory, and no subgroup
// operations are used, so this runs on every Vulkan 1.2 device.
//
// Queries are rows 0..q_rows-1 of Q (already rotated, f32) at segment positions q_pos0 + row;
// keys and values are the segment cache, positions 0..q_pos0 + q_rows - 1. Query head h reads
// KV head h / (Hq / Hkv). Output (A_dot) is f32 [q_rows][Hq][Dv]. A sliding context (SINKS,
// WINDOW: common/sliding_window.glsl) walks a tile of its sinks first with QS, then the window.
//! variant v32
//! variant v16 -DV_F16
#extension GL_GOOGLE_include_directive : require
#include "../common/activations.glsl"
#include "../common/storage.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BR = 32;     // query rows per workgroup
layout(constant_id = 2) const uint BC = 32;     // keys per tile
layout(constant_id = 3) const uint DK = 32;     // head-dim chunk of the score product
layout(constant_id = 4) const uint DVC = 64;    // value-dim chunk of the output product
layout(constant_id = 5) const uint OCOLS = 16;  // output columns per invocation: ceil(Dv / CG)
layout(constant_id = 6) const uint SINKS = 0;
layout(constant_id = 7) const uint WINDOW = 0;
#include "../common/sliding_window.glsl"

layout(push_constant) uniform Params {
  uint q_rows;
  uint heads_q, heads_kv, head_dim, value_dim;
  float scale;
} p;

DECLARE_F32_INPUT(0, Q)
DECLARE_F32_INPUT(1, K)
#ifdef V_F16
DECLARE_F16_INPUT(2, V)
#else
DECLARE_F32_INPUT(2, V)
#endif
layout(std430, binding = 3) writeonly buffer Out { float out_data[]; };
// The position of query row 0 in the segment (the open segment's length when the piece runs)
// comes from a buffer, not a push constant: one recording serves every position.
layout(std430, binding = 4) readonly buffer Position { uint q_pos0; };
DECLARE_F32_INPUT(5, QS)  // Q rotated for the sinks

const uint WG = gl_WorkGroupSize.x;
const uint CG = WG / BR;       // invocations per query row
const uint SPT = BC / CG;      // scores per invocation per key tile

shared float q_tile[BR * (DK + 1)];  // +1: no bank conflicts on column walks
shared float k_tile[BC * (DK + 1)];
shared float p_tile[BR * (BC + 1)];
shared float v_tile[BC * DVC];
shared float row_max[CG * BR];
shared float row_sum[CG * BR];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint r = tid % BR, cg = tid / BR;
  const uint h = gl_WorkGroupID.y;
  const uint kvh = h / (p.heads_q / p.heads_kv);
  const uint q0 = gl_WorkGroupID.x * BR;
  const uint q_pos = q_pos0 + q0 + r;                                // this row's position
  const uint last_key = q_pos0 + min(q0 + BR, p.q_rows) - 1;         // the tile's last row position
  const uint q_stride = p.heads_q * p.head_dim;
  const uint k_stride = p.heads_kv * p.head_dim;
  const uint v_stride = p.heads_kv * p.value_dim;

  float o[OCOLS];
  for (uint i = 0; i < OCOLS; ++i) o[i] = 0.0;
  float m = kSoftmaxInit, l = 0.0;

  // Pass 0: the sinks with QS; pass 1: the other keys with Q (the only pass without sinks).
  for (uint pass = SINKS > 0u ? 0u : 1u; pass < 2u; ++pass) {
    const bool sinks = pass == 0u;
    const uint pass_last = sinks ? min(SINKS - 1u, last_key) : last_key;
    for (uint k0 = sinks ? 0u : window_begin(q_pos0 + q0); k0 <= pass_last; k0 += BC) {
      // S = Q K^T for this key tile, accumulated over head-dim chunks.
      float s[SPT];
      for (uint i = 0; i < SPT; ++i) s[i] = 0.0;
      for (uint d0 = 0; d0 < p.head_dim; d0 += DK) {
        for (uint e = tid; e < BR * DK; e += WG) {
          const uint rr = e / DK, dd = e % DK, row = q0 + rr, d = d0 + dd;
          const uint qi = row * q_stride + h * p.head_dim + d;
          q_tile[rr * (DK + 1) + dd] = (row < p.q_rows && d < p.head_dim) ? (sinks ? load_QS(qi) : load_Q(qi)) : 0.0;
        }
        for (uint e = tid; e < BC * DK; e += WG) {
          const uint j = e / DK, dd = e % DK, key = k0 + j, d = d0 + dd;
          k_tile[j * (DK + 1) + dd] = (key <= pass_last && d < p.head_dim) ? load_K(key * k_stride + kvh * p.head_dim + d) : 0.0;
        }
        barrier();
        for (uint dd = 0; dd < DK; ++dd) {
          const float qv = q_tile[r * (DK + 1) + dd];
          for (uint i = 0; i < SPT; ++i) s[i] += qv * k_tile[(cg + CG * i) * (DK + 1) + dd];
        }
        barrier();
      }

      // Online softmax: scale, causal mask, new running max, rescale what was accumulated.
      float mx = kSoftmaxInit;
      for (uint i = 0; i < SPT; ++i) {
        const uint key = k0 + cg + CG * i;
        const bool valid = sinks ? attends_sink(key, q_pos) : attends_window(key, q_pos);
        s[i] = valid ? s[i] * p.scale : kSoftmaxInit;
        mx = max(mx, s[i]);
      }
      row_max[cg * BR + r] = mx;
      barrier();
      for (uint c = 0; c < CG; ++c) mx = max(mx, row_max[c * BR + r]);
      const float m_new = max(m, mx);
      const float alpha = exp(m - m_new);
      float sum = 0.0;
      for (uint i = 0; i < SPT; ++i) {
        const uint j = cg + CG * i;
        const bool valid = sinks ? attends_sink(k0 + j, q_pos) : attends_window(k0 + j, q_pos);
        const float pv = valid ? exp(s[i] - m_new) : 0.0;
        p_tile[r * (BC + 1) + j] = pv;
        sum += pv;
      }
      row_sum[cg * BR + r] = sum;
      barrier();
      sum = 0.0;
      for (uint c = 0; c < CG; ++c) sum += row_sum[c * BR + r];
      l = l * alpha + sum;
      m = m_new;
      for (uint i = 0; i < OCOLS; ++i) o[i] *= alpha;

      // O += P V, over value-dim chunks. Invocation column i is value dim cg + CG * i.
      for (uint dv0 = 0; dv0 < p.value_dim; dv0 += DVC) {
        for (uint e = tid; e < BC * DVC; e += WG) {
          const uint j = e / DVC, c = e % DVC, key = k0 + j, dv = dv0 + c;
          v_tile[e] = (key <= pass_last && dv < p.value_dim) ? load_V(key * v_stride + kvh * p.value_dim + dv) : 0.0;
        }
        barrier();
        for (uint i = 0; i < OCOLS; ++i) {
          const uint col = cg + CG * i;
          if (col < dv0 || col >= dv0 + DVC) continue;
          float acc = 0.0;
          for (uint j = 0; j < BC; ++j) acc += p_tile[r * (BC + 1) + j] * v_tile[j * DVC + (col - dv0)];
          o[i] += acc;
        }
        barrier();
      }
    }
  }

  if (q0 + r >= p.q_rows) return;
  const float inv_l = 1.0 / l;
  const uint base = (q0 + r) * p.heads_q * p.value_dim + h * p.value_dim;
  for (uint i = 0; i < OCOLS; ++i) {
    const uint col = cg + CG * i;
    if (col < p.value_dim) out_data[base + col] = o[i] * inv_l;
  }
}
