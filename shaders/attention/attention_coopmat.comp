#version 450
// Causal softmax attention inside one segment on matrix units, flash style (the same job as
// attention_segment.comp): a workgroup of 4 warps takes BR = 64 query rows of one query head, 16
// per warp, and walks the key tiles of BC = 32 keys up to its last row.
//
// Per key tile: S = Q K^T on fragments (Q, f16, stays in shared memory for the whole walk and is
// loaded into fragments per tile: held in an array of fragments it made lavapipe's compile of the
// emulated variant many times slower), the scores go through shared memory to an online softmax in
// f32 (two invocations per row), P is rounded to f16 and P V is computed on fragments, DVC = 32 value
// columns at a time, into fresh accumulators that are added to the running output in registers
// (rescaling by exp(m_old - m_new) is per row, which fragments cannot do). The row sums add the
// f16-rounded P that the product uses, so normalisation matches it. Q, K and V are staged 8 values
// per load, packed as f16 pairs (four 32-bit shared stores per 8 values).
//
// Queries are rows 0..q_rows-1 of Q (already rotated, f32) at segment positions q_pos0 + row;
// keys and values are the segment cache, positions 0..q_pos0 + q_rows - 1. Query head h reads
// KV head h / (Hq / Hkv). Output (A_dot) is f32 [q_rows][Hq][Dv]. D and Dv are specialization
// constants, multiples of 16 (the host checks, and that shared memory fits). A sliding context
// (SINKS, WINDOW: common/sliding_window.glsl) walks the tiles of its sinks first with QS staged as
// the workgroup's queries, then the window with Q.
//
// MATRIX_UNITS takes the hardware fragments (cooperative matrices); without it they are
// emulated (common/fragments.glsl), for tests on devices without matrix units.
//! variant v32 -DMATRIX_UNITS
//! variant v16 -DMATRIX_UNITS -DV_F16
//! variant v32_emulated
//! variant v16_emulated -DV_F16
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#if defined(MATRIX_UNITS) && defined(MATRIX_UNITS_KHR)
#extension GL_KHR_cooperative_matrix : require
#elif defined(MATRIX_UNITS)
#extension GL_NV_cooperative_matrix : require
#endif
#ifdef MATRIX_UNITS
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#pragma use_vulkan_memory_model
#endif
#include "../common/activations.glsl"
#include "../common/storage.glsl"
#include "../common/fragments.glsl"

layout(local_size_x_id = 0) in;  // WARPS * 32
layout(constant_id = 1) const uint D = 64;   // head dim
layout(constant_id = 2) const uint DV = 64;  // value dim
layout(constant_id = 3) const uint SINKS = 0;
layout(constant_id = 4) const uint WINDOW = 0;
#include "../common/sliding_window.glsl"

const uint WARPS = 4u;
const uint BR = WARPS * 16u;     // query rows per workgroup
const uint BC = 32u;             // keys per tile
const uint DVC = 32u;            // value columns per P V pass
const uint WG = WARPS * FRAG_LANES;
const uint HALF = BC / 2u;       // scores (and output columns per pass) per invocation: 2 per row
const uint LDQ = D + 8u;         // f16 row strides: multiples of 8 (16-byte rows), off the banks' period
const uint LDV = DVC + 8u;
const uint LDP = BC + 8u;
const uint LDS = BC + 4u;        // f32 scores and P V staging: a multiple of 4

layout(push_constant) uniform Params {
  uint q_rows;
  uint heads_q, heads_kv, head_dim, value_dim;
  float scale;
} p;

// Q, K and V are read 8 values at a time as packed f16 (element i a multiple of 8: D and Dv are
// multiples of 16, and so are the row strides).
layout(std430, binding = 0) readonly buffer QBuffer { vec4 q_data[]; };
layout(std430, binding = 1) readonly buffer KBuffer { vec4 k_data[]; };
layout(std430, binding = 5) readonly buffer QSBuffer { vec4 qs_data[]; };  // Q rotated for the sinks
uvec4 load8_q(uint i) { return pack_half8(q_data[i >> 2], q_data[(i >> 2) + 1u]); }
uvec4 load8_qs(uint i) { return pack_half8(qs_data[i >> 2], qs_data[(i >> 2) + 1u]); }
uvec4 load8_k(uint i) { return pack_half8(k_data[i >> 2], k_data[(i >> 2) + 1u]); }
#ifdef V_F16
layout(std430, binding = 2) readonly buffer VBuffer { uvec4 v_data[]; };
uvec4 load8_v(uint i) { return v_data[i >> 3]; }
#else
layout(std430, binding = 2) readonly buffer VBuffer { vec4 v_data[]; };
uvec4 load8_v(uint i) { return pack_half8(v_data[i >> 2], v_data[(i >> 2) + 1u]); }
#endif
layout(std430, binding = 3) writeonly buffer Out { float out_data[]; };
// The open segment's length when the piece runs: from a buffer, so one recording serves every position.
layout(std430, binding = 4) readonly buffer Position { uint q_pos0; };

// f16 tiles, packed in pairs (common/fragments.glsl): 8 values are staged with 4 stores.
shared uint q_tile[BR * LDQ / 2u];
shared uint k_tile[BC * LDQ / 2u];
shared uint v_tile[BC * LDV / 2u];
shared uint p_tile[BR * LDP / 2u];
shared float s_tile[BR * LDS];  // scores, then each pass's P V
shared float row_max[2u * BR];
shared float row_sum[2u * BR];

// Whether a row at `pos` scores `key` in this pass (segments: causal; common/sliding_window.glsl).
bool attends(bool sinks, uint key, uint pos) { return sinks ? attends_sink(key, pos) : attends_window(key, pos); }

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint warp = WARP_ID;
  const uint r = tid / 2u, half_ = tid % 2u;  // the row this invocation keeps, and its half of the columns
  const uint h = gl_WorkGroupID.y;
  const uint kvh = h / (p.heads_q / p.heads_kv);
  const uint q0 = gl_WorkGroupID.x * BR;
  const uint last_key = q_pos0 + min(q0 + BR, p.q_rows) - 1u;  // the last row's position
  const uint q_pos = min(q_pos0 + q0 + r, last_key);           // rows past q_rows act as the last
  const uint q_stride = p.heads_q * D, k_stride = p.heads_kv * D, v_stride = p.heads_kv * DV;

  float o[DV / 2u];  // columns c * DVC + half_ * HALF + j of this row, for pass c
  [[unroll]] for (uint i = 0u; i < DV / 2u; ++i) o[i] = 0.0;
  float m = kSoftmaxInit, l = 0.0;

  // Pass 0: the sinks with QS; pass 1: the other keys with Q (the only pass without sinks).
  for (uint pass = SINKS > 0u ? 0u : 1u; pass < 2u; ++pass) {
    const bool sinks = pass == 0u;
    const uint pass_last = sinks ? min(SINKS - 1u, last_key) : last_key;
    barrier();  // the sink pass's last reads of q_tile are done
    for (uint e = tid; e < BR * D / 8u; e += WG) {
      const uint rr = e / (D / 8u), d = (e % (D / 8u)) * 8u, row = q0 + rr;
      uvec4 word = uvec4(0u);
      if (row < p.q_rows) word = sinks ? load8_qs(row * q_stride + h * D + d) : load8_q(row * q_stride + h * D + d);
      PACKED_STORE8(q_tile, rr * LDQ + d, word);
    }
    barrier();

    for (uint k0 = sinks ? 0u : window_begin(q_pos0 + q0); k0 <= pass_last; k0 += BC) {
      for (uint e = tid; e < BC * D / 8u; e += WG) {
        const uint j = e / (D / 8u), d = (e % (D / 8u)) * 8u, key = k0 + j;
        uvec4 word = uvec4(0u);
        if (key <= pass_last) word = load8_k(key * k_stride + kvh * D + d);
        PACKED_STORE8(k_tile, j * LDQ + d, word);
      }
      barrier();
      // S = Q K^T for the warp's 16 rows: K^T is the tile read by columns.
      if (warp < WARPS) {
        FRAG_C s_frag[BC / 16u];
        FRAG_UNROLL for (uint j = 0u; j < BC / 16u; ++j) FRAG_ZERO(s_frag[j]);
        FRAG_UNROLL for (uint i = 0u; i < D / 16u; ++i) {
          FRAG_A q_frag;
          FRAG_LOAD_PACKED_A(q_frag, q_tile, warp * 16u * LDQ + i * 16u, LDQ, false);
          FRAG_UNROLL for (uint j = 0u; j < BC / 16u; ++j) {
            FRAG_B k_frag;
            FRAG_LOAD_PACKED_B(k_frag, k_tile, j * 16u * LDQ + i * 16u, LDQ, true);
            FRAG_MUL_ADD_PACKED(s_frag[j], q_frag, q_tile, k_frag, k_tile);
          }
        }
        FRAG_UNROLL for (uint j = 0u; j < BC / 16u; ++j) FRAG_STORE(s_frag[j], s_tile, warp * 16u * LDS + j * 16u, LDS);
      }
      barrier();

      // Online softmax: scale, causal mask, new running max, rescale what was accumulated.
      float s[HALF];
      float mx = kSoftmaxInit;
      [[unroll]] for (uint c = 0u; c < HALF; ++c) {
        const uint j = half_ * HALF + c;
        s[c] = attends(sinks, k0 + j, q_pos) ? s_tile[r * LDS + j] * p.scale : kSoftmaxInit;
        mx = max(mx, s[c]);
      }
      row_max[half_ * BR + r] = mx;
      barrier();
      const float m_new = max(m, max(row_max[r], row_max[BR + r]));
      const float alpha = exp(m - m_new);
      float sum = 0.0;
      [[unroll]] for (uint c = 0u; c < HALF; c += 2u) {
        const uint j = half_ * HALF + c;
        const vec2 pv = vec2(attends(sinks, k0 + j, q_pos) ? exp(s[c] - m_new) : 0.0,
                             attends(sinks, k0 + j + 1u, q_pos) ? exp(s[c + 1u] - m_new) : 0.0);
        const uint packed = packHalf2x16(pv);
        p_tile[(r * LDP + j) >> 1u] = packed;
        const vec2 rounded = unpackHalf2x16(packed);
        sum += rounded.x + rounded.y;
      }
      row_sum[half_ * BR + r] = sum;
      barrier();
      l = l * alpha + row_sum[r] + row_sum[BR + r];
      m = m_new;
      [[unroll]] for (uint i = 0u; i < DV / 2u; ++i) o[i] *= alpha;

      // O += P V, DVC value columns per pass.
      FRAG_UNROLL for (uint c0 = 0u; c0 < DV; c0 += DVC) {
        for (uint e = tid; e < BC * DVC / 8u; e += WG) {
          const uint j = e / (DVC / 8u), c = (e % (DVC / 8u)) * 8u, key = k0 + j;
          uvec4 word = uvec4(0u);
          if (key <= pass_last) word = load8_v(key * v_stride + kvh * DV + c0 + c);
          PACKED_STORE8(v_tile, j * LDV + c, word);
        }
        barrier();
        if (warp < WARPS) {
          FRAG_C pv_frag[DVC / 16u];
          FRAG_UNROLL for (uint j = 0u; j < DVC / 16u; ++j) FRAG_ZERO(pv_frag[j]);
          FRAG_UNROLL for (uint i = 0u; i < BC / 16u; ++i) {
            FRAG_A p_frag;
            FRAG_LOAD_PACKED_A(p_frag, p_tile, warp * 16u * LDP + i * 16u, LDP, false);
            FRAG_UNROLL for (uint j = 0u; j < DVC / 16u; ++j) {
              FRAG_B v_frag;
              FRAG_LOAD_PACKED_B(v_frag, v_tile, i * 16u * LDV + j * 16u, LDV, false);
              FRAG_MUL_ADD_PACKED(pv_frag[j], p_frag, p_tile, v_frag, v_tile);
            }
          }
          FRAG_UNROLL for (uint j = 0u; j < DVC / 16u; ++j) FRAG_STORE(pv_frag[j], s_tile, warp * 16u * LDS + j * 16u, LDS);
        }
        barrier();
        [[unroll]] for (uint c = 0u; c < HALF; ++c) o[(c0 / DVC) * HALF + c] += s_tile[r * LDS + half_ * HALF + c];
        barrier();
      }
    }
  }

  if (q0 + r >= p.q_rows) return;
  const float inv_l = 1.0 / l;
  const uint base = (q0 + r) * p.heads_q * DV + h * DV;
  FRAG_UNROLL for (uint c0 = 0u; c0 < DV; c0 += DVC)
    [[unroll]] for (uint c = 0u; c < HALF; ++c) out_data[base + c0 + half_ * HALF + c] = o[(c0 / DVC) * HALF + c] * inv_l;
}
